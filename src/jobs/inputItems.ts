/**
 * The lines of `input.ndjson`, one per input item in input order: a JSON
 * string (the email exactly as given) or `{"bad": <raw text, at most 1000
 * characters>, "reason": <why>}` for an item that cannot be read as an email.
 * An unreadable item is a row of its own, never a whole-request failure.
 * An item with other columns (CSV cells besides the email, an NDJSON
 * object's other fields) is `{"email": ..., "columns": [...]}` (or a bad
 * item with `"columns"`): the values in the order of `columns`, the input's
 * column names in first-seen order, which results carry by name. At most
 * `MAX_INPUT_COLUMNS` names; more fail the upload (`columnsOverLimit`).
 *
 * Plain synchronous code, no Effect per item: a million NDJSON lines are read
 * and written in well under a second (`bench/jobIo.ts`).
 */

/** Longer emails are bad items (the same bound as `validate/bulk`). */
export const MAX_EMAIL_LENGTH = 1024
/** At most this much of a bad item's raw text is kept. */
export const MAX_BAD_TEXT = 1000
/** An input may have at most this many columns besides the email. */
export const MAX_INPUT_COLUMNS = 100

/** The pending `input.ndjson` output and the counts so far. */
export class InputItems {
  total = 0
  badInput = 0
  readonly maxEmails: number
  /** The input's column names besides the email, in first-seen order. */
  readonly columns: Array<string> = []
  /** More than `MAX_INPUT_COLUMNS` names were seen: the caller stops reading. */
  columnsOverLimit = false
  private readonly columnIndexes = new Map<string, number>()
  private parts: Array<Uint8Array> = []
  /** Lines written as bytes: `segment[from..used)` is pending, what comes before was taken into `parts`. */
  private segment: Buffer = Buffer.alloc(0)
  private from = 0
  private used = 0
  private size = 0

  constructor(maxEmails: number) {
    this.maxEmails = maxEmails
  }

  /** More items than `maxEmails` were seen: the caller stops reading. */
  get overLimit(): boolean {
    return this.total > this.maxEmails
  }

  /** How many bytes are pending. */
  get pendingSize(): number {
    return this.size + this.used - this.from
  }

  /** Adds an item whose JSON string text is `json` (already `JSON.stringify(email)`). */
  emailJson(json: string): void {
    this.total++
    this.line(json)
  }

  /** Adds `count` items already in output form: input lines copied as they are, each ending in `\n`. */
  verbatim(lines: Uint8Array, count: number): void {
    this.total += count
    this.endText()
    this.parts.push(lines)
    this.size += lines.length
  }

  /** The position of column `name`, added when new; undefined once there are too many. */
  columnIndex(name: string): number | undefined {
    let index = this.columnIndexes.get(name)
    if (index === undefined) {
      if (this.columns.length >= MAX_INPUT_COLUMNS) {
        this.columnsOverLimit = true
        return undefined
      }
      index = this.columns.length
      this.columns.push(name)
      this.columnIndexes.set(name, index)
    }
    return index
  }

  /** Adds an email; `columns`: its other columns' values by position (none: a plain line). */
  email(email: string, columns?: ReadonlyArray<unknown>): void {
    if (email.length > MAX_EMAIL_LENGTH) this.bad(email, `longer than ${MAX_EMAIL_LENGTH} characters`, columns)
    else if (columns === undefined || columns.length === 0) this.emailJson(JSON.stringify(email))
    else {
      this.total++
      this.line(JSON.stringify({ email, columns }))
    }
  }

  bad(raw: string, reason: string, columns?: ReadonlyArray<unknown>): void {
    this.total++
    this.badInput++
    const line =
      columns === undefined || columns.length === 0 ? { bad: clip(raw), reason } : { bad: clip(raw), reason, columns }
    this.line(JSON.stringify(line))
  }

  /**
   * The pending output in parts, in order, which are then dropped: written
   * as they are (`JobBytes.writeParts`), not copied together first into a
   * new 1 MB buffer a flush (measured, `npm run bench:jobs:io`: a 1M-item
   * NDJSON upload 0.59-0.74x as long, CSV 0.61-0.66x, in three alternating
   * rounds).
   */
  take(): ReadonlyArray<Uint8Array> {
    this.endText()
    const parts = this.parts
    this.parts = []
    this.size = 0
    return parts
  }

  /**
   * Writes `text` and a line break as UTF-8 into the current segment, a new
   * one when it has no room. Lines were once joined into a string, which
   * writing then had to flatten: a third of a CSV upload's time, and a
   * quarter in collections (CPU profile of a million rows).
   */
  private line(text: string): void {
    const room = text.length * 3 + 1
    if (this.used + room > this.segment.length) {
      this.endText()
      // Small at first (an upload of a few rows holds little), doubling up to the flush size.
      const size = Math.min(SEGMENT_BYTES, Math.max(FIRST_SEGMENT_BYTES, this.segment.length * 2))
      this.segment = Buffer.allocUnsafe(Math.max(size, room))
      this.from = 0
      this.used = 0
    }
    this.used += this.segment.write(text, this.used)
    this.segment[this.used++] = LF
  }

  /** The pending lines of the segment, into `parts` (the segment goes on after them). */
  private endText(): void {
    if (this.used === this.from) return
    const bytes = this.segment.subarray(this.from, this.used)
    this.parts.push(bytes)
    this.size += bytes.length
    this.from = this.used
  }
}

/** Bytes a segment of lines has room for at first, and at most, unless a line needs more. */
const FIRST_SEGMENT_BYTES = 1 << 16
const SEGMENT_BYTES = 1 << 20
const LF = 10

const clip = (raw: string): string => {
  if (raw.length <= MAX_BAD_TEXT) return raw
  const code = raw.charCodeAt(MAX_BAD_TEXT - 1)
  // Do not cut a surrogate pair in half.
  return raw.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_BAD_TEXT - 1 : MAX_BAD_TEXT)
}

const notEmailShape = "expected a JSON string or an object with a string email"

/** An object's fields besides `email` as column values by position (missing ones null); none: undefined. */
const objectColumns = (items: InputItems, object: Record<string, unknown>): Array<unknown> | undefined => {
  let values: Array<unknown> | undefined
  for (const key in object) {
    if (key === "email") continue
    const index = items.columnIndex(key)
    if (index === undefined) return values
    values ??= []
    while (values.length < index) values.push(null)
    values[index] = object[key]
  }
  return values
}

/** A JSON value as an item: a string, or an object with a string `email` (its other fields are columns); `raw` is its text for a bad item. */
export const addValue = (items: InputItems, value: unknown, raw: () => string): void => {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>
    const columns = objectColumns(items, object)
    if (typeof object.email === "string") items.email(object.email, columns)
    else items.bad(raw(), notEmailShape, columns)
    return
  }
  if (typeof value === "string") items.email(value)
  else items.bad(raw(), notEmailShape)
}

/** One NDJSON line as text (without its `\n`); blank lines are not items. */
export const addNdjsonLine = (items: InputItems, text: string): void => {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text
  if (line.trim() === "") return
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    items.bad(line, "not valid JSON")
    return
  }
  addValue(items, value, () => line)
}
