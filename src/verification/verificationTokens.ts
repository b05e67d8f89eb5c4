/**
 * Eligibility tokens as the `Verifications` service issues them: the claims
 * of a verified record (names from the snapshot in force, the audience of
 * the record's team and offer or target group, a pseudonymous `sub` per
 * offer, or per team and target group), signed with the current signing key, which is rotated
 * when older than `verification.signing.rotateAfter`; the retired key stays
 * published as long as the longest `validFor` of the deployment, so every
 * token it signed can still be checked.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { JSONWebKeySet } from "jose"
import type { Snapshot } from "../app/Snapshot.ts"
import type { LoadedConfig } from "../config/loadConfig.ts"
import type { VerificationRecord } from "../domain/Verification.ts"
import { periodMillis, resolvePolicy } from "../domain/VerificationPolicy.ts"
import { type EligibilityClaims, eligibilityAudience } from "./eligibilityToken.ts"
import type { SigningKey, SigningKeyStoreError, SigningKeyStoreService } from "./SigningKeyStore.ts"
import type { VerificationKeys } from "./secrets.ts"
import { activeKey, needsRotation, publishedKeys, rotate, signToken } from "./signing.ts"

/** The longest a token of this configuration lives: the largest `validFor`, deployment default or offer. */
export const longestValidForMs = (config: LoadedConfig): number => {
  let longest = periodMillis(config.settings.verification.validFor)
  for (const offer of config.offers) {
    longest = Math.max(longest, resolvePolicy(config.settings.verification, offer.verification).validForMs)
  }
  return longest
}

/** The issuer named in tokens: `verification.issuer`, else the public URL, else `campusgate`. */
export const issuerOf = (config: LoadedConfig): string =>
  config.settings.verification.issuer ?? config.settings.verification.publicUrl ?? "campusgate"

/**
 * Rotates the keys of `store` at `now` when due (`force`: whatever the
 * signing key's age), atomically with reading them; answers the keys after.
 * The daemon and `campusgate keys rotate-signing` both rotate here.
 */
export const rotateSigningKeys = (
  store: SigningKeyStoreService,
  config: LoadedConfig,
  now: number,
  force: boolean
): Effect.Effect<ReadonlyArray<SigningKey>, SigningKeyStoreError> => {
  const { algorithm, rotateAfter } = config.settings.verification.signing
  return store.update((current) =>
    force || needsRotation(current, now, periodMillis(rotateAfter))
      ? rotate(current, algorithm, now, longestValidForMs(config))
      : current
  )
}

export interface Tokens {
  /** A token for the verified `record`, valid until `validUntil` (ms). */
  issue(record: VerificationRecord, validUntil: number, now: number): Effect.Effect<string, SigningKeyStoreError>
  /** The public keys of tokens that may still be valid. */
  jwks(): Effect.Effect<JSONWebKeySet, SigningKeyStoreError>
  /** Makes the first key, or rotates an old one (`force`: whatever its age). */
  rotateIfDue(force?: boolean): Effect.Effect<void, SigningKeyStoreError>
}

export const makeTokens = (
  signingKeys: SigningKeyStoreService,
  snapshots: Snapshot["Service"],
  keys: VerificationKeys
): Tokens => {
  const rotateIfDue = (force = false) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const { config } = snapshots.current()
      const rotateAfterMs = periodMillis(config.settings.verification.signing.rotateAfter)
      // Reading is cheap; the locked read-modify-write only when a rotation looks due.
      if (!force && !needsRotation(yield* signingKeys.list(), now, rotateAfterMs)) return
      yield* rotateSigningKeys(signingKeys, config, now, force)
    })
  return {
    issue: (record, validUntil, now) =>
      Effect.gen(function* () {
        yield* rotateIfDue()
        const key = activeKey(yield* signingKeys.list())
        if (key === undefined) return yield* Effect.die(new Error("no signing key after rotation"))
        const { config, engine } = snapshots.current()
        const offer = record.offerId === undefined ? undefined : engine.offers.get(record.offerId)?.offer
        const group = engine.targetGroups.get(record.targetGroupId)?.targetGroup
        // An offer is one team's; a target group may serve several, so its tokens (and `sub`) are per team too.
        const scope =
          record.offerId === undefined
            ? `targetGroup:${record.team}:${record.targetGroupId}`
            : `offer:${record.offerId}`
        const claims: EligibilityClaims = {
          iss: issuerOf(config),
          aud: eligibilityAudience(
            record.offerId === undefined
              ? { team: record.team, targetGroupId: record.targetGroupId }
              : { team: record.team, offerId: record.offerId }
          ),
          sub: keys.subject(scope, record.addressHash),
          jti: record.id,
          iat: Math.floor(now / 1000),
          exp: Math.floor(validUntil / 1000),
          ...(record.offerId === undefined
            ? {}
            : { offer: { id: record.offerId, name: offer?.name ?? record.offerId } }),
          targetGroup: { id: record.targetGroupId, name: group?.name ?? record.targetGroupId },
          institution: record.institution,
          method: record.method
        }
        return yield* Effect.promise(() => signToken(key, claims))
      }),
    jwks: () =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        return publishedKeys(yield* signingKeys.list(), now)
      }),
    rotateIfDue
  }
}
