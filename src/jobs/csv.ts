/**
 * A streaming CSV reader after RFC 4180: fields separated by `,`, records by
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

  constructor(onRecord: (fields: Array<string>, unterminated: boolean) => void, stop: () => boolean) {
    this.onRecord = onRecord
    this.stop = stop
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
      if (code === COMMA) {
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
