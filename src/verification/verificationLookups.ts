/**
 * Reading proof of ownership back by address: the current verification an
 * address holds for an offer or target group (`GET /verifications?email=`),
 * and resetting an address's redemption limit for an offer. Both name the
 * address by its keyed hash only, and see the caller's team's records only.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Snapshot } from "../app/Snapshot.ts"
import { OfferNotFound, TargetGroupNotFound } from "../domain/errors.ts"
import { toView } from "../domain/Verification.ts"
import { resetLimit } from "../domain/verificationLifecycle.ts"
import { targetGroupVisible, type Viewer, verificationVisible } from "../domain/visibility.ts"
import { canonicalAddress } from "../engine/email/canonical.ts"
import { parseEmail } from "../engine/email/parseEmail.ts"
import type { VerificationKeys } from "./secrets.ts"
import type { VerificationStoreService } from "./VerificationStore.ts"
import type { Records } from "./verificationRecords.ts"
import { invalid, refuse, unavailable } from "./verificationRules.ts"

export interface LookupDependencies {
  readonly store: VerificationStoreService
  readonly records: Records
  readonly keys: VerificationKeys
  readonly snapshots: Snapshot["Service"]
}

export const makeLookups = ({ store, records, keys, snapshots }: LookupDependencies) => {
  /** The address hash of an email given to a lookup or reset (a field error when it is not an address). */
  const addressHashOf = (email: string, field: string) => {
    const parsed = parseEmail(email, { allowQuotedLocalPart: true })
    if (!parsed.ok) return invalid(field, parsed.reason, parsed.message)
    return Effect.succeed(keys.addressHash(canonicalAddress(parsed.email)))
  }

  const checkTarget = (viewer: Viewer, target: { readonly offerId?: string; readonly targetGroupId?: string }) => {
    const { engine } = snapshots.current()
    if (target.offerId !== undefined) {
      const offer = engine.offers.get(target.offerId)?.offer
      return offer !== undefined && verificationVisible(offer, viewer)
        ? Effect.void
        : refuse(new OfferNotFound({ offerId: target.offerId }))
    }
    const group = engine.targetGroups.get(target.targetGroupId ?? "")?.targetGroup
    return group !== undefined && targetGroupVisible(group, viewer)
      ? Effect.void
      : refuse(new TargetGroupNotFound({ targetGroupId: target.targetGroupId ?? "" }))
  }

  const lookup = Effect.fn("Verifications.lookup")(function* (
    viewer: Viewer,
    email: string,
    target: { readonly offerId: string } | { readonly targetGroupId: string }
  ) {
    yield* checkTarget(viewer, target)
    const addressHash = yield* addressHashOf(email, "/query/email")
    const now = yield* Clock.currentTimeMillis
    const current = (yield* store.byAddress(addressHash))
      .filter(
        (record) =>
          verificationVisible(record, viewer) &&
          record.status === "verified" &&
          (record.validUntil ?? 0) > now &&
          ("offerId" in target
            ? record.offerId === target.offerId
            : record.offerId === undefined && record.targetGroupId === target.targetGroupId)
      )
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0))[0]
    return current === undefined ? undefined : toView(current)
  })

  const resetLimitOf = Effect.fn("Verifications.resetLimit")(function* (
    viewer: Viewer,
    email: string,
    offerId: string
  ) {
    yield* checkTarget(viewer, { offerId })
    const addressHash = yield* addressHashOf(email, "/email")
    let reset = 0
    for (const record of yield* store.byAddress(addressHash)) {
      if (record.offerId !== offerId || record.status !== "verified" || record.limitReset === true) continue
      const after = yield* records
        .modify(record.id, (current) => (current.limitReset === true ? undefined : resetLimit(current)))
        .pipe(Effect.catch((error) => unavailable(`The reset could not be stored (${error.message}). Try again.`)))
      if (after?.limitReset === true) reset++
    }
    return reset
  })

  return { lookup, resetLimit: resetLimitOf }
}
