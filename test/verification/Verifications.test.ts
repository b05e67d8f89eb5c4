import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { ALL_TEAMS } from "../../src/domain/visibility.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { MailSendError } from "../../src/verification/MailTransport.ts"
import { Verifications } from "../../src/verification/Verifications.ts"
import { codeIn, harness, linkTokenIn, until, withVerifications } from "./verificationTesting.ts"

/** Starts a verification of `email` for `spring` as acme; answers its id. */
const startSpring = (verifications: Verifications["Service"], email = "jane@ox.ac.uk") =>
  Effect.map(verifications.start("acme", { email, offerId: "spring" }), (outcome) =>
    "started" in outcome ? outcome.started.id : ""
  )

const reasonOf = <A>(effect: Effect.Effect<A, { readonly reason: { readonly _tag: string } }>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason)

describe("Verifications", () => {
  it.effect("code: an eligible address is sent a code; the right code verifies and yields a signed token", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const started = yield* verifications.start("acme", { email: "Jane+shop@OX.ac.uk", offerId: "spring" })
        if (!("started" in started)) throw new Error("not started")
        const view = started.started
        expect(view).toMatchObject({ status: "pending", method: "code", offerId: "spring", email: "***@ox.ac.uk" })
        expect(Date.parse(view.expiresAt) - Date.parse(view.createdAt)).toBe(10 * 60_000)
        expect(Date.parse(view.resendAvailableAt) - Date.parse(view.createdAt)).toBe(30_000)
        yield* until(() => mail.sent.length === 1)
        const message = mail.sent[0]!
        expect(message.to).toBe("Jane+shop@ox.ac.uk")
        expect(message.subject).toContain("Spring sale")
        expect(message.text).toContain("University of Oxford")
        const verified = yield* verifications.confirm("acme", view.id, codeIn(message))
        expect(verified).toMatchObject({
          status: "verified",
          attempts: { made: 1 },
          messages: { sent: 1, delivery: "sent" }
        })
        const token = verified.eligibility!.token
        const jwks = yield* verifications.jwks()
        const now = yield* Clock.currentTimeMillis
        const claims = yield* Effect.promise(() => verifyEligibilityToken(token, { jwks, offerId: "spring", now }))
        expect(claims).toMatchObject({
          jti: view.id,
          offer: { id: "spring", name: "Spring sale" },
          targetGroup: { id: "uk" },
          institution: { name: "University of Oxford", country: "GB" },
          method: "code"
        })
        expect(claims.exp - claims.iat).toBe(365 * 86_400)
        expect(JSON.stringify(claims)).not.toContain("jane")
        const usage = yield* (yield* UsageStatistics).usage("spring")
        expect(usage.verifications).toEqual({
          started: 1,
          sent: 1,
          messagesSent: 1,
          verified: 1,
          failed: 0,
          expired: 0,
          conversionRate: 1
        })
      })
    )
  )

  it.effect("an ineligible address gets the failed result and no message", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const answer = yield* verifications.start("acme", { email: "bob@mit.edu", offerId: "spring" })
        expect(answer).toMatchObject({ ineligible: { isValid: false, reasonCode: "COUNTRY_NOT_ALLOWED" } })
        yield* Effect.repeat(Effect.yieldNow, { times: 50 })
        expect(mail.sent).toEqual([])
        expect((yield* reasonOf(verifications.start("acme", { email: "jane@ox.ac.uk", offerId: "globex" })))._tag).toBe(
          "OfferNotFound"
        )
      })
    )
  )

  it.effect("wrong codes: 400 with attempts remaining, failed after the fifth; only the latest code is valid", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const id = yield* startSpring(verifications)
        yield* until(() => mail.sent.length === 1)
        const first = codeIn(mail.sent[0]!)
        yield* TestClock.adjust("30 seconds")
        yield* verifications.resend("acme", id)
        yield* until(() => mail.sent.length === 2)
        const wrong = first === codeIn(mail.sent[1]!) ? "000000" : first
        const remaining = []
        for (let i = 0; i < 4; i++) {
          const reason = yield* reasonOf(verifications.confirm("acme", id, wrong))
          expect(reason._tag).toBe("WrongCode")
          remaining.push((reason as unknown as { attemptsRemaining: number }).attemptsRemaining)
        }
        expect(remaining).toEqual([4, 3, 2, 1])
        expect((yield* reasonOf(verifications.confirm("acme", id, wrong)))._tag).toBe("TooManyAttempts")
        // Even the right code is refused now.
        expect((yield* reasonOf(verifications.confirm("acme", id, codeIn(mail.sent[1]!))))._tag).toBe("TooManyAttempts")
        expect(yield* verifications.get("acme", id)).toMatchObject({
          status: "failed",
          failureReason: "TOO_MANY_ATTEMPTS"
        })
        // The funnel counts the verification once as sent; the resend is a second message, not a second send.
        const usage = yield* (yield* UsageStatistics).usage("spring")
        expect(usage.verifications).toMatchObject({ started: 1, sent: 1, messagesSent: 2, verified: 0, failed: 1 })
      })
    )
  )

  it.effect("expiry: after the lifetime the code is refused with its own reason and the verification is expired", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const id = yield* startSpring(verifications)
        yield* until(() => mail.sent.length === 1)
        yield* TestClock.adjust("10 minutes")
        expect((yield* reasonOf(verifications.confirm("acme", id, codeIn(mail.sent[0]!))))._tag).toBe(
          "VerificationExpired"
        )
        expect(yield* verifications.get("acme", id)).toMatchObject({ status: "expired" })
        const usage = yield* (yield* UsageStatistics).usage("spring")
        expect(usage.verifications).toMatchObject({ started: 1, expired: 1, verified: 0 })
      })
    )
  )

  it.effect("the sweep expires a verification nobody reads", () =>
    withVerifications((verifications, { store }) =>
      Effect.gen(function* () {
        const id = yield* startSpring(verifications)
        yield* TestClock.adjust("11 minutes")
        yield* verifications.sweep
        expect((yield* store.get(id))?.status).toBe("expired")
        expect((yield* store.get(id))?.sealedAddress).toBeUndefined()
      })
    )
  )

  it.effect(
    "resend: refused before the cooldown with Retry-After seconds; at most 5 messages an hour per address",
    () =>
      withVerifications((verifications, { mail }) =>
        Effect.gen(function* () {
          const id = yield* startSpring(verifications)
          yield* until(() => mail.sent.length === 1)
          yield* TestClock.adjust("10 seconds")
          const early = yield* reasonOf(verifications.resend("acme", id))
          expect(early).toMatchObject({ _tag: "ResendTooSoon", retryAfterSeconds: 20 })
          for (let n = 2; n <= 5; n++) {
            yield* TestClock.adjust("30 seconds")
            yield* verifications.resend("acme", id)
            yield* until(() => mail.sent.length === n)
          }
          yield* TestClock.adjust("30 seconds")
          expect(yield* reasonOf(verifications.resend("acme", id))).toMatchObject({ _tag: "TooManyMessages", limit: 5 })
          // A new verification of the same person (another spelling) counts too.
          expect(
            yield* reasonOf(verifications.start("acme", { email: "JANE+again@ox.ac.uk", offerId: "spring" }))
          ).toMatchObject({ _tag: "TooManyMessages" })
          yield* TestClock.adjust("1 hour")
          yield* verifications.start("acme", { email: "jane@ox.ac.uk", offerId: "spring" })
        })
      )
  )

  it.effect(
    "redemption limit: one verification per person, whatever the +tag, case or Gmail dots; an operator resets it",
    () =>
      withVerifications((verifications, { mail }) =>
        Effect.gen(function* () {
          const verifyOnce = (email: string) =>
            Effect.gen(function* () {
              const before = mail.sent.length
              const started = yield* verifications.start(ALL_TEAMS, { email, offerId: "once" })
              const id = "started" in started ? started.started.id : ""
              yield* until(() => mail.sent.length === before + 1)
              return yield* verifications.confirm(ALL_TEAMS, id, codeIn(mail.sent[before]!))
            })
          expect((yield* verifyOnce("john.smith@gmail.com")).status).toBe("verified")
          for (const variant of ["JohnSmith+deal@gmail.com", "j.o.h.n.s.m.i.t.h@googlemail.com"]) {
            expect(yield* reasonOf(verifications.start(ALL_TEAMS, { email: variant, offerId: "once" }))).toMatchObject({
              _tag: "RedemptionLimitReached",
              limit: 1
            })
          }
          expect(yield* verifications.resetLimit(ALL_TEAMS, "johnsmith@gmail.com", "once")).toBe(1)
          expect((yield* verifyOnce("JohnSmith+deal@gmail.com")).status).toBe("verified")
          // The lookup finds the current verification of the person, by any spelling.
          expect((yield* verifications.lookup(ALL_TEAMS, "john.smith+x@gmail.com", { offerId: "once" }))?.status).toBe(
            "verified"
          )
          expect(yield* verifications.lookup(ALL_TEAMS, "someone@gmail.com", { offerId: "once" })).toBeUndefined()
        })
      )
  )

  it.effect(
    "link: opening the link verifies once; a forged or superseded link is invalid; redirects stay on allowed origins",
    () =>
      withVerifications((verifications, { mail }) =>
        Effect.gen(function* () {
          const refused = yield* reasonOf(
            verifications.start("acme", {
              email: "jane@ox.ac.uk",
              offerId: "spring",
              method: "link",
              redirectUrl: "https://evil.example/x"
            })
          )
          expect(refused).toMatchObject({ _tag: "InvalidVerificationRequest", errors: [{ field: "/redirectUrl" }] })
          const started = yield* verifications.start("acme", {
            email: "jane@ox.ac.uk",
            offerId: "spring",
            method: "link",
            locale: "de-AT",
            redirectUrl: "https://shop.example/done"
          })
          const id = "started" in started ? started.started.id : ""
          yield* until(() => mail.sent.length === 1)
          expect(mail.sent[0]!.subject).toContain("Bestätigen")
          const token = linkTokenIn(mail.sent[0]!)
          // One character of the secret changed (not the last, whose low bits base64 may ignore; never to itself).
          const forged = `${token.slice(0, -5)}${token.at(-5) === "A" ? "B" : "A"}${token.slice(-4)}`
          expect((yield* verifications.confirmLink(forged)).outcome).toBe("invalid")
          const opened = yield* verifications.confirmLink(token)
          expect(opened).toMatchObject({ outcome: "verified", redirectUrl: "https://shop.example/done", locale: "de" })
          expect((yield* verifications.confirmLink(token)).outcome).toBe("verified")
          expect((yield* verifications.get("acme", id)).status).toBe("verified")
        })
      )
  )

  it.effect("a link with a forged secret reveals nothing of its verification, whatever its status", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const linkOf = Effect.fnUntraced(function* (email: string) {
          const before = mail.sent.length
          const started = yield* verifications.start("acme", {
            email,
            offerId: "spring",
            method: "link",
            redirectUrl: "https://shop.example/done"
          })
          yield* until(() => mail.sent.length === before + 1)
          const token = linkTokenIn(mail.sent[before]!)
          const forged = `${token.slice(0, -5)}${token.at(-5) === "A" ? "B" : "A"}${token.slice(-4)}`
          return { id: "started" in started ? started.started.id : "", token, forged }
        })
        const cancelled = yield* linkOf("cancel@ox.ac.uk")
        yield* verifications.cancel("acme", cancelled.id)
        const expired = yield* linkOf("expire@ox.ac.uk")
        yield* TestClock.adjust("11 minutes")
        for (const link of [cancelled, expired]) {
          const outcome = yield* verifications.confirmLink(link.forged)
          expect(outcome.outcome).toBe("invalid")
          expect(outcome.verification).toBeUndefined()
          expect(outcome.redirectUrl).toBeUndefined()
        }
        // The person holding the link is still told what became of it.
        expect(yield* verifications.confirmLink(cancelled.token)).toMatchObject({
          outcome: "failed",
          verification: { status: "cancelled" }
        })
        expect(yield* verifications.confirmLink(expired.token)).toMatchObject({
          outcome: "expired",
          redirectUrl: "https://shop.example/done"
        })
      })
    )
  )

  it.effect("a failed send keeps the verification pending and is retried with backoff until it goes through", () => {
    const { layer, mail } = harness()
    return Effect.gen(function* () {
      mail.failWith = new MailSendError({ detail: "ECONNECTION", permanent: false })
      const verifications = yield* Verifications
      const id = yield* startSpring(verifications)
      yield* Effect.repeat(Effect.yieldNow, { times: 50 })
      expect(yield* verifications.get("acme", id)).toMatchObject({
        status: "pending",
        messages: { delivery: "queued", sent: 0 }
      })
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("2 seconds")
      mail.failWith = undefined
      expect(mail.sent).toEqual([])
      yield* TestClock.adjust("4 seconds")
      yield* until(() => mail.sent.length === 1)
      const view = yield* verifications.confirm("acme", id, codeIn(mail.sent[0]!))
      expect(view.status).toBe("verified")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a message sent soon after its start is recorded sent in one write: the start's claim covers it", () => {
    const { layer, mail, store } = harness()
    return Effect.gen(function* () {
      const id = yield* startSpring(yield* Verifications)
      const stored = yield* store.get(id)
      expect(stored).toMatchObject({ version: 0, delivery: { state: "queued", claim: {} } })
      yield* until(() => mail.sent.length === 1)
      yield* until(() => Effect.runSync(store.get(id))?.delivery.state === "sent")
      // Stored (version 0), then sent (version 1): no write of the claim the start already made.
      expect(yield* store.get(id)).toMatchObject({ version: 1, delivery: { state: "sent", attempts: 1 } })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a restart resumes a pending send with a new code; the code made before the restart was never sent", () => {
    const first = harness()
    return Effect.gen(function* () {
      first.mail.failWith = new MailSendError({ detail: "ECONNECTION", permanent: false })
      const id = yield* Effect.gen(function* () {
        const started = yield* (yield* Verifications).start("acme", { email: "jane@ox.ac.uk", offerId: "spring" })
        return "started" in started ? started.started.id : ""
      }).pipe(Effect.provide(first.layer))
      first.mail.failWith = undefined
      const second = harness({ store: first.store, keys: first.keys, mail: first.mail })
      yield* Effect.gen(function* () {
        yield* until(() => first.mail.sent.length === 1)
        const view = yield* (yield* Verifications).confirm("acme", id, codeIn(first.mail.sent[0]!))
        expect(view.status).toBe("verified")
      }).pipe(Effect.provide(second.layer))
    })
  })

  it.effect("another team's verification is not found", () =>
    withVerifications((verifications) =>
      Effect.gen(function* () {
        const id = yield* startSpring(verifications)
        expect((yield* reasonOf(verifications.get("globex", id)))._tag).toBe("VerificationNotFound")
        expect((yield* reasonOf(verifications.cancel("globex", id)))._tag).toBe("VerificationNotFound")
        expect((yield* verifications.cancel("acme", id)).status).toBe("cancelled")
        expect((yield* reasonOf(verifications.confirm("acme", id, "123456")))._tag).toBe("VerificationNotPending")
      })
    )
  )

  it.effect("key rotation: tokens signed before stay verifiable with the published keys", () =>
    withVerifications((verifications, { mail }) =>
      Effect.gen(function* () {
        const verifyOne = Effect.gen(function* () {
          const before = mail.sent.length
          const id = yield* startSpring(verifications, `s${before}@ox.ac.uk`)
          yield* until(() => mail.sent.length === before + 1)
          return (yield* verifications.confirm("acme", id, codeIn(mail.sent[before]!))).eligibility!.token
        })
        const old = yield* verifyOne
        yield* verifications.rotateSigningKey()
        const fresh = yield* verifyOne
        const jwks = yield* verifications.jwks()
        expect(jwks.keys).toHaveLength(2)
        const now = yield* Clock.currentTimeMillis
        for (const token of [old, fresh]) {
          const claims = yield* Effect.promise(() => verifyEligibilityToken(token, { jwks, offerId: "spring", now }))
          expect(claims.offer?.id).toBe("spring")
        }
        expect(
          new Set(
            [old, fresh].map((token) => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid)
          ).size
        ).toBe(2)
      })
    )
  )

  it.effect("a verified address gets one reverification reminder notice, reminderBefore its end, and none before", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const received: Array<{ type: string }> = []
        const receiver = createServer((request, response) => {
          let body = ""
          request.on("data", (chunk) => {
            body += chunk
          })
          request.on("end", () => {
            received.push(JSON.parse(body) as { type: string })
            response.writeHead(204).end()
          })
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))),
          () => Effect.sync(() => receiver.close())
        )
        const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
        const { layer, mail } = harness({
          offers: [
            {
              id: "spring",
              team: "acme",
              name: "Spring sale",
              status: "active",
              targetGroups: ["uk"],
              verification: { validFor: "1 hour", reminderBefore: "10 minutes", webhookUrl }
            }
          ],
          webhookDelivery: { policy: { allowPrivateNetworks: true, allowHosts: [] }, attempts: 1 }
        })
        return yield* Effect.gen(function* () {
          const verifications = yield* Verifications
          const id = yield* startSpring(verifications)
          yield* until(() => mail.sent.length === 1)
          yield* verifications.confirm("acme", id, codeIn(mail.sent[0]!))
          const notices = () => received.map((notice) => notice.type)
          yield* Effect.promise(() => waitFor(() => notices().includes("verification.verified")))
          // (The layer sweeps every 30 s on the test clock too; short periods keep those sweeps few.)
          yield* TestClock.adjust("45 minutes")
          yield* verifications.sweep
          expect(notices()).not.toContain("verification.reminder")
          yield* TestClock.adjust("6 minutes")
          yield* verifications.sweep
          yield* Effect.promise(() => waitFor(() => notices().includes("verification.reminder")))
          yield* verifications.sweep
          expect(notices().filter((type) => type === "verification.reminder")).toHaveLength(1)
        }).pipe(Effect.provide(layer))
      })
    )
  )
})

/** Waits (in real time: the webhook goes over a real connection) until `done` holds. */
const waitFor = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!done()) throw new Error("the condition never held")
}
