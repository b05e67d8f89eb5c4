/**
 * A small RFC 4180 CSV reader for user datasets: quoted fields, doubled
 * quotes, CRLF or LF line ends. Each row carries its 1-based line number so
 * errors can point at it.
 */
export interface CsvRow {
  readonly line: number
  readonly fields: ReadonlyArray<string>
}

export class CsvSyntaxError extends Error {
  override readonly name = "CsvSyntaxError"
  readonly line: number
  constructor(line: number, message: string) {
    super(message)
    this.line = line
  }
}

export const parseCsv = (text: string): Array<CsvRow> => {
  const rows: Array<CsvRow> = []
  let fields: Array<string> = []
  let field = ""
  let line = 1
  let rowLine = 1
  let quoted = false
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  const endRow = () => {
    fields.push(field)
    if (!(fields.length === 1 && fields[0] === "")) rows.push({ line: rowLine, fields })
    fields = []
    field = ""
  }
  for (; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i++
        } else quoted = false
      } else {
        if (c === "\n") line++
        field += c
      }
    } else if (c === '"') {
      if (field !== "") throw new CsvSyntaxError(line, 'a quote may only start a field: write "" inside a quoted field')
      quoted = true
    } else if (c === ",") {
      fields.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      endRow()
      line++
      rowLine = line
    } else field += c
  }
  if (quoted) throw new CsvSyntaxError(rowLine, "a quoted field is not closed")
  endRow()
  return rows
}
