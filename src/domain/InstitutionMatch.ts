/**
 * What a host resolves to: the institution, how it matched (a listed domain
 * or an academic zone, with the zone's registry policy), and whom the host
 * serves. Answered by `GET /api/v1/institutions/{domain}` and the library's
 * `institutionOf`.
 */
import * as Schema from "effect/Schema"
import { Evidence, HostRole, MatchRule } from "./Institution.ts"
import { InstitutionSummary } from "./ValidationResult.ts"

export const ZonePolicySummary = Schema.Struct({
  suffix: Schema.String,
  /** Who may register under the zone. */
  policy: Schema.String,
  /** Where that policy is published. */
  reference: Schema.String
})

export const InstitutionMatch = Schema.Struct({
  /** The host asked about, in its ASCII form. */
  domain: Schema.String,
  /** The listed domain, or the registrable domain under an academic zone. */
  matchedDomain: Schema.String,
  rule: MatchRule,
  role: HostRole,
  roleEvidence: Evidence,
  institution: InstitutionSummary,
  /** Every domain of a listed institution (none under a zone). */
  domains: Schema.Array(Schema.String),
  /** Other names, labels in other languages and acronyms. */
  names: Schema.Array(Schema.String),
  ror: Schema.NullOr(Schema.String),
  zone: Schema.NullOr(ZonePolicySummary)
}).annotate({ identifier: "InstitutionMatch" })
export type InstitutionMatch = typeof InstitutionMatch.Type
