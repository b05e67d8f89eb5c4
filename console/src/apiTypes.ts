/**
 * The shapes the console reads and sends, as JSON: the encoded side of the
 * HTTP contract's own schemas (`src/api/`), imported as types only, so the
 * bundle carries none of the server's code and a change to the contract
 * that the console does not follow fails the typecheck.
 */
import type {
  ApproveRequest,
  InstitutionReview as InstitutionReviewResource,
  RejectRequest,
  ReviewPage,
  ReviewSort
} from "../../src/api/institutionReviews.ts"
import type { JobAccepted, JobsPage } from "../../src/api/jobs.ts"
import type { OfferResource, OfferStatusResponse } from "../../src/api/offers.ts"
import type { DaemonStatus } from "../../src/api/status.ts"
import type { TargetGroupResource } from "../../src/api/targetGroups.ts"
import type { ExplainedValidationResponse } from "../../src/api/validation.ts"
import type { JobView } from "../../src/domain/Job.ts"
import type { EffectiveOfferStatus, OfferStatus } from "../../src/domain/Offer.ts"

export type Offer = typeof OfferResource.Encoded
export type OfferStatusAnswer = typeof OfferStatusResponse.Encoded
export type OfferUsage = OfferStatusAnswer["usage"]
export type TargetGroup = typeof TargetGroupResource.Encoded
export type Criteria = TargetGroup["criteria"]
/** `validate/target-group`'s answer, with `explanation` when asked with `explain: true`. */
export type Validation = typeof ExplainedValidationResponse.Encoded
export type Explanation = NonNullable<Validation["explanation"]>
export type Job = typeof JobView.Encoded
export type JobList = typeof JobsPage.Encoded
export type JobStarted = typeof JobAccepted.Encoded
export type Status = typeof DaemonStatus.Encoded
export type { EffectiveOfferStatus, OfferStatus }
/** A domain of the review queue, with its evidence and the decision once made. */
export type InstitutionReview = typeof InstitutionReviewResource.Encoded
export type ReviewList = typeof ReviewPage.Encoded
export type ReviewStatus = InstitutionReview["status"]
export type { ReviewSort }
export type CandidateSignal = InstitutionReview["candidate"]["signals"][number]
export type Approval = typeof ApproveRequest.Encoded
export type Rejection = typeof RejectRequest.Encoded
export type InstitutionType = Approval["type"]
export type HostRole = NonNullable<Approval["role"]>

/** A page of a list endpoint. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** What `POST` and `GET /console/session` answer: all the browser keeps of a sign-in, in memory. */
export interface Session {
  readonly team: string
  readonly scopes: ReadonlyArray<string>
  readonly keyId: string
  readonly expiresAt: string
  readonly csrfToken: string
}

/** An RFC 9457 problem as the daemon answers it. */
export interface Problem {
  readonly type?: string
  readonly title?: string
  readonly status?: number
  readonly detail?: string
  readonly code?: string
  readonly requestId?: string
  readonly errors?: ReadonlyArray<{ readonly field?: string; readonly message?: string }>
}
