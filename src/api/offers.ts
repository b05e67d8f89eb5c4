/**
 * The offer endpoints: create, list, read, read the status, change (a JSON
 * merge patch, the status included), delete, and validate many (offer,
 * email) pairs at once. An offer is written as in the config YAML; what
 * `GET` returns, `POST` accepts back (the server-set `effectiveStatus` and
 * `source` are ignored), so an offer can be copied between deployments and
 * into git. Reads carry an `ETag`, writes may send `If-Match`. Offers in
 * the config directory are read-only here (409). Another team's offer is
 * 404, never 403.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { OfferId, TargetGroupId, TeamId } from "../domain/Identifiers.ts"
import { EffectiveOfferStatus, Instant, Offer, OfferStatus } from "../domain/Offer.ts"
import { DAILY_RETENTION_DAYS, OfferUsage } from "../domain/OfferUsage.ts"
import { OfferValidationResult } from "../domain/ValidationResult.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { Idempotency, IdempotencyHeaders } from "./idempotency.ts"
import { RateLimitBucket } from "./rateLimits.ts"
import { idParam, resourceEndpoints } from "./resourceEndpoints.ts"
import { NestedPatch, PageQuery, ResourceSource, readErrors } from "./resources.ts"
import { BULK_MAX_EMAILS } from "./validation.ts"

/** An offer as the API answers it: the YAML fields plus the server-set status at this moment and its source. */
export const OfferResource = Schema.Struct({
  ...Offer.fields,
  effectiveStatus: EffectiveOfferStatus,
  source: ResourceSource
}).annotate({ identifier: "Offer" })
export type OfferResource = typeof OfferResource.Type

// The OpenAPI examples use the shipped example config in config/: new offers of team
// acme on shipped target groups, shipped offers in the batch. PATCH changes only offers
// made through the API (those in config/ are 409), so its examples are for `acme-spring-sale`.

const springSale = {
  id: "acme-spring-sale",
  name: "Spring sale for UK and partner students",
  description: "20% off Acme Learning in spring.",
  targetGroups: ["uk-students", "acme-partners"],
  startsAt: "2027-03-01T00:00:00Z",
  endsAt: "2027-06-01T00:00:00+01:00"
} as const

/** An offer to create: `team` defaults to the caller's; the server-set fields are accepted and ignored. */
export const CreateOfferRequest = Schema.Struct({
  ...Offer.fields,
  team: Schema.optionalKey(TeamId),
  effectiveStatus: Schema.optionalKey(EffectiveOfferStatus),
  source: Schema.optionalKey(ResourceSource)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { ...springSale, status: "draft" },
      { id: "acme-uk-students", name: "Acme for UK students", targetGroups: ["uk-students"], status: "active" }
    ]
  }),
  Schema.check(
    Schema.makeFilter((offer) =>
      offer.startsAt === undefined ||
      offer.endsAt === undefined ||
      Date.parse(offer.startsAt) < Date.parse(offer.endsAt)
        ? undefined
        : { path: ["endsAt"], issue: "endsAt must be after startsAt" }
    )
  )
)
export type CreateOfferRequest = typeof CreateOfferRequest.Type

/**
 * A change to an offer as a JSON merge patch (RFC 7396): the fields given
 * replace the offer's, `null` removes an optional one, `verification` is
 * merged member by member. The result is checked as a new offer would be;
 * `id` and `team` cannot change, and the server-set fields are ignored.
 */
export const UpdateOfferRequest = Schema.Struct({
  id: Schema.optionalKey(OfferId),
  team: Schema.optionalKey(TeamId),
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  targetGroups: Schema.optionalKey(Schema.Array(TargetGroupId)),
  status: Schema.optionalKey(OfferStatus),
  startsAt: Schema.optionalKey(Schema.NullOr(Schema.String)),
  endsAt: Schema.optionalKey(Schema.NullOr(Schema.String)),
  verification: Schema.optionalKey(Schema.NullOr(NestedPatch)),
  effectiveStatus: Schema.optionalKey(Schema.Unknown),
  source: Schema.optionalKey(Schema.Unknown)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { status: "active" },
      { status: "paused" },
      { name: "Spring sale for UK students", targetGroups: ["uk-students"], endsAt: null }
    ]
  })
)
export type UpdateOfferRequest = typeof UpdateOfferRequest.Type

// The docs page's snippets read, change and delete the offer its create example makes (those of the config are read-only).
const IdParam = idParam("acme-spring-sale")

/** An offer as answered: `acme-spring-sale` as created, and once published (`scheduled` until its window opens). */
const createdExample: typeof OfferResource.Encoded = {
  ...springSale,
  team: "acme",
  status: "draft",
  effectiveStatus: "draft",
  source: "api"
}
const publishedExample: typeof OfferResource.Encoded = {
  ...createdExample,
  status: "active",
  effectiveStatus: "scheduled"
}

export const OfferStatusResponse = Schema.Struct({
  id: Schema.String,
  /** The effective status: `scheduled` and `expired` come from the window. */
  status: EffectiveOfferStatus,
  /** Why, in plain English, e.g. "starts 2026-12-01T00:00:00Z". */
  statusReason: Schema.String,
  window: Schema.Struct({ startsAt: Schema.NullOr(Instant), endsAt: Schema.NullOr(Instant) }),
  /** How the offer has been used: validations, eligibility, unique people, by day. */
  usage: OfferUsage
}).annotate({ identifier: "OfferStatus" })

export const OfferStatusQuery = {
  /** `usage.daily` as the last this many UTC days up to today, every day present (default: the days with validations). */
  days: Schema.optionalKey(
    Schema.Int.pipe(
      Schema.check(
        Schema.isBetween(
          { minimum: 1, maximum: DAILY_RETENTION_DAYS },
          { message: `days is a whole number from 1 to ${DAILY_RETENTION_DAYS}` }
        )
      )
    )
  )
}

export const ListOffersQuery = {
  ...PageQuery,
  /** Only offers with this effective status. */
  status: Schema.optionalKey(EffectiveOfferStatus)
}

export const BulkProcessRequest = Schema.Struct({
  requests: Schema.Array(Schema.Struct({ offerId: Schema.String, email: Schema.String })).pipe(
    Schema.check(Schema.isMinLength(1))
  )
}).pipe(
  Schema.annotateEncoded({
    examples: [
      {
        requests: [
          { offerId: "acme-student-discount", email: "kim@partner-college.org" },
          { offerId: "acme-winter-semester", email: "max@tum.de" }
        ]
      }
    ]
  })
)
export type BulkProcessRequest = typeof BulkProcessRequest.Type

export const bulkProcessSummary = (bound: number): string => `Check up to ${bound} (offer, email) pairs at once`

/** A request of a batch that could not be processed: its offer is unknown or belongs to another team. */
export const BulkProcessItemError = Schema.Struct({
  offerId: Schema.String,
  email: Schema.String,
  error: Schema.Struct({ code: Schema.Literal("NOT_FOUND"), message: Schema.String })
})

export const BulkProcessResponse = Schema.Struct({
  results: Schema.Array(Schema.Union([OfferValidationResult, BulkProcessItemError])),
  summary: Schema.Struct({
    total: Count,
    eligible: Count,
    ineligible: Count,
    errors: Count
  }),
  requestId: Schema.String
}).annotate({ identifier: "OfferBatchResult" })
export type BulkProcessResponse = typeof BulkProcessResponse.Type

const offerEndpoints = resourceEndpoints({
  path: "/offers",
  scopes: { read: "offers:read", write: "offers:write" },
  resource: OfferResource,
  pageIdentifier: "OfferPage",
  createRequest: CreateOfferRequest,
  updateRequest: UpdateOfferRequest,
  listQuery: ListOffersQuery,
  idParam: IdParam,
  createdExample,
  updatedExample: publishedExample,
  words: {
    create: {
      summary: "Create an offer of the caller's team",
      description:
        "The body is an offer as in the config YAML (what GET returns is accepted back). It is stored in the data directory and serves at once: 201 with `Location` and `ETag`. An id that exists already is 409, as is one more offer than `limits.resourcesPerTeam` allows."
    },
    list: {
      summary: "List the caller's team's offers, ordered by id",
      description:
        "Offers from the config directory and those made through the API (`source`), `limit` at a time (default 50, at most 100); pass `nextCursor` as `cursor` for the next page. `status` keeps only offers with that effective status."
    },
    get: {
      summary: "Read an offer",
      description:
        "The offer as in the config YAML, with its effective status now and where it is defined. `ETag` is its version, for `If-Match` on a change."
    },
    update: {
      summary: "Change an offer (JSON merge patch)",
      description:
        "The body is a JSON merge patch (RFC 7396; `application/merge-patch+json` or `application/json`): the fields given replace the offer's, `null` removes an optional one. The changed offer is checked as a new one would be; `id` and `team` cannot change. A status change follows the lifecycle: publish (draft → active), pause (active → paused), resume (paused → active) or archive (any → archived; final); another move is 409. With `If-Match`, a change to an offer that has changed since is 412. Offers defined in the config directory are changed in git, not here (409)."
    },
    delete: {
      summary: "Delete an offer",
      description:
        "Removes an offer made through the API: 204, and validations against it answer 404 from then on (its usage statistics are kept). With `If-Match`, deleting an offer that has changed since is 412. Offers defined in the config directory are removed in git, not here (409)."
    }
  }
})

export class OffersApi extends HttpApiGroup.make("offers")
  .add(
    offerEndpoints.create,
    offerEndpoints.list,
    offerEndpoints.get,
    HttpApiEndpoint.get("status", "/offers/:id/status", {
      params: IdParam,
      query: OfferStatusQuery,
      success: OfferStatusResponse,
      error: readErrors
    })
      .annotate(RequiredScope, "offers:read")
      .annotateMerge(
        OpenApi.annotations({
          summary: "The current status of an offer, why, and its usage statistics",
          description:
            "The effective status (`scheduled` and `expired` come from the window) with a plain-English reason, the window, and usage: validations, eligible and ineligible by reason, unique people (estimated, no address stored), by day, the verification funnel (started, sent, verified), and the hosted page's funnel (`hostedFlow`: flows started on `/verify/{offerId}` — each flow once, not per page view —, flows that reached the code step, flows completed on the page, ineligible submissions, and the flows abandoned at the email step (`started - reachedCodeStep`) and at the code step (`reachedCodeStep - completed`); a flow still in progress counts as not yet moved on, so as abandoned at its step until it moves on; flows by target group are not counted). `daily` holds the days with validations or hosted flows (`hostedFlow` on days with one); with `days` (e.g. 7, 30 or 90) it holds exactly the last `days` UTC days up to today, zeros included, ready to chart."
        })
      ),
    offerEndpoints.update,
    offerEndpoints.delete,
    HttpApiEndpoint.post("bulkProcess", "/offers/bulk-process", {
      headers: IdempotencyHeaders,
      payload: BulkProcessRequest,
      success: BulkProcessResponse,
      error: readErrors
    })
      .middleware(Idempotency)
      .annotate(RequiredScope, "validate:offers")
      .annotate(RateLimitBucket, "bulk")
      .annotateMerge(
        OpenApi.annotations({
          summary: bulkProcessSummary(BULK_MAX_EMAILS),
          description:
            "Results come in input order: an offer validation result per request, or a per-item NOT_FOUND error for an offer the caller cannot see. One bad item never fails the whole request."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "A team's offers: which target groups they are for, their status and window, their usage statistics; created, changed and deleted through the API, or kept in git (read-only here)."
    })
  )
  .middleware(Authorization) {}
