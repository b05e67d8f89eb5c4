/**
 * The `Verifications` service over memory adapters, for app-level tests:
 * resources in memory, the memory verification and signing-key stores
 * (shared across "restarts" when the test passes them in), and the memory
 * mail transport, whose messages the tests read the code or link from.
 * Time is the test's `TestClock`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { LiveSnapshot, Snapshot } from "../../src/app/Snapshot.ts"
import { resourcesSource } from "../../src/app/sources.ts"
import { Validation, ValidationCounters } from "../../src/app/Validation.ts"
import type { Settings } from "../../src/config/Settings.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import type { OfferInput } from "../../src/domain/Offer.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { MailTransport, type OutgoingMail } from "../../src/verification/MailTransport.ts"
import { SigningKeyStore } from "../../src/verification/SigningKeyStore.ts"
import { VerificationStore } from "../../src/verification/VerificationStore.ts"
import { Verifications } from "../../src/verification/Verifications.ts"
import type { DeliveryOptions } from "../../src/webhooks/delivery.ts"

export const defaultOffers: Array<OfferInput> = [
  {
    id: "spring",
    team: "acme",
    name: "Spring sale",
    status: "active",
    targetGroups: ["uk"],
    verification: { redirectOrigins: ["https://shop.example"] }
  },
  {
    id: "once",
    team: "acme",
    name: "Once a year",
    status: "active",
    targetGroups: ["uk", "gmail"],
    verification: { maxVerificationsPerAddress: 1, redemptionWindow: "365 days" }
  },
  { id: "globex", team: "globex", name: "Globex", status: "active", targetGroups: ["uk"] }
]

export const resources = (offers: ReadonlyArray<OfferInput> = defaultOffers) => ({
  targetGroups: [
    { id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } },
    // Free mail is no student address; this group exists to test provider dot rules in redemption limits.
    { id: "gmail", name: "Gmail (test)", criteria: { domains: { allow: ["gmail.com", "googlemail.com"] } } }
  ],
  offers
})

export interface Harness {
  readonly layer: Layer.Layer<Verifications | UsageStatistics, unknown>
  readonly mail: ReturnType<typeof MailTransport.makeMemory>
  readonly store: VerificationStore["Service"]
  readonly keys: SigningKeyStore["Service"]
}

/** What a harness is built with (every part optional). */
export type HarnessOptions = NonNullable<Parameters<typeof harness>[0]>

/** A fresh service; pass `store`, `keys` and `mail` of an earlier harness to "restart" over the same state. */
export const harness = (
  options: {
    offers?: ReadonlyArray<OfferInput>
    store?: VerificationStore["Service"]
    keys?: SigningKeyStore["Service"]
    mail?: ReturnType<typeof MailTransport.makeMemory>
    webhookDelivery?: DeliveryOptions
    /** Another store kind than memory (files, Redis): built with the service, `store` then unused. */
    storeLayer?: Layer.Layer<VerificationStore, unknown>
    /** Changes to the default settings of `campusgate.yaml`. */
    settings?: (settings: Settings) => Settings
  } = {}
): Harness => {
  const source = resourcesSource(resources(options.offers))
  const change = options.settings
  const live = LiveSnapshot.loadSync(
    change === undefined
      ? source
      : {
          ...source,
          load: Effect.map(source.load, (load) =>
            load.ok ? { ...load, config: { ...load.config, settings: change(load.config.settings) } } : load
          )
        }
  )
  if (live instanceof InvalidConfiguration) throw live
  const store =
    options.store ?? Effect.runSync(Effect.provide(Effect.service(VerificationStore), VerificationStore.layerMemory))
  const keys = options.keys ?? SigningKeyStore.makeMemory()
  const mail = options.mail ?? MailTransport.makeMemory()
  const base = Layer.mergeAll(Snapshot.layer(live), UsageStatistics.layerMemory(), ValidationCounters.none)
  const layer = Verifications.layer({
    secret: "test-verification-secret",
    webhookSecret: "test-webhook-secret",
    publicUrl: () => "http://campusgate.test",
    webhookDelivery: options.webhookDelivery
  }).pipe(
    Layer.provideMerge(Validation.layer),
    Layer.provide(
      Layer.mergeAll(
        options.storeLayer ?? Layer.succeed(VerificationStore, store),
        Layer.succeed(SigningKeyStore, keys),
        MailTransport.layer(mail),
        Logger.layer([])
      )
    ),
    Layer.provideMerge(base)
  )
  return { layer, mail, store, keys }
}

/**
 * `body` run with the service of a fresh harness built with `options`; it is
 * handed the harness too, for its mail and store.
 */
export const withVerifications = <A, E>(
  body: (
    verifications: Verifications["Service"],
    fresh: Harness
  ) => Effect.Effect<A, E, Verifications | UsageStatistics>,
  options: HarnessOptions = {}
): Effect.Effect<A, unknown> => {
  const fresh = harness(options)
  return Effect.flatMap(Effect.service(Verifications), (verifications) => body(verifications, fresh)).pipe(
    Effect.provide(fresh.layer)
  )
}

/** Lets background fibers (the send queue) run until `done` holds (at most a few thousand turns). */
export const until = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let turn = 0; turn < 5000 && !done(); turn++) yield* Effect.yieldNow
    if (!done()) throw new Error("the condition never held")
  })

/** The code in a message (the first run of six digits on its own line of the text). */
export const codeIn = (mail: OutgoingMail): string => /^\s*(\d{6,10})\s*$/m.exec(mail.text)![1]!

/** The link token in a message. */
export const linkTokenIn = (mail: OutgoingMail): string =>
  /\/v\/(ver_[a-z0-9]{26}\.[A-Za-z0-9_-]{43})/.exec(mail.text)![1]!
