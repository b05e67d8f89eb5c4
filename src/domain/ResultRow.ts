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
 * `rowText` writes the same JSON as `JSON.stringify(row)`, fast: batches of
 * a million rows are written to disk and to the wire.
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

const institutionTexts = new WeakMap<RowInstitution, string>()

const optional = (key: string, value: string | undefined): string =>
  value === undefined ? "" : `,"${key}":${JSON.stringify(value)}`

/**
 * `rowText` up to where `duplicateOf` goes (no closing brace): a job's rows
 * are encoded on worker threads before the job knows which repeat an earlier
 * row, and `duplicateOf` is put in between when the rows are appended.
 * Without `reason` when `withReason` is false.
 */
export const rowTextBeforeDuplicate = (row: ResultRow, withReason = true): string => {
  let text = `{"email":${JSON.stringify(row.email)},"isValid":${row.isValid}`
  if (row.matchedTargetGroups !== undefined) text += `,"matchedTargetGroups":${JSON.stringify(row.matchedTargetGroups)}`
  text += optional("matchedDomain", row.matchedDomain)
  if (row.institution !== undefined) {
    let institution = institutionTexts.get(row.institution)
    if (institution === undefined) {
      institution = JSON.stringify(row.institution)
      if (Object.isFrozen(row.institution)) institutionTexts.set(row.institution, institution)
    }
    text += `,"institution":${institution}`
  }
  return `${text}${optional("reasonCode", row.reasonCode)}${withReason ? optional("reason", row.reason) : ""}`
}

/** The `duplicateOf` member of `rowText`, with its leading comma. */
export const duplicateOfText = (row: number): string => `,"duplicateOf":${row}`

/** `rowText` after `duplicateOf`: the input's columns and the closing brace. */
export const rowTextAfterDuplicate = (row: ResultRow): string =>
  row.columns === undefined ? "}" : `,"columns":${JSON.stringify(row.columns)}}`

/** `JSON.stringify(row)`, with each institution's JSON written once; without `reason` when `withReason` is false. */
export const rowText = (row: ResultRow, withReason = true): string =>
  rowTextBeforeDuplicate(row, withReason) +
  (row.duplicateOf === undefined ? "" : duplicateOfText(row.duplicateOf)) +
  rowTextAfterDuplicate(row)

const csvField = (value: string): string =>
  /[",\r\n]/.test(value) || value.startsWith(" ") || value.endsWith(" ") ? `"${value.replaceAll('"', '""')}"` : value

/** A guard against spreadsheet formula injection: a field that starts like a formula is prefixed with `'`. */
const safeCell = (value: string): string => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value)

/** An input cell as CSV text: a string as it is, a missing value empty, anything else as JSON. */
const cellText = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value)

/** One CSV line (RFC 4180, no line break) in `ROW_CSV_COLUMNS` order, then the input's `inputColumns`. */
export const rowCsv = (row: ResultRow, inputColumns: ReadonlyArray<string> = []): string =>
  [
    row.email,
    String(row.isValid),
    row.reasonCode ?? "",
    row.reason ?? "",
    row.matchedDomain ?? "",
    row.institution?.id ?? "",
    row.institution?.name ?? "",
    row.institution?.country ?? "",
    (row.matchedTargetGroups ?? []).join(" "),
    row.duplicateOf === undefined ? "" : String(row.duplicateOf),
    ...inputColumns.map((name) => cellText(row.columns?.[name]))
  ]
    .map((value) => csvField(safeCell(value)))
    .join(",")
