/**
 * The life of an offer (DESIGN.md, "Model"): the moves people make with its
 * stored status (`offerMoves.ts`) and a plain-English reason for its
 * effective status.
 */
import { type EffectiveOfferStatus, effectiveStatus, type Offer } from "./Offer.ts"

export { refusedTransition } from "./offerMoves.ts"

/** The effective status at `now` and why, e.g. `scheduled` because it "starts 2026-12-01T00:00:00Z". */
export const offerStatusAt = (
  offer: Offer,
  now: number
): { readonly status: EffectiveOfferStatus; readonly reason: string } => {
  const status = effectiveStatus(offer, now)
  switch (status) {
    case "draft":
      return { status, reason: "a draft: not offered yet; set its status to active to publish it" }
    case "paused":
      return { status, reason: "paused: validations answer OFFER_NOT_ACTIVE until it is set back to active" }
    case "archived":
      return { status, reason: "archived: no longer offered, for good" }
    case "scheduled":
      return { status, reason: `starts ${offer.startsAt}` }
    case "expired":
      return { status, reason: `ended ${offer.endsAt}` }
    case "active":
      return {
        status,
        reason: offer.endsAt === undefined ? "active, with no end date" : `active until ${offer.endsAt}`
      }
  }
}
