/**
 * Which stored status an offer may move to (DESIGN.md, "Model"):
 *
 *   draft ──publish──▶ active ◀──resume── paused
 *                        └─────pause─────▶
 *   any ──archive──▶ archived   (final: nothing leaves it)
 *
 * Setting the status an offer already has is allowed and changes nothing.
 * Going back to draft once an offer has been published is not a move: a
 * published offer is paused or archived instead. Imports nothing at run
 * time, so the console's bundle offers the same moves the API allows.
 */

import type { OfferStatus } from "./Offer.ts"
import { withArticle } from "./words.ts"

const moves: Record<OfferStatus, ReadonlyArray<OfferStatus>> = {
  draft: ["active", "archived"],
  active: ["paused", "archived"],
  paused: ["active", "archived"],
  archived: []
}

/** The statuses an offer whose stored status is `from` may move to (its own excluded). */
export const movesFrom = (from: OfferStatus): ReadonlyArray<OfferStatus> => moves[from]

/** Why `from` cannot become `to`, or undefined when it can. */
export const refusedTransition = (from: OfferStatus, to: OfferStatus): string | undefined => {
  if (from === to || moves[from].includes(to)) return undefined
  if (from === "archived") {
    return "the offer is archived, and archiving is final: create a new offer (with a new id) instead"
  }
  if (to === "draft") return `${withArticle(from)} offer cannot go back to draft; pause or archive it instead`
  return `${withArticle(from)} offer cannot become ${to}; from ${from} it can become ${moves[from].join(" or ")}`
}
