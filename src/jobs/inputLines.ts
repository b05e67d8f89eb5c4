/**
 * A job's input: one line per input item, in input order — a JSON string
 * (the email exactly as given), `{"email": ..., "columns": [...]}` (an email
 * with the input's other columns, by position: `inputItems.ts`) or
 * `{"bad": "<raw text, at most 1000 chars>", "reason": "<why it is not an
 * email>"}` (with `columns` when it had some). Read in chunks from a byte
 * offset, so a job resumes exactly where its checkpoint says. A chunk ends
 * on a line boundary and reports the bytes it consumed; a line that is
 * neither a JSON string nor a `{bad, reason}` object is read as bad input
 * rather than stopping the job.
 *
 * The file is written by this program (`emailLine`, `badInputLine`), so the
 * common line — a JSON string without escapes — is read by decoding the
 * bytes between its quotes, not by `JSON.parse` (`decodeInputLines`).
 */
import type { JobBytes } from "./JobStore.ts"

/** Raw text kept for an input item that is not an email. */
export const MAX_BAD_INPUT_CHARS = 1000

/** An input item that could not be read as an email: its raw text (shortened) and why. */
export interface BadInput {
  readonly bad: string
  readonly reason: string
  readonly columns?: ReadonlyArray<unknown> | undefined
}

/** An email with the input's other columns, by position. */
export interface EmailWithColumns {
  readonly email: string
  readonly columns: ReadonlyArray<unknown>
}

export type InputItem = string | EmailWithColumns | BadInput

/** The email of an item that is one; undefined for bad input. */
export const emailOf = (item: InputItem): string | undefined =>
  typeof item === "string" ? item : "email" in item ? item.email : undefined

/** The line of an email, as given. */
export const emailLine = (email: string): string => JSON.stringify(email)

/** The line of an input item that is not an email. */
export const badInputLine = (raw: string, reason: string): string =>
  JSON.stringify({ bad: raw.slice(0, MAX_BAD_INPUT_CHARS), reason })

const QUOTE = 0x22
const BACKSLASH = 0x5c
const NEWLINE = 0x0a

const unreadable = (line: string): BadInput => ({
  bad: line.slice(0, MAX_BAD_INPUT_CHARS),
  reason: "The input line could not be read."
})

/** The item of a line that is not a JSON string without escapes, read with `JSON.parse`. */
const parsedLine = (line: string): InputItem => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return unreadable(line)
  }
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null) {
    const { bad, reason, email, columns } = value as {
      bad?: unknown
      reason?: unknown
      email?: unknown
      columns?: unknown
    }
    const cells = Array.isArray(columns) ? columns : undefined
    if (typeof email === "string" && cells !== undefined) return { email, columns: cells }
    if (typeof bad === "string" && typeof reason === "string") return { bad, reason, columns: cells }
  }
  return unreadable(line)
}

export interface InputChunk {
  readonly items: ReadonlyArray<InputItem>
  /** Bytes of the file the chunk's lines took, line breaks included. */
  readonly bytes: number
}

/** A chunk of lines as bytes, for a reader elsewhere (a worker thread): `decodeInputLines` reads them. */
export interface InputLines {
  /** The lines, each ending in a line break but perhaps the last: a view of the reader's buffer, good until its next call. */
  readonly lines: Uint8Array
  /** How many lines (input items) it holds. */
  readonly count: number
}

/**
 * The items of whole lines `bytes[start, end)`. Each line is decoded on its
 * own, an email line to the text between its quotes: a string of its own,
 * one byte a character where the email is ASCII. Split from the chunk
 * decoded at once, every email was a slice of one string, two bytes a
 * character wherever the chunk held one non-ASCII email, and reading its
 * characters (parsing, hashing, looking its host up) cost a job thread
 * more than decoding each line costs: a million lines take ~150 ms to decode
 * one by one against ~60 ms at once (one core), and the whole pass less,
 * after over before in medians of three alternating rounds of
 * `BENCH_BEFORE_TREE=<before> npm run bench:jobs:batches`: warm passes 0.89
 * (target group) and 0.91 (offer), cold 1.00 and 0.96.
 */
export const decodeInputLines = (bytes: Uint8Array, start = 0, end = bytes.length): Array<InputItem> => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const items: Array<InputItem> = []
  let from = start
  while (from < end) {
    let to = from
    let escaped = false
    for (; to < end; to++) {
      const byte = buffer[to]!
      if (byte === NEWLINE) break
      if (byte === BACKSLASH) escaped = true
    }
    const plainString = !escaped && to - from >= 2 && buffer[from] === QUOTE && buffer[to - 1] === QUOTE
    items.push(plainString ? buffer.toString("utf8", from + 1, to - 1) : parsedLine(buffer.toString("utf8", from, to)))
    from = to + 1
  }
  return items
}

/**
 * Reads consecutive chunks of lines from `input`, from byte `offset` up to
 * byte `end` (a line boundary; default the end of the file). The file is
 * read once, in blocks; lines left over in a block wait for the next call.
 * The caller opens and closes `input`.
 */
export class InputReader {
  private readonly input: JobBytes
  private buffer: Buffer
  /** Unread data is `buffer[start, filled)`; `filePosition` is the file offset of `buffer[filled]`. */
  private start = 0
  private filled = 0
  private filePosition: number
  private readonly end: number
  private atEnd = false

  constructor(
    input: JobBytes,
    options: { readonly offset: number; readonly end?: number; readonly blockBytes: number }
  ) {
    this.input = input
    this.filePosition = options.offset
    this.end = options.end ?? Number.POSITIVE_INFINITY
    this.buffer = Buffer.allocUnsafe(Math.max(options.blockBytes, 64))
  }

  /** The next at most `maxItems` lines, decoded, or `undefined` at the end of the file. */
  next(maxItems: number): InputChunk | undefined {
    const cut = this.cut(maxItems)
    if (cut === undefined) return undefined
    const items = decodeInputLines(this.buffer, this.start, cut.end)
    this.start = cut.end
    return { items, bytes: cut.bytes }
  }

  /**
   * The next at most `maxItems` lines as bytes, or `undefined` at the end of
   * the file: a view of the buffer, which the next call may overwrite.
   */
  nextLines(maxItems: number): InputLines | undefined {
    const cut = this.cut(maxItems)
    if (cut === undefined) return undefined
    const lines = this.buffer.subarray(this.start, cut.end)
    this.start = cut.end
    return { lines, count: cut.count }
  }

  /** Where the next at most `maxItems` lines end in the buffer (reading more as needed), or undefined at the end. */
  private cut(maxItems: number): { readonly end: number; readonly bytes: number; readonly count: number } | undefined {
    for (;;) {
      let cut = this.start
      let count = 0
      while (count < maxItems) {
        const newline = this.buffer.indexOf(NEWLINE, cut)
        if (newline < 0 || newline >= this.filled) break
        cut = newline + 1
        count++
      }
      const full = this.start === 0 && this.filled === this.buffer.length
      if (count === maxItems || (count > 0 && (full || this.atEnd))) return this.span(cut, count)
      // A last line without a break.
      if (this.atEnd) return this.filled > this.start ? this.span(this.filled, count + 1) : undefined
      if (full) this.buffer = Buffer.concat([this.buffer, Buffer.allocUnsafe(this.buffer.length)]) // a very long line
      this.refill()
    }
  }

  private span(end: number, count: number) {
    return { end, bytes: end - this.start, count }
  }

  /** Moves the unread bytes to the front and reads more after them. */
  private refill(): void {
    if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.filled)
      this.filled -= this.start
      this.start = 0
    }
    const wanted = Math.min(this.buffer.length - this.filled, this.end - this.filePosition)
    const read = wanted <= 0 ? 0 : this.input.read(this.buffer, this.filled, wanted, this.filePosition)
    if (read === 0) this.atEnd = true
    this.filled += read
    this.filePosition += read
  }
}
