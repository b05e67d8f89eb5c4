/**
 * A result row as one CSV line (RFC 4180, no line break), the columns of
 * `ROW_CSV_COLUMNS` then the input's: what a job's CSV download streams, a
 * line per row. Written cell by cell into one string (no list of cells, no
 * join), since a download is a million lines; test/domain/rowCsv.test.ts
 * holds it byte-equal to the rule it replaced (`bench/rowsReference.ts`),
 * `npm run bench:rows` measures it.
 */
import type { ResultRow } from "./ResultRow.ts"

/** Cells with these are quoted (as are cells that start or end with a space). */
const NEEDS_QUOTES = /[",\r\n]/

const SPACE = 32
/** `=`, `+`, `-`, `@`, tab, carriage return: a cell starting with one is a formula to a spreadsheet. */
const startsFormula = (code: number): boolean =>
  code === 61 || code === 43 || code === 45 || code === 64 || code === 9 || code === 13

/**
 * One cell: a field that starts like a formula is prefixed with `'` (a guard
 * against spreadsheet formula injection), then quoted if it holds a quote, a
 * comma or a line break, or starts or ends with a space.
 */
const cell = (value: string): string => {
  if (value.length === 0) return value
  const text = startsFormula(value.charCodeAt(0)) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) || text.charCodeAt(0) === SPACE || text.charCodeAt(text.length - 1) === SPACE
    ? `"${text.replaceAll('"', '""')}"`
    : text
}

/** An input cell as CSV text: a string as it is, a missing value empty, anything else as JSON. */
const cellText = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value)

const groupsCell = (ids: ReadonlyArray<string> | undefined): string => {
  if (ids === undefined || ids.length === 0) return ""
  let text = ids[0]!
  for (let i = 1; i < ids.length; i++) text += ` ${ids[i]!}`
  return cell(text)
}

/** One CSV line (RFC 4180, no line break) in `ROW_CSV_COLUMNS` order, then the input's `inputColumns`. */
export const rowCsv = (row: ResultRow, inputColumns: ReadonlyArray<string> = []): string => {
  const institution = row.institution
  let line = `${cell(row.email)},${row.isValid ? "true" : "false"},${cell(row.reasonCode ?? "")},${cell(row.reason ?? "")},${cell(row.matchedDomain ?? "")}`
  line +=
    institution === undefined
      ? ",,,"
      : `,${cell(institution.id ?? "")},${cell(institution.name ?? "")},${cell(institution.country ?? "")}`
  line += `,${groupsCell(row.matchedTargetGroups)},${row.duplicateOf === undefined ? "" : cell(String(row.duplicateOf))}`
  const columns = row.columns
  for (let i = 0; i < inputColumns.length; i++) {
    const name = inputColumns[i]!
    // Own members only: a column the row lacks is empty, even one named `toString` (not Object.prototype's).
    line += `,${columns !== undefined && Object.hasOwn(columns, name) ? cell(cellText(columns[name])) : ""}`
  }
  return line
}
