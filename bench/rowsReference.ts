/**
 * The result row as `src/domain/ResultRow.ts` and `src/server/jsonBytes.ts`
 * made and wrote it before issue 16: the row built member by member, its
 * JSON with `JSON.stringify` for every string and list and template
 * literals, the CSV line as an array mapped and joined, the answer encoded
 * piece by piece with `Buffer.write`. Kept as the reference `npm run
 * bench:rows` measures against, and that test/domain/rowCsv.test.ts and
 * test/domain/ResultRow.test.ts hold the new code equal to; not in src.
 */
import type { ReasonCode } from "../src/domain/ReasonCode.ts"
import type { ResultRow, RowInstitution } from "../src/domain/ResultRow.ts"
import type { DomainDetail, OfferValidationResult, ValidationResult } from "../src/domain/ValidationResult.ts"

const institutions = new WeakMap<object, RowInstitution>()

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

export const toResultRow = (email: string, result: ValidationResult): ResultRow =>
  withVerdict({ email, isValid: result.isValid }, result.validationDetails.domain, result.matchedDomain, result)

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

export const duplicateOfText = (row: number): string => `,"duplicateOf":${row}`

export const rowTextAfterDuplicate = (row: ResultRow): string =>
  row.columns === undefined ? "}" : `,"columns":${JSON.stringify(row.columns)}}`

export const rowText = (row: ResultRow, withReason = true): string =>
  rowTextBeforeDuplicate(row, withReason) +
  (row.duplicateOf === undefined ? "" : duplicateOfText(row.duplicateOf)) +
  rowTextAfterDuplicate(row)

const csvField = (value: string): string =>
  /[",\r\n]/.test(value) || value.startsWith(" ") || value.endsWith(" ") ? `"${value.replaceAll('"', '""')}"` : value

const safeCell = (value: string): string => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value)

const cellText = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value)

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

const MAX_BYTES_PER_UNIT = 3

export class JsonBytes {
  private buffer: Buffer
  private length = 0

  constructor(estimate: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(64, estimate))
  }

  write(text: string): void {
    const room = text.length * MAX_BYTES_PER_UNIT
    if (this.length + room > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + room))
      this.buffer.copy(grown, 0, 0, this.length)
      this.buffer = grown
    }
    this.length += this.buffer.write(text, this.length)
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length)
  }
}
