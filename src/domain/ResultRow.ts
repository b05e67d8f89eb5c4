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
 * to the wire, is in the modules that import this one: `rowText.ts` (the
 * JSON, as `JSON.stringify` writes it) and `rowCsv.ts` (a CSV line).
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

/**
 * A row's verdict: its members but the address and a job's `duplicateOf`
 * and `columns`. The rows of a job's emails of one host share one
 * (`SharedVerdict`, `app/rowVerdicts.ts`), whose text is written once.
 */
export type RowVerdict = Omit<ResultRow, "email" | "duplicateOf" | "columns">

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

type MutableRow = { -readonly [K in keyof ResultRow]: ResultRow[K] }

/**
 * A maker of rows: the members every row of its kind has (`Head`), then those
 * a row has only when defined, in the schema's order. Written as a type, so
 * the makers below take plain parameters (no rest array on the hot path).
 */
type RowMaker<Head extends ReadonlyArray<unknown>> = (
  ...members: [
    ...Head,
    matchedDomain: string | undefined,
    institution: RowInstitution | undefined,
    reasonCode: ReasonCode | undefined,
    reason: string | undefined
  ]
) => ResultRow

/** A row member by member, for sets of members `rowOf` has no literal for. */
const memberByMember: RowMaker<[row: MutableRow]> = (row, matchedDomain, institution, reasonCode, reason) => {
  if (matchedDomain !== undefined) row.matchedDomain = matchedDomain
  if (institution !== undefined) row.institution = institution
  if (reasonCode !== undefined) row.reasonCode = reasonCode
  if (reason !== undefined) row.reason = reason
  return row
}

type TargetGroupRowMaker = RowMaker<[email: string, isValid: boolean]>

/**
 * A target-group row, its members in the schema's order, each present only
 * when defined: one object literal for each usual set of members, so a row
 * is made whole at once (half the time of adding members one by one, with
 * their storage grown on the way; measured with `npm run bench:rows`).
 */
const rowOf: TargetGroupRowMaker = (email, isValid, matchedDomain, institution, reasonCode, reason) => {
  if (reasonCode === undefined && reason === undefined) {
    if (institution === undefined)
      return matchedDomain === undefined ? { email, isValid } : { email, isValid, matchedDomain }
    return matchedDomain === undefined
      ? { email, isValid, institution }
      : { email, isValid, matchedDomain, institution }
  }
  if (reasonCode !== undefined && reason !== undefined) {
    if (institution === undefined) {
      return matchedDomain === undefined
        ? { email, isValid, reasonCode, reason }
        : { email, isValid, matchedDomain, reasonCode, reason }
    }
    return matchedDomain === undefined
      ? { email, isValid, institution, reasonCode, reason }
      : { email, isValid, matchedDomain, institution, reasonCode, reason }
  }
  return memberByMember({ email, isValid }, matchedDomain, institution, reasonCode, reason)
}

/** `rowOf` for an offer's row, with the matched target groups. */
const offerRowOf: RowMaker<[email: string, isValid: boolean, matchedTargetGroups: ReadonlyArray<string>]> = (
  email,
  isValid,
  matchedTargetGroups,
  matchedDomain,
  institution,
  reasonCode,
  reason
) => {
  if (reasonCode === undefined && reason === undefined) {
    if (institution === undefined) {
      return matchedDomain === undefined
        ? { email, isValid, matchedTargetGroups }
        : { email, isValid, matchedTargetGroups, matchedDomain }
    }
    return matchedDomain === undefined
      ? { email, isValid, matchedTargetGroups, institution }
      : { email, isValid, matchedTargetGroups, matchedDomain, institution }
  }
  if (reasonCode !== undefined && reason !== undefined) {
    if (institution === undefined) {
      return matchedDomain === undefined
        ? { email, isValid, matchedTargetGroups, reasonCode, reason }
        : { email, isValid, matchedTargetGroups, matchedDomain, reasonCode, reason }
    }
    return matchedDomain === undefined
      ? { email, isValid, matchedTargetGroups, institution, reasonCode, reason }
      : { email, isValid, matchedTargetGroups, matchedDomain, institution, reasonCode, reason }
  }
  return memberByMember({ email, isValid, matchedTargetGroups }, matchedDomain, institution, reasonCode, reason)
}

/** The row of a target-group result; `email` is the input as given. */
export const toResultRow = (email: string, result: ValidationResult): ResultRow =>
  rowOf(
    email,
    result.isValid,
    result.matchedDomain,
    rowInstitution(result.validationDetails.domain),
    result.reasonCode,
    result.reason
  )

/** The row of an offer result: the domain facts come from the first matched target group's result (else the first). */
export const toOfferResultRow = (email: string, result: OfferValidationResult): ResultRow => {
  const { matchedTargetGroups, results } = result
  const first = matchedTargetGroups[0]
  let source = results[0]
  if (first !== undefined) {
    for (let i = 0; i < results.length; i++) {
      if (results[i]!.targetGroup.id === first) {
        source = results[i]
        break
      }
    }
  }
  return offerRowOf(
    email,
    result.isValid,
    matchedTargetGroups,
    source?.matchedDomain,
    source === undefined ? undefined : rowInstitution(source.validationDetails.domain),
    result.reasonCode,
    result.reason
  )
}
