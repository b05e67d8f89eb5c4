/**
 * A shop's check of an eligibility token names whom the token must be for:
 * an offer, or a team's target group. Tokens carry that audience (`aud`)
 * and the deployment's issuer; an offer's token never passes for a target
 * group or the reverse, one team's token for a shared target group never
 * passes another team's check, and a check that names nothing is a mistake
 * unless it says `audience: "any"`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Viewer } from "../../src/domain/visibility.ts"
import {
  type EligibilityClaims,
  EligibilityTokenError,
  type VerifyEligibilityOptions,
  verifyEligibilityToken
} from "../../src/verification/eligibilityToken.ts"
import { activeKey, signToken } from "../../src/verification/signing.ts"
import type { Verifications } from "../../src/verification/Verifications.ts"
import { codeIn, type harness, withVerifications } from "./verificationTesting.ts"

/** Verifies `email` for `target` as `viewer`; answers the eligibility token. */
const tokenFor = (
  verifications: Verifications["Service"],
  mail: ReturnType<typeof harness>["mail"],
  viewer: Viewer,
  email: string,
  target: { offerId: string } | { targetGroupId: string }
) =>
  Effect.gen(function* () {
    const before = mail.sent.length
    const started = yield* verifications.start(viewer, { email, ...target })
    if (!("started" in started)) throw new Error(`${email} is not eligible`)
    for (let turn = 0; mail.sent.length === before && turn < 5000; turn++) yield* Effect.yieldNow
    return (yield* verifications.confirm(viewer, started.started.id, codeIn(mail.sent[before]!))).eligibility!.token
  })

const refusal = (token: string, options: VerifyEligibilityOptions) =>
  Effect.promise(() =>
    verifyEligibilityToken(token, options).then(
      () => "accepted",
      (error: unknown) => (error instanceof EligibilityTokenError ? error.reason : `thrown ${(error as Error).name}`)
    )
  )

describe("eligibility tokens and their audience", () => {
  it.effect("each token names its team's offer or target group; a check accepts only what it expects", () =>
    withVerifications((verifications, { mail, keys }) =>
      Effect.gen(function* () {
        const offer = yield* tokenFor(verifications, mail, "acme", "jane@ox.ac.uk", { offerId: "spring" })
        // "uk" is shared: both teams verify their customers against it.
        const acmeGroup = yield* tokenFor(verifications, mail, "acme", "jane@ox.ac.uk", { targetGroupId: "uk" })
        const globexGroup = yield* tokenFor(verifications, mail, "globex", "jane@ox.ac.uk", { targetGroupId: "uk" })
        const jwks = yield* verifications.jwks()
        const now = yield* Clock.currentTimeMillis
        const claims = (token: string) =>
          Effect.promise(() => verifyEligibilityToken(token, { jwks, now, audience: "any" }))

        expect(yield* claims(offer)).toMatchObject({ aud: "acme/offers/spring", iss: "campusgate" })
        expect(yield* claims(acmeGroup)).toMatchObject({ aud: "acme/target-groups/uk" })
        // The same person is another subject for each team: teams cannot match up their customers.
        expect((yield* claims(acmeGroup)).sub).not.toBe((yield* claims(globexGroup)).sub)

        const check = (token: string, options: Omit<VerifyEligibilityOptions, "jwks">) =>
          refusal(token, { jwks, now, ...options })
        expect(yield* check(offer, { offerId: "spring" })).toBe("accepted")
        expect(yield* check(offer, { offerId: "spring", team: "acme" })).toBe("accepted")
        expect(yield* check(offer, { offerId: "spring", team: "globex" })).toBe("wrong-team")
        expect(yield* check(offer, { offerId: "once" })).toBe("wrong-offer")
        expect(yield* check(offer, { targetGroupId: "uk", team: "acme" })).toBe("wrong-target-group")
        expect(yield* check(acmeGroup, { targetGroupId: "uk", team: "acme" })).toBe("accepted")
        expect(yield* check(acmeGroup, { targetGroupId: "uk", team: "globex" })).toBe("wrong-team")
        expect(yield* check(globexGroup, { targetGroupId: "uk", team: "globex" })).toBe("accepted")
        expect(yield* check(acmeGroup, { offerId: "spring" })).toBe("wrong-offer")
        expect(yield* check(acmeGroup, { targetGroupId: "gmail", team: "acme" })).toBe("wrong-target-group")
        expect(yield* check(acmeGroup, { issuer: "https://elsewhere.example", audience: "any" })).toBe("wrong-issuer")

        // A check that names no audience, or a target group without its team, is a mistake in the code.
        expect(yield* check(offer, {})).toBe("thrown TypeError")
        expect(yield* check(acmeGroup, { targetGroupId: "uk" })).toBe("thrown TypeError")
        expect(yield* check(offer, { offerId: "spring", targetGroupId: "uk", team: "acme" })).toBe("thrown TypeError")
        expect(yield* check(offer, { audience: "any", offerId: "spring" })).toBe("thrown TypeError")

        // A token without an audience (as issued before tokens had one) passes only a check that accepts any.
        const { aud: _aud, ...legacy } = yield* claims(offer)
        const key = activeKey(yield* keys.list())!
        const unbound = yield* Effect.promise(() => signToken(key, legacy as EligibilityClaims))
        expect(yield* check(unbound, { offerId: "spring" })).toBe("invalid")
        expect(yield* check(unbound, { audience: "any" })).toBe("accepted")
      })
    )
  )
})
