/**
 * One email's verdict in a batch: the compact form of a validation result
 * that bulk answers and job results use. It keeps what a batch consumer acts
 * on and what explains the verdict (the reason, the matched domain and
 * institution) and leaves out the per-criterion `validationDetails`, which
 * repeat from email to email; a caller who needs them asks for full results
 * (`details: true` on `validate/bulk`) or validates that email alone.
 *
 * In a job's results a row also says which earlier row it repeats
 * (`duplicateOf`, the 1-based row number of the first with the same
 * canonical address) and carries the input's other columns (`columns`, by
 * name, in input order), so a result can be joined back to what was sent.
 *
 * A row's text, written fast since batches of a million rows go to disk and
 * to the wire: `rowText` (the JSON, as `JSON.stringify` writes it) in
 * `rowText.ts`, `rowCsv` (a CSV line) in `rowCsv.ts`, both exported here.
 */
import * as Schema from "effect/Schema"
import { ReasonCode } from "./ReasonCode.ts"
import type { DomainDetail, OfferValidationResult, ValidationResult } from "./ValidationResult.ts"

export const RowInstitution = Schema.Struct({
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String)
})
export type RowInstitution = typeof RowInstitution.Type

export const ResultRow = Schema.Struct({
  /** The input as given (not normalised). */
  email: Schema.String,
  isValid: Schema.Boolean,
  /** For offers: the target groups the email matched. */
  matchedTargetGroups: Schema.optionalKey(Schema.Array(Schema.String)),
  matchedDomain: Schema.optionalKey(Schema.String),
  institution: Schema.optionalKey(RowInstitution),
  reasonCode: Schema.optionalKey(ReasonCode),
  reason: Schema.optionalKey(Schema.String),
  /** In a job: the 1-based row number of the earlier row with the same canonical address. */
  duplicateOf: Schema.optionalKey(Schema.Int),
  /** In a job: the input's other columns (CSV cells, or an NDJSON object's other fields), by name. */
  columns: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type ResultRow = typeof ResultRow.Type

/** The columns of a CSV download of rows, in order. */
export const ROW_CSV_COLUMNS = [
  "email",
  "isValid",
  "reasonCode",
  "reason",
  "matchedDomain",
  "institutionId",
  "institutionName",
  "country",
  "matchedTargetGroups",
  "duplicateOf"
] as const

const institutions = new WeakMap<object, RowInstitution>()

/** The row's institution, one frozen object per institution summary (rows of one domain share it). */
const rowInstitution = (domain: DomainDetail): RowInstitution | undefined => {
  const summary = domain.institution
  if (summary === undefined) return undefined
  let row = institutions.get(summary)
  if (row === undefined) {
    row = Object.freeze({ id: summary.id, name: summary.name, country: summary.country })
    institutions.set(summary, row)
  }
  return row
}

const withVerdict = (
  row: { -readonly [K in keyof ResultRow]: ResultRow[K] },
  domain: DomainDetail | undefined,
  matchedDomain: string | undefined,
  source: { readonly reasonCode?: ReasonCode | undefined; readonly reason?: string | undefined }
): ResultRow => {
  if (matchedDomain !== undefined) row.matchedDomain = matchedDomain
  const institution = domain === undefined ? undefined : rowInstitution(domain)
  if (institution !== undefined) row.institution = institution
  if (source.reasonCode !== undefined) row.reasonCode = source.reasonCode
  if (source.reason !== undefined) row.reason = source.reason
  return row
}

/** The row of a target-group result; `email` is the input as given. */
export const toResultRow = (email: string, result: ValidationResult): ResultRow =>
  withVerdict({ email, isValid: result.isValid }, result.validationDetails.domain, result.matchedDomain, result)

/** The row of an offer result: the domain facts come from the first matched target group's result (else the first). */
export const toOfferResultRow = (email: string, result: OfferValidationResult): ResultRow => {
  const first = result.matchedTargetGroups[0]
  const source =
    (first === undefined ? undefined : result.results.find((r) => r.targetGroup.id === first)) ?? result.results[0]
  return withVerdict(
    { email, isValid: result.isValid, matchedTargetGroups: result.matchedTargetGroups },
    source?.validationDetails.domain,
    source?.matchedDomain,
    result
  )
}

export { rowCsv } from "./rowCsv.ts"
export { duplicateOfText, rowText, rowTextAfterDuplicate, rowTextBeforeDuplicate } from "./rowText.ts"
