import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { OfferInput } from "../../src/domain/Offer.ts"
import { VerificationStore } from "../../src/verification/VerificationStore.ts"
import { Verifications } from "../../src/verification/Verifications.ts"
import * as VerificationPostgres from "../../src/verification/verificationPostgres.ts"
import { layerRedis as verificationStoreRedis } from "../../src/verification/verificationRedis.ts"
import { postgresAdapter } from "../postgresTesting.ts"
import { storeAdapters } from "../redisTesting.ts"
import { codeIn, defaultOffers, harness, withVerifications } from "./verificationTesting.ts"

const storeKinds = [
  ...storeAdapters("verification limits under concurrency", VerificationStore, verificationStoreRedis),
  ...postgresAdapter(
    "verification limits under concurrency",
    VerificationPostgres.layerPostgres,
    VerificationPostgres.migrations
  )
]

const offers: Array<OfferInput> = [
  ...defaultOffers,
  {
    id: "open",
    team: "acme",
    name: "Open",
    status: "active",
    targetGroups: ["uk"],
    verification: { maxMessagesPerAddress: 1000 }
  },
  {
    id: "globex-open",
    team: "globex",
    name: "Globex open",
    status: "active",
    targetGroups: ["uk"],
    verification: { maxMessagesPerAddress: 1000 }
  },
  {
    id: "once-open",
    team: "acme",
    name: "Once, many messages",
    status: "active",
    targetGroups: ["uk"],
    verification: { maxVerificationsPerAddress: 1, maxMessagesPerAddress: 1000 }
  }
]

/** The tags of the outcomes of `effects` run all at once: "passed" or the refusal's reason, counted. */
const outcomesAtOnce = <A>(effects: ReadonlyArray<Effect.Effect<A, { readonly reason: { readonly _tag: string } }>>) =>
  Effect.map(
    Effect.all(
      effects.map((effect) =>
        Effect.match(effect, { onSuccess: () => "passed", onFailure: (error) => error.reason._tag })
      ),
      { concurrency: "unbounded" }
    ),
    (tags) => {
      const counts: Record<string, number> = {}
      for (const tag of tags) counts[tag] = (counts[tag] ?? 0) + 1
      return counts
    }
  )

/** `outcomesAtOnce` of 50 requests, the `i`th made by `request(i)`. */
const fiftyAtOnce = <A>(request: (i: number) => Effect.Effect<A, { readonly reason: { readonly _tag: string } }>) =>
  outcomesAtOnce(Array.from({ length: 50 }, (_, i) => request(i)))

describe.each(storeKinds)("verification limits under concurrent requests (%s)", (_, storeLayer) => {
  it.live("50 starts at once for one address pass the offer's 5 messages an hour, no more", () =>
    withVerifications(
      (verifications) =>
        Effect.gen(function* () {
          const counts = yield* fiftyAtOnce((i) =>
            verifications.start("acme", { email: `jane+${i}@ox.ac.uk`, offerId: "spring" })
          )
          expect(counts).toEqual({ passed: 5, TooManyMessages: 45 })
        }),
      { offers, storeLayer: storeLayer() }
    )
  )

  it.live("each team spends its own budget: acme's five messages leave globex's offer its own", () =>
    withVerifications(
      (verifications) =>
        Effect.gen(function* () {
          for (let i = 0; i < 5; i++) yield* verifications.start("acme", { email: "jane@ox.ac.uk", offerId: "spring" })
          const refused = yield* Effect.flip(verifications.start("acme", { email: "jane@ox.ac.uk", offerId: "spring" }))
          expect(refused.reason).toMatchObject({ _tag: "TooManyMessages", limit: 5 })
          const globex = yield* verifications.start("globex", { email: "jane@ox.ac.uk", offerId: "globex" })
          expect("started" in globex).toBe(true)
        }),
      { offers, storeLayer: storeLayer() }
    )
  )

  it.live("the deployment's mailbox cap bounds every team's offers together, and says nothing of the others", () =>
    withVerifications(
      (verifications) =>
        Effect.gen(function* () {
          const counts = yield* fiftyAtOnce((i) =>
            i % 2 === 0
              ? verifications.start("acme", { email: "jane@ox.ac.uk", offerId: "open" })
              : verifications.start("globex", { email: "jane@ox.ac.uk", offerId: "globex-open" })
          )
          expect(counts).toEqual({ passed: 10, MailboxLimitReached: 40 })
          const refused = yield* Effect.flip(
            verifications.start("globex", { email: "jane@ox.ac.uk", offerId: "globex" })
          )
          // The whole window, whoever sent what when.
          expect(refused.reason).toMatchObject({ _tag: "MailboxLimitReached", retryAfterSeconds: 3600 })
          expect(refused.message).not.toMatch(/\b10\b|acme|globex/)
        }),
      { offers, storeLayer: storeLayer() }
    )
  )

  it.live("50 confirmations at once of one person's verifications redeem the offer once", () => {
    const { layer, mail } = harness({
      offers,
      storeLayer: storeLayer(),
      settings: (settings) => ({
        ...settings,
        verification: { ...settings.verification, mail: { ...settings.verification.mail, maxMessagesPerMailbox: 100 } }
      })
    })
    return Effect.gen(function* () {
      const verifications = yield* Verifications
      const ids: Array<string> = []
      for (let i = 0; i < 50; i++) {
        const started = yield* verifications.start("acme", { email: `Jane+${i}@ox.ac.uk`, offerId: "once-open" })
        if ("started" in started) ids.push(started.started.id)
      }
      expect(ids).toHaveLength(50)
      for (let waited = 0; mail.sent.length < 50 && waited < 20_000; waited += 10) yield* Effect.sleep("10 millis")
      const codes = new Map(mail.sent.map((message) => [message.verificationId, codeIn(message)]))
      const counts = yield* outcomesAtOnce(ids.map((id) => verifications.confirm("acme", id, codes.get(id)!)))
      expect(counts).toEqual({ passed: 1, RedemptionLimitReached: 49 })
      const views = yield* Effect.forEach(ids, (id) => verifications.get("acme", id))
      expect(views.filter((view) => view.status === "verified")).toHaveLength(1)
      expect(views.filter((view) => view.failureReason === "REDEMPTION_LIMIT_REACHED")).toHaveLength(49)
    }).pipe(Effect.provide(layer))
  })
})
