/**
 * A validation result explained for people (issue 17, "try an email"): one
 * entry per criterion — whether it passed, failed or does not apply, in a
 * sentence — and what Campusgate knows of the host whatever the target
 * group asks: the institution found, or the organisation that is not one.
 * `POST /validate/target-group` answers it beside the result with
 * `explain: true`, and the library's `validate` with `{ explain: true }`
 * (both through `app/Validation.ts` `explainTargetGroup`); the result
 * itself is unchanged.
 */
import * as Schema from "effect/Schema"
import { HostRole, MatchRule } from "./Institution.ts"
import { institutionIdentityFields, NonInstitutionSummary, ValidationResult } from "./ValidationResult.ts"

/** The criteria, in the order of `validationDetails` (`organisationType` spelt as the console names it). */
export const ExplainedCriterion = Schema.Literals([
  "format",
  "domain",
  "geography",
  "organisationType",
  "customList",
  "emailPolicy"
])
export type ExplainedCriterion = typeof ExplainedCriterion.Type

export const CriterionExplanation = Schema.Struct({
  criterion: ExplainedCriterion,
  /** `not-applicable`: the target group does not use the criterion, or an earlier one decided. */
  outcome: Schema.Literals(["pass", "fail", "not-applicable"]),
  /** One sentence for people; may change (branch on `outcome` and the result's `reasonCode`). */
  detail: Schema.String
})
export type CriterionExplanation = typeof CriterionExplanation.Type

/** The institution the host belongs to, as `campusgate inspect` finds it. */
export const InstitutionFound = Schema.Struct({
  ...institutionIdentityFields,
  type: Schema.String,
  matchedDomain: Schema.String,
  rule: MatchRule,
  role: HostRole,
  ror: Schema.NullOr(Schema.String)
})
export type InstitutionFound = typeof InstitutionFound.Type

export const Explanation = Schema.Struct({
  criteria: Schema.Array(CriterionExplanation),
  /** Null when the host is no institution Campusgate knows (or the address is not valid). */
  institution: Schema.NullOr(InstitutionFound),
  /** The organisation the host belongs to when it is not an educational institution. */
  organization: Schema.NullOr(NonInstitutionSummary)
})
export type Explanation = typeof Explanation.Type

/** A result with its explanation beside it: what `explain: true` answers, in the library and over HTTP. */
export const ExplainedValidationResult = Schema.Struct({ ...ValidationResult.fields, explanation: Explanation })
export type ExplainedValidationResult = typeof ExplainedValidationResult.Type
