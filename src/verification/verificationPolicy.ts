/**
 * The verification policy in force for an offer (or, without one, the
 * deployment's defaults), resolved once per offer object of the snapshot:
 * a reload brings new offer objects and so new policies.
 */

import type { ConfigSnapshot } from "../app/Snapshot.ts"
import type { Offer } from "../domain/Offer.ts"
import { type ResolvedPolicy, resolvePolicy } from "../domain/VerificationPolicy.ts"

const resolved = new WeakMap<Offer | ConfigSnapshot, ResolvedPolicy>()

/** The policy of `offerId` in `snapshot` (the defaults for no offer, or one that is gone). */
export const policyOf = (
  snapshot: ConfigSnapshot,
  target: { readonly offerId?: string | undefined }
): ResolvedPolicy => {
  const offer = target.offerId === undefined ? undefined : snapshot.engine.offers.get(target.offerId)?.offer
  const key = offer ?? snapshot
  let policy = resolved.get(key)
  if (policy === undefined) {
    policy = resolvePolicy(snapshot.config.settings.verification, offer?.verification)
    resolved.set(key, policy)
  }
  return policy
}
