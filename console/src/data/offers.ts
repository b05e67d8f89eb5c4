/**
 * The Offers screen's list: filtered by effective status and searched by
 * id, name or description (case- and accent-insensitive), in the order the
 * API answers (by id); and which status buttons an offer gets. Only offers
 * made through the API can change here (those in the config directory are
 * read-only, 409), and only along the moves the API allows
 * (`src/domain/offerMoves.ts`).
 */
import { movesFrom } from "../../../src/domain/offerMoves.ts"
import type { EffectiveOfferStatus, Offer, OfferStatus } from "../apiTypes.ts"

export type StatusFilter = EffectiveOfferStatus | "all"

const folded = (text: string): string => text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()

export const filterOffers = (
  offers: ReadonlyArray<Offer>,
  filter: { readonly status: StatusFilter; readonly query: string }
): ReadonlyArray<Offer> => {
  const words = folded(filter.query).split(/\s+/).filter(Boolean)
  return offers.filter((offer) => {
    if (filter.status !== "all" && offer.effectiveStatus !== filter.status) return false
    const text = folded(`${offer.id} ${offer.name} ${offer.description ?? ""}`)
    return words.every((word) => text.includes(word))
  })
}

/** A button on an offer: the action's name and the stored status it sets. */
export interface OfferAction {
  readonly label: "Pause" | "Resume" | "Archive" | "Publish"
  readonly status: OfferStatus
}

const LABEL = (from: OfferStatus, to: OfferStatus): OfferAction["label"] | undefined => {
  if (to === "paused") return "Pause"
  if (to === "archived") return "Archive"
  if (to === "active") return from === "paused" ? "Resume" : "Publish"
  return undefined
}

export const offerActions = (offer: Offer): ReadonlyArray<OfferAction> =>
  offer.source !== "api"
    ? []
    : movesFrom(offer.status).flatMap((status) => {
        const label = LABEL(offer.status, status)
        return label === undefined ? [] : [{ label, status }]
      })

/** An offer's window in words: `from … until …`, `from …`, `until …`, or `no window`. */
export const windowText = (offer: Pick<Offer, "startsAt" | "endsAt">, format: (iso: string) => string): string => {
  if (offer.startsAt !== undefined && offer.endsAt !== undefined)
    return `${format(offer.startsAt)} – ${format(offer.endsAt)}`
  if (offer.startsAt !== undefined) return `from ${format(offer.startsAt)}`
  if (offer.endsAt !== undefined) return `until ${format(offer.endsAt)}`
  return "no window"
}
