/**
 * An offer belongs to a team and is eligible for an email when any of its
 * target groups matches. Its stored `status` is what people set; the
 * effective status adds `scheduled` and `expired` from the offer's window.
 */
import * as Schema from "effect/Schema"
import { OfferId, TargetGroupId, TeamId } from "./Identifiers.ts"
import { VerificationPolicy } from "./VerificationPolicy.ts"

export const OfferStatus = Schema.Literals(["draft", "active", "paused", "archived"])
export type OfferStatus = typeof OfferStatus.Type

export const EffectiveOfferStatus = Schema.Literals(["draft", "scheduled", "active", "paused", "expired", "archived"])
export type EffectiveOfferStatus = typeof EffectiveOfferStatus.Type

/** An ISO 8601 instant with an explicit offset, e.g. `2026-09-01T00:00:00Z`. */
export const Instant = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter(
      (s: string) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(s) &&
        !Number.isNaN(Date.parse(s)),
      { message: "an ISO 8601 date-time with a time zone, e.g. 2026-09-01T00:00:00Z" }
    )
  )
)

export const Offer = Schema.Struct({
  id: OfferId,
  team: TeamId,
  name: Schema.NonEmptyString,
  description: Schema.optionalKey(Schema.String),
  targetGroups: Schema.Array(TargetGroupId).pipe(
    Schema.check(Schema.isMinLength(1, { message: "an offer needs at least one target group" }))
  ),
  status: OfferStatus,
  startsAt: Schema.optionalKey(Instant),
  endsAt: Schema.optionalKey(Instant),
  /** Proof of ownership for this offer; the deployment's `verification` defaults fill what is not set. */
  verification: Schema.optionalKey(VerificationPolicy)
}).pipe(
  Schema.check(
    Schema.makeFilter(
      (offer) =>
        offer.startsAt === undefined ||
        offer.endsAt === undefined ||
        Date.parse(offer.startsAt) < Date.parse(offer.endsAt),
      { message: "startsAt must be before endsAt" }
    )
  )
)
export type Offer = typeof Offer.Type
export type OfferInput = typeof Offer.Encoded

/** The status an offer has at `now`: its window turns `active` into `scheduled` or `expired`. */
export const effectiveStatus = (offer: Offer, now: number): EffectiveOfferStatus => {
  if (offer.status !== "active") return offer.status
  if (offer.startsAt !== undefined && now < Date.parse(offer.startsAt)) return "scheduled"
  if (offer.endsAt !== undefined && now >= Date.parse(offer.endsAt)) return "expired"
  return "active"
}
