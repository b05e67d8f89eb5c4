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
import {
  ApproveRequest,
  InstitutionReview,
  RejectRequest,
  ReviewPage,
  ReviewSort,
  ReviewStatus
} from "../domain/InstitutionReview.ts"

import { Authorization, RequiredScope } from "./Authorization.ts"
import { BadRequest, Conflict, NotFound, ServiceUnavailable, TooManyRequests } from "./problems.ts"
import { pageQueryFields } from "./resources.ts"

// The review's shapes are the model's (`domain/InstitutionReview.ts`), so the core uses them without the contract.
export { ApproveRequest, InstitutionReview, RejectRequest, ReviewPage, ReviewSort }

export const ReviewQuery = Schema.Struct({
  /** Absent: `pending`. */
  status: Schema.optionalKey(ReviewStatus),
  /** `count` (most refusals first, the default), `score` (most likely first) or `recent` (last seen first). */
  sort: Schema.optionalKey(ReviewSort),
  ...pageQueryFields(100)
})
export type ReviewQuery = typeof ReviewQuery.Type

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
