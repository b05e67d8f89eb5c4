/**
 * A streaming CSV reader after RFC 4180: fields separated by `,` (or the
 * delimiter given: `;` and tab are common in spreadsheet exports), records by
 * `\n` or `\r\n`; a field in double quotes may hold commas, line breaks and
 * quotes doubled (`""`). Text arrives in chunks cut anywhere (inside a quoted
 * field, between `\r` and `\n`): the reader keeps its state between chunks.
 *
 * Lenient where RFC 4180 is strict, so one odd row never fails a whole upload:
 * a quote inside an unquoted field is kept as text, text after a closing quote
 * is appended to the field, and a `\r` outside quotes is dropped. Empty lines
 * are skipped. `end()` reports whether the input ended inside a quoted field.
 */

const QUOTE = 34
const COMMA = 44
const SEMICOLON = 59
const TAB = 9

/** The delimiters a CSV body may use, by the name the API takes. */
export const CSV_DELIMITERS = { comma: COMMA, semicolon: SEMICOLON, tab: TAB } as const
export type CsvDelimiter = keyof typeof CSV_DELIMITERS

/**
 * The delimiter a header line uses: the one of `,`, `;` and tab that occurs
 * most often outside quotes (a comma on a tie, or when there is none).
 */
export const detectDelimiter = (headerLine: string): CsvDelimiter => {
  const counts = { comma: 0, semicolon: 0, tab: 0 }
  let quoted = false
  for (let i = 0; i < headerLine.length; i++) {
    const code = headerLine.charCodeAt(i)
    if (code === QUOTE) quoted = !quoted
    else if (!quoted && code === COMMA) counts.comma++
    else if (!quoted && code === SEMICOLON) counts.semicolon++
    else if (!quoted && code === TAB) counts.tab++
  }
  if (counts.semicolon > counts.comma && counts.semicolon >= counts.tab) return "semicolon"
  if (counts.tab > counts.comma && counts.tab > counts.semicolon) return "tab"
  return "comma"
}
const LF = 10
const CR = 13

const State = {
  FieldStart: 0,
  Unquoted: 1,
  Quoted: 2,
  /** Inside a quoted field, just after a `"`: a doubled quote or the closing one. */
  QuoteInQuoted: 3
} as const
type State = (typeof State)[keyof typeof State]

export class CsvReader {
  private state: State = State.FieldStart
  private field = ""
  private record: Array<string> = []

  /**
   * `onRecord` gets each non-empty record's fields (`unterminated`: the input ended inside its quoted field);
   * `stop` ends reading early (checked after each record).
   */
  private readonly onRecord: (fields: Array<string>, unterminated: boolean) => void
  private readonly stop: () => boolean
  private readonly delimiter: number

  constructor(
    onRecord: (fields: Array<string>, unterminated: boolean) => void,
    stop: () => boolean,
    delimiter: CsvDelimiter = "comma"
  ) {
    this.onRecord = onRecord
    this.stop = stop
    this.delimiter = CSV_DELIMITERS[delimiter]
  }

  push(text: string): void {
    let start = 0
    const length = text.length
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i)
      if (this.state === State.Quoted) {
        if (code === QUOTE) {
          this.field += text.slice(start, i)
          this.state = State.QuoteInQuoted
          start = i + 1
        }
        continue
      }
      if (this.state === State.QuoteInQuoted) {
        if (code === QUOTE) {
          this.field += '"'
          this.state = State.Quoted
          start = i + 1
          continue
        }
        this.state = State.Unquoted
      }
      if (code === this.delimiter) {
        this.record.push(this.field + text.slice(start, i))
        this.field = ""
        this.state = State.FieldStart
        start = i + 1
      } else if (code === LF) {
        this.record.push(this.field + text.slice(start, i))
        this.field = ""
        this.state = State.FieldStart
        start = i + 1
        this.endRecord()
        if (this.stop()) return
      } else if (code === CR) {
        this.field += text.slice(start, i)
        start = i + 1
      } else if (code === QUOTE && this.state === State.FieldStart) {
        this.state = State.Quoted
        start = i + 1
      } else {
        this.state = State.Unquoted
      }
    }
    this.field += text.slice(start)
  }

  /** Ends the input: the last record needs no line break. */
  end(): void {
    if (this.field === "" && this.record.length === 0 && this.state === State.FieldStart) return
    const unterminated = this.state === State.Quoted
    this.record.push(this.field)
    this.field = ""
    this.state = State.FieldStart
    this.endRecord(unterminated)
  }

  private endRecord(unterminated = false): void {
    const record = this.record
    this.record = []
    if (record.length === 1 && record[0] === "" && !unterminated) return
    this.onRecord(record, unterminated)
  }
}
