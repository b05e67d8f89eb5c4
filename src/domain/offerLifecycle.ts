/**
 * The life of an offer (DESIGN.md, "Model"): the moves people make with its
 * stored status, and a plain-English reason for its effective status.
 *
 *   draft ──publish──▶ active ◀──resume── paused
 *                        └─────pause─────▶
 *   any ──archive──▶ archived   (final: nothing leaves it)
 *
 * Setting the status an offer already has is allowed and changes nothing.
 * Going back to draft once an offer has been published is not a move: a
 * published offer is paused or archived instead.
 */
import { type EffectiveOfferStatus, effectiveStatus, type Offer, type OfferStatus } from "./Offer.ts"

const moves: Record<OfferStatus, ReadonlyArray<OfferStatus>> = {
  draft: ["active", "archived"],
  active: ["paused", "archived"],
  paused: ["active", "archived"],
  archived: []
}

/** Why `from` cannot become `to`, or undefined when it can. */
export const refusedTransition = (from: OfferStatus, to: OfferStatus): string | undefined => {
  if (from === to || moves[from].includes(to)) return undefined
  if (from === "archived") {
    return "the offer is archived, and archiving is final: create a new offer (with a new id) instead"
  }
  if (to === "draft") return `a ${from} offer cannot go back to draft; pause or archive it instead`
  return `a ${from} offer cannot become ${to}; from ${from} it can become ${moves[from].join(" or ")}`
}

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
