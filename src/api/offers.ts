/**
 * The offer endpoints: create, list, read, read the status, change the
 * status, and validate many (offer, email) pairs at once. An offer is
 * written as in the config YAML; what `GET` returns, `POST` accepts back
 * (the server-set `effectiveStatus` and `source` are ignored), so an offer
 * can be copied between deployments and into git. Another team's offer is
 * 404, never 403.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { TeamId } from "../domain/Identifiers.ts"
import { EffectiveOfferStatus, Instant, Offer, OfferStatus } from "../domain/Offer.ts"
import { OfferUsage } from "../domain/OfferUsage.ts"
import { OfferValidationResult } from "../domain/ValidationResult.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { BadRequest, Conflict, InternalError, NotFound, ServiceUnavailable, TooManyRequests } from "./problems.ts"
import { RateLimitBucket } from "./rateLimits.ts"
import { Page, PageQuery, ResourceSource } from "./resources.ts"
import { BULK_MAX_EMAILS } from "./validation.ts"

/** An offer as the API answers it: the YAML fields plus the server-set status at this moment and its source. */
export const OfferResource = Schema.Struct({
  ...Offer.fields,
  effectiveStatus: EffectiveOfferStatus,
  source: ResourceSource
})
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

export const UpdateOfferRequest = Schema.Struct({ status: OfferStatus }).pipe(
  Schema.annotateEncoded({ examples: [{ status: "active" }, { status: "paused" }, { status: "archived" }] })
)

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
})

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
    total: Schema.Number,
    eligible: Schema.Number,
    ineligible: Schema.Number,
    errors: Schema.Number
  }),
  requestId: Schema.String
})
export type BulkProcessResponse = typeof BulkProcessResponse.Type

const IdParam = { id: Schema.String }
const readErrors = [BadRequest, NotFound, TooManyRequests, ServiceUnavailable] as const
const writeErrors = [BadRequest, NotFound, Conflict, TooManyRequests, InternalError, ServiceUnavailable] as const

export class OffersApi extends HttpApiGroup.make("offers")
  .add(
    HttpApiEndpoint.post("create", "/offers", {
      payload: CreateOfferRequest,
      success: OfferResource.pipe(Schema.annotateEncoded({ examples: [createdExample] }), HttpApiSchema.status(201)),
      error: writeErrors
    })
      .annotate(RequiredScope, "offers:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Create an offer of the caller's team",
          description:
            "The body is an offer as in the config YAML (what GET returns is accepted back). It is stored in the data directory and serves at once. An id that exists already is 409."
        })
      ),
    HttpApiEndpoint.get("list", "/offers", {
      query: ListOffersQuery,
      success: Page(OfferResource),
      error: readErrors
    })
      .annotate(RequiredScope, "offers:read")
      .annotateMerge(OpenApi.annotations({ summary: "List the caller's team's offers, ordered by id" })),
    HttpApiEndpoint.get("get", "/offers/:id", {
      params: IdParam,
      success: OfferResource,
      error: readErrors
    })
      .annotate(RequiredScope, "offers:read")
      .annotateMerge(OpenApi.annotations({ summary: "Read an offer" })),
    HttpApiEndpoint.get("status", "/offers/:id/status", {
      params: IdParam,
      success: OfferStatusResponse,
      error: readErrors
    })
      .annotate(RequiredScope, "offers:read")
      .annotateMerge(OpenApi.annotations({ summary: "The current status of an offer, why, and its usage statistics" })),
    HttpApiEndpoint.patch("update", "/offers/:id", {
      params: IdParam,
      payload: UpdateOfferRequest,
      success: OfferResource.pipe(Schema.annotateEncoded({ examples: [publishedExample] })),
      error: writeErrors
    })
      .annotate(RequiredScope, "offers:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Change an offer's status",
          description:
            "Publish (draft → active), pause (active → paused), resume (paused → active) or archive (any → archived; final). Offers defined in the config directory are changed in git, not here (409)."
        })
      ),
    HttpApiEndpoint.post("bulkProcess", "/offers/bulk-process", {
      payload: BulkProcessRequest,
      success: BulkProcessResponse,
      error: readErrors
    })
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
  .middleware(Authorization) {}
