/**
 * The library's `verifications`: the `Verifications` service of the
 * application core behind Promises, with the library as the viewer that
 * sees every team. Built on first use, so validation alone opens no files.
 * With a config directory whose data directory exists it keeps records and
 * signing keys there and mails as `campusgate.yaml` says (as the daemon
 * does; do not run both on one data directory at once); otherwise it keeps
 * them in memory and sends through `send`, or into `outboxDir`. A refusal
 * rejects with its reason (`WrongCode`, `VerificationExpired`, ...).
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as References from "effect/References"
import type { JSONWebKeySet } from "jose"
import type { LiveSnapshot } from "./app/Snapshot.ts"
import { Snapshot } from "./app/Snapshot.ts"
import { Validation, type ValidationService } from "./app/Validation.ts"
import type { VerificationView } from "./domain/Verification.ts"
import { ALL_TEAMS } from "./domain/visibility.ts"
import { UsageStatistics } from "./stats/UsageStatistics.ts"
import { hasDataDirectory } from "./stats/usageFiles.ts"
import {
  MailSendError,
  MailTransport,
  type MailTransportService,
  type OutgoingMail,
  outboxDirectory,
  smtpOptions
} from "./verification/MailTransport.ts"
import { SigningKeyStore } from "./verification/SigningKeyStore.ts"
import { verificationSecretFor } from "./verification/secrets.ts"
import { VerificationStore } from "./verification/VerificationStore.ts"
import {
  type LinkOutcome,
  type StartOutcome,
  type StartVerification,
  Verifications
} from "./verification/Verifications.ts"
import type { VerificationsError } from "./verification/VerificationsError.ts"
import { webhookSecretFor } from "./webhooks/secret.ts"

export interface LibraryVerificationOptions {
  /** Sends a message (instead of SMTP or the outbox); a rejection is retried with backoff. */
  readonly send?: ((mail: OutgoingMail) => Promise<void>) | undefined
  /** Writes messages as .eml files here (instead of SMTP). */
  readonly outboxDir?: string | undefined
  /** Where links point (default `verification.publicUrl`, else `http://localhost:8080`). */
  readonly publicUrl?: string | undefined
  /** The verification secret in memory (default: `CAMPUSGATE_VERIFICATION_SECRET`, the data directory's, else random). */
  readonly secret?: string | undefined
  readonly webhookSecret?: string | undefined
}

export interface VerificationsFacade {
  start(request: StartVerification): Promise<StartOutcome>
  confirm(id: string, code: string): Promise<VerificationView>
  confirmLink(token: string): Promise<LinkOutcome>
  get(id: string): Promise<VerificationView>
  resend(id: string): Promise<VerificationView>
  cancel(id: string): Promise<VerificationView>
  lookup(
    email: string,
    target: { readonly offerId: string } | { readonly targetGroupId: string }
  ): Promise<VerificationView | undefined>
  resetLimit(email: string, offerId: string): Promise<number>
  jwks(): Promise<JSONWebKeySet>
  rotateSigningKey(): Promise<void>
}

const sendThrough = (send: (mail: OutgoingMail) => Promise<void>): MailTransportService => ({
  description: "send()",
  send: (mail) =>
    Effect.tryPromise({
      try: () => send(mail),
      catch: (error) => new MailSendError({ detail: error instanceof Error ? error.name : "Error", permanent: false })
    })
})

export const makeLibraryVerifications = (
  live: LiveSnapshot,
  validation: ValidationService,
  statistics: UsageStatistics["Service"],
  options: LibraryVerificationOptions
): { readonly facade: VerificationsFacade; dispose(): Promise<void> } => {
  const { config } = live.current()
  const onDisk = config.configDir !== undefined && hasDataDirectory(config.dataDir)
  const mail = config.settings.verification.mail
  const transport: MailTransportService =
    options.send !== undefined
      ? sendThrough(options.send)
      : options.outboxDir !== undefined
        ? MailTransport.makeOutbox(options.outboxDir)
        : onDisk && mail.smtp !== undefined
          ? MailTransport.makeSmtp(smtpOptions(mail.smtp, config.secrets.smtpPassword, config.smtpCa))
          : onDisk
            ? MailTransport.makeOutbox(outboxDirectory(config.configDir!, config.dataDir!, mail.outboxDir))
            : sendThrough(() =>
                Promise.reject(new Error("give verification.send or verification.outboxDir to send messages"))
              )
  const configured = options.secret ?? config.secrets.verificationSecret
  const secret = onDisk
    ? verificationSecretFor(config.dataDir!, configured)
    : (configured ?? randomBytes(32).toString("base64url"))
  const webhookSecret = onDisk
    ? webhookSecretFor(config.dataDir!, options.webhookSecret ?? config.secrets.webhookSecret)
    : (options.webhookSecret ?? config.secrets.webhookSecret ?? randomBytes(32).toString("base64url"))
  const publicUrl = (options.publicUrl ?? config.settings.verification.publicUrl ?? "http://localhost:8080").replace(
    /\/+$/,
    ""
  )
  const stores = onDisk
    ? Layer.mergeAll(VerificationStore.layerFiles(config.dataDir!), SigningKeyStore.layerFiles(config.dataDir!))
    : Layer.mergeAll(VerificationStore.layerMemory, SigningKeyStore.layerMemory)
  const runtime = ManagedRuntime.make(
    Verifications.layer({ secret, webhookSecret, publicUrl: () => publicUrl }).pipe(
      Layer.provide(
        Layer.mergeAll(
          stores,
          MailTransport.layer(transport),
          Snapshot.layer(live),
          Layer.succeed(Validation, validation),
          Layer.succeed(UsageStatistics, statistics),
          // A library writes nothing on its caller's standard output but what goes wrong.
          Layer.succeed(References.MinimumLogLevel, "Warn")
        )
      )
    )
  )
  const run = <A>(use: (service: Verifications["Service"]) => Effect.Effect<A, VerificationsError>): Promise<A> =>
    runtime.runPromise(
      Effect.flatMap(Effect.service(Verifications), use).pipe(
        Effect.catchTag("VerificationsError", (error) => Effect.fail(error.reason))
      )
    )
  return {
    facade: {
      start: (request) => run((service) => service.start(ALL_TEAMS, request)),
      confirm: (id, code) => run((service) => service.confirm(ALL_TEAMS, id, code)),
      confirmLink: (token) => run((service) => service.confirmLink(token)),
      get: (id) => run((service) => service.get(ALL_TEAMS, id)),
      resend: (id) => run((service) => service.resend(ALL_TEAMS, id)),
      cancel: (id) => run((service) => service.cancel(ALL_TEAMS, id)),
      lookup: (email, target) => run((service) => service.lookup(ALL_TEAMS, email, target)),
      resetLimit: (email, offerId) => run((service) => service.resetLimit(ALL_TEAMS, email, offerId)),
      jwks: () => run((service) => service.jwks()),
      rotateSigningKey: () => run((service) => service.rotateSigningKey())
    },
    dispose: () => runtime.dispose().then(() => transport.close?.())
  }
}
