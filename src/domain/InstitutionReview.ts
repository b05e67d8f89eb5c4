/**
 * Domains no source lists, seen in a team's traffic: how likely each is an
 * institution (`Candidate`, computed from the domain alone), how often it
 * was refused as unknown, and what an operator decided about it. An
 * approval is a reviewed institution: it applies to the approving team's
 * targets and is written as a dataset entry, reviewed in git like any
 * other change. Only domains are kept, never an address.
 */
import * as Schema from "effect/Schema"
import { Count } from "./Count.ts"
import { CountryCode } from "./Country.ts"
import { TeamId } from "./Identifiers.ts"
import { HostRole, InstitutionType } from "./Institution.ts"
import { ReasonCode } from "./ReasonCode.ts"
import { RegionCode } from "./Region.ts"
import { DomainName } from "./TargetGroup.ts"

/** One thing the domain shows that speaks for or against an institution, and by how much (log-odds). */
export const CandidateSignal = Schema.Struct({
  /** The family: `academic-word`, `zone`, `tld`, `known-name`, `acronym`, `shape`, `commercial-word`. */
  signal: Schema.String,
  /** What was seen, in words: `label "hochschule" (a college word)`. */
  detail: Schema.String,
  /** The signal's contribution to the score's log-odds; negative speaks against. */
  weight: Schema.Finite
})
export type CandidateSignal = typeof CandidateSignal.Type

/** How likely an unknown domain is an academic institution: a score from 0 to 1 with the signals behind it. */
export const Candidate = Schema.Struct({
  /** The registrable domain judged (`hfmt-hamburg.de` for `mail.hfmt-hamburg.de`). */
  domain: Schema.String,
  score: Schema.Finite,
  signals: Schema.Array(CandidateSignal)
}).annotate({ identifier: "Candidate" })
export type Candidate = typeof Candidate.Type

export const ReviewStatus = Schema.Literals(["pending", "approved", "rejected"])
export type ReviewStatus = typeof ReviewStatus.Type

/** An operator's approval: the institution a domain belongs to, for one team. */
export const ReviewedInstitution = Schema.Struct({
  domain: DomainName,
  team: TeamId,
  name: Schema.NonEmptyString,
  type: InstitutionType,
  country: Schema.NullOr(CountryCode),
  region: Schema.NullOr(RegionCode),
  /** Whom the domain serves when it serves one role only (`students.x.edu`). */
  role: Schema.optionalKey(HostRole),
  /** The API key that approved it. */
  approvedBy: Schema.String,
  /** ISO 8601. */
  approvedAt: Schema.String
}).annotate({ identifier: "ReviewedInstitution" })
export type ReviewedInstitution = typeof ReviewedInstitution.Type

/** An operator's rejection, remembered so the domain is not asked about again. */
export const ReviewRejection = Schema.Struct({
  domain: DomainName,
  team: TeamId,
  reason: Schema.String,
  rejectedBy: Schema.String,
  rejectedAt: Schema.String
}).annotate({ identifier: "ReviewRejection" })
export type ReviewRejection = typeof ReviewRejection.Type

export const ReviewSort = Schema.Literals(["count", "score", "recent"])
export type ReviewSort = typeof ReviewSort.Type

/** How a list of reviews is asked for: the query of `GET /institution-reviews`, decoded. */
export interface ReviewListing {
  /** Absent: `pending`. */
  readonly status?: ReviewStatus | undefined
  readonly sort?: ReviewSort | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

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
