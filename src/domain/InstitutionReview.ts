/**
 * Domains no source lists, seen in a team's traffic: how likely each is an
 * institution (`Candidate`, computed from the domain alone), how often it
 * was refused as unknown, and what an operator decided about it. An
 * approval is a reviewed institution: it applies to the approving team's
 * targets and is written as a dataset entry, reviewed in git like any
 * other change. Only domains are kept, never an address.
 */
import * as Schema from "effect/Schema"
import { CountryCode } from "./Country.ts"
import { TeamId } from "./Identifiers.ts"
import { HostRole, InstitutionType } from "./Institution.ts"
import { RegionCode } from "./Region.ts"
import { DomainName } from "./TargetGroup.ts"

/** One thing the domain shows that speaks for or against an institution, and by how much (log-odds). */
export const CandidateSignal = Schema.Struct({
  /** The family: `academic-word`, `zone`, `tld`, `known-name`, `acronym`, `shape`, `commercial-word`. */
  signal: Schema.String,
  /** What was seen, in words: `label "hochschule" (a college word)`. */
  detail: Schema.String,
  /** The signal's contribution to the score's log-odds; negative speaks against. */
  weight: Schema.Number
})
export type CandidateSignal = typeof CandidateSignal.Type

/** How likely an unknown domain is an academic institution: a score from 0 to 1 with the signals behind it. */
export const Candidate = Schema.Struct({
  /** The registrable domain judged (`hfmt-hamburg.de` for `mail.hfmt-hamburg.de`). */
  domain: Schema.String,
  score: Schema.Number,
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
