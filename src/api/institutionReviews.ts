/**
 * The review queue: domains no source lists that a team's traffic met,
 * refused as unknown (or accepted as likely institutions where a target
 * group opts in), with how likely each is an institution and the evidence,
 * and the operator's decision on each. An approval applies to the team's
 * targets at once and is written as a dataset entry to review in git.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { CountryCode } from "../domain/Country.ts"
import { HostRole, InstitutionType } from "../domain/Institution.ts"
import { Candidate, ReviewedInstitution, ReviewRejection, ReviewStatus } from "../domain/InstitutionReview.ts"
import { ReasonCode } from "../domain/ReasonCode.ts"
import { RegionCode } from "../domain/Region.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { BadRequest, Conflict, NotFound, ServiceUnavailable, TooManyRequests } from "./problems.ts"
import { pageQueryFields } from "./resources.ts"

export const ReviewSort = Schema.Literals(["count", "score", "recent"])
export type ReviewSort = typeof ReviewSort.Type

export const ReviewQuery = Schema.Struct({
  /** Absent: `pending`. */
  status: Schema.optionalKey(ReviewStatus),
  /** `count` (most refusals first, the default), `score` (most likely first) or `recent` (last seen first). */
  sort: Schema.optionalKey(ReviewSort),
  ...pageQueryFields(100)
})
export type ReviewQuery = typeof ReviewQuery.Type

/** A known institution whose name or domain resembles the unknown domain's. */
export const NearestInstitution = Schema.Struct({
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  domain: Schema.String,
  country: Schema.NullOr(Schema.String),
  type: InstitutionType
})

/** What one of the team's target groups decides for an address of the domain, now. */
export const TargetDecision = Schema.Struct({
  targetGroup: Schema.String,
  name: Schema.String,
  isValid: Schema.Boolean,
  reasonCode: Schema.optionalKey(ReasonCode)
})

export const InstitutionReview = Schema.Struct({
  domain: Schema.String,
  status: ReviewStatus,
  /** Validations that met the domain (refused as unknown, or accepted as a likely institution). */
  count: Count,
  /** Of those, the ones a target group accepted as a likely institution (`acceptCandidates`). */
  accepted: Count,
  /** The UTC days the domain was met on, with their counts, oldest first (the last 30 at most). */
  days: Schema.Array(Schema.Struct({ day: Schema.String, count: Count })),
  /** ISO 8601. */
  firstSeen: Schema.String,
  lastSeen: Schema.String,
  candidate: Candidate,
  nearest: Schema.Array(NearestInstitution),
  decisions: Schema.Array(TargetDecision),
  approval: Schema.optionalKey(ReviewedInstitution),
  rejection: Schema.optionalKey(ReviewRejection)
}).annotate({ identifier: "InstitutionReview" })
export type InstitutionReview = typeof InstitutionReview.Type

export const ReviewPage = Schema.Struct({
  data: Schema.Array(InstitutionReview),
  nextCursor: Schema.NullOr(Schema.String),
  /** Domains the queue let go to stay bounded (the least met and least likely), since the daemon's data began. */
  dropped: Count
}).annotate({ identifier: "InstitutionReviewPage" })
export type ReviewPage = typeof ReviewPage.Type

export const ApproveRequest = Schema.Struct({
  name: Schema.NonEmptyString.pipe(Schema.check(Schema.isMaxLength(300))),
  type: InstitutionType,
  country: Schema.optionalKey(Schema.NullOr(CountryCode)),
  region: Schema.optionalKey(Schema.NullOr(RegionCode)),
  role: Schema.optionalKey(HostRole)
}).annotate({
  identifier: "InstitutionApproval",
  examples: [
    {
      name: "Hochschule Musterstadt",
      type: "university",
      country: "DE" as CountryCode,
      region: "DE-NW" as RegionCode
    }
  ]
})
export type ApproveRequest = typeof ApproveRequest.Type

export const RejectRequest = Schema.Struct({
  reason: Schema.NonEmptyString.pipe(Schema.check(Schema.isMaxLength(500)))
}).annotate({ identifier: "InstitutionRejection", examples: [{ reason: "An online shop for student supplies." }] })
export type RejectRequest = typeof RejectRequest.Type

/** The example is a domain no source lists (the docs page's snippets approve, reject and read it). */
const DomainParam = { domain: Schema.String.annotate({ examples: ["hochschule-musterstadt.de"] }) }
const errors = [BadRequest, NotFound, Conflict, TooManyRequests, ServiceUnavailable] as const

export class InstitutionReviewsApi extends HttpApiGroup.make("institutionReviews")
  .add(
    HttpApiEndpoint.get("list", "/institution-reviews", {
      query: ReviewQuery,
      success: ReviewPage,
      error: errors
    })
      .annotate(RequiredScope, "institutions:review")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Unknown domains the team's traffic met, most met first",
          description:
            "Each domain no source lists that the team's validations refused as unknown (or accepted as a likely institution), counted per day: domain only, never an address. With how likely it is an institution (`candidate`: a score from 0 to 1 and the signals behind it), the nearest known institutions, what each of the team's target groups decides now, and the decision once made. `status` (default `pending`), `sort` (`count`, `score`, `recent`), `limit` (default 50, at most 100) and `cursor` as on every list."
        })
      ),
    HttpApiEndpoint.get("get", "/institution-reviews/:domain", {
      params: DomainParam,
      success: InstitutionReview,
      error: errors
    })
      .annotate(RequiredScope, "institutions:review")
      .annotateMerge(
        OpenApi.annotations({
          summary: "One domain of the review queue",
          description:
            "The domain as the list shows it: counts, candidate, nearest institutions, each target group's decision now and the decision made. A domain neither met nor decided is 404."
        })
      ),
    HttpApiEndpoint.post("approve", "/institution-reviews/:domain/approve", {
      params: DomainParam,
      payload: ApproveRequest,
      success: InstitutionReview,
      error: errors
    })
      .annotate(RequiredScope, "institutions:review")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Approve a domain as an institution of the team's",
          description:
            "The domain becomes a listed institution for the team's target groups and offers within a second, on every daemon, and is written to the reviewed dataset (`datasets/reviewed.yaml` in the config directory, or the data directory where the config directory is read-only) with who approved it and when, to commit to git. A domain any source lists already is 409."
        })
      ),
    HttpApiEndpoint.post("reject", "/institution-reviews/:domain/reject", {
      params: DomainParam,
      payload: RejectRequest,
      success: InstitutionReview,
      error: errors
    })
      .annotate(RequiredScope, "institutions:review")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Reject a domain, with the reason",
          description:
            "The rejection is remembered and shown (`status=rejected`); a rejected domain that was approved before stops being an institution of the team's."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "A human in the loop for institutions no open source lists: the unknown domains the team's traffic met, how likely each is an institution and why, and one call to approve or reject each."
    })
  )
  .middleware(Authorization) {}
