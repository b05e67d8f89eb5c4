/**
 * The daemon's `Verifications`: records and signing keys in the store the
 * daemon runs on (`deployment/stores.ts`: the data directory's journal and
 * `signing-keys.json`, or Redis), messages over SMTP when
 * `verification.mail.smtp` is set (password from
 * `CAMPUSGATE_SMTP_PASSWORD`), else written to the outbox directory
 * (`<data>/outbox` by default) with a log line per message; the
 * verification secret and the webhook secret from the environment, else
 * generated once into the data directory. Mail settings are read at start.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Snapshot } from "../app/Snapshot.ts"
import type { Validation } from "../app/Validation.ts"
import { directoriesOf } from "../config/loadConfig.ts"
import type { Stores } from "../deployment/stores.ts"
import { Log } from "../observability/Log.ts"
import type { UsageStatistics } from "../stats/UsageStatistics.ts"
import { MailTransport, outboxDirectory, smtpOptions } from "../verification/MailTransport.ts"
import type { VerificationStoreError } from "../verification/VerificationStore.ts"
import { Verifications } from "../verification/Verifications.ts"
import { Metrics } from "./metrics.ts"

/** `Verifications` for the daemon; `publicUrl` answers the address links start with. */
export const verificationsLayer = (
  stores: Pick<Stores, "verifications" | "signingKeys" | "verificationSecret" | "webhookSecret">,
  publicUrl: () => string
): Layer.Layer<Verifications, VerificationStoreError, Snapshot | Validation | UsageStatistics | Log | Metrics> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const snapshot = yield* Snapshot
      const log = yield* Log
      const { settings, secrets } = snapshot.current().config
      const { configDir, dataDir } = directoriesOf(snapshot.current().config)
      const mail = settings.verification.mail
      const transport =
        mail.smtp === undefined
          ? MailTransport.makeOutbox(outboxDirectory(configDir, dataDir, mail.outboxDir), (file) =>
              log.write("info", "verification message written to the outbox (no SMTP server configured)", { file })
            )
          : MailTransport.makeSmtp(smtpOptions(mail.smtp, secrets.smtpPassword, snapshot.current().config.smtpCa))
      yield* Effect.addFinalizer(() => Effect.promise(() => transport.close?.() ?? Promise.resolve()))
      return Verifications.layer({
        secret: stores.verificationSecret,
        webhookSecret: stores.webhookSecret,
        webhookDelivery: { observe: (yield* Metrics).callbacks("verification") },
        publicUrl
      }).pipe(Layer.provide(Layer.mergeAll(stores.verifications, stores.signingKeys, MailTransport.layer(transport))))
    })
  )
