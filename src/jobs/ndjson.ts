/**
 * NDJSON bodies read at the byte level: the common line, a JSON string with
 * nothing escaped (`"jane@ox.ac.uk"`), is already in `input.ndjson` form, so
 * runs of such lines are copied as they are, without decoding or re-encoding;
 * other lines are decoded and read one by one (`addNdjsonLine`). UTF-8 is
 * checked per run of whole lines (a `\n` byte never falls inside a multi-byte
 * character, so a run cut after one is whole characters). A leading BOM is
 * dropped; `\r\n` ends a line like `\n`.
 *
 * Measured by `bench/jobIo.ts` (a million lines).
 */
import { isUtf8 } from "node:buffer"
import { addNdjsonLine, type InputItems, MAX_EMAIL_LENGTH } from "./inputItems.ts"

const LF = 10
const CR = 13
const QUOTE = 34
const BACKSLASH = 92

/**
 * Where the JSON string at `start` ends (just past its closing quote) when
 * it has no escapes or control characters and is short enough to be an
 * email: a plain line is such a string followed by its line break. Else -1.
 */
const plainStringEnd = (bytes: Uint8Array, start: number): number => {
  if (bytes[start] !== QUOTE) return -1
  const limit = Math.min(bytes.length, start + MAX_EMAIL_LENGTH + 2)
  for (let i = start + 1; i < limit; i++) {
    const byte = bytes[i]!
    if (byte === QUOTE) return i + 1
    if (byte === BACKSLASH || byte < 0x20) return -1
  }
  return -1
}

const startsWithBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

export class NdjsonReader {
  private readonly items: InputItems
  /** The bytes of an unfinished line (kept as chunks: a long line is joined once, when it ends). */
  private carry: Array<Uint8Array> = []
  private first = true

  constructor(items: InputItems) {
    this.items = items
  }

  /**
   * Reads the whole lines in `chunk`; false when they are not valid UTF-8.
   * The line begun in an earlier chunk is joined and read first; the rest
   * are read where they lie, not copied.
   */
  push(data: Uint8Array): boolean {
    const chunk = asBuffer(data)
    let from = 0
    if (this.carry.length > 0) {
      const newline = chunk.indexOf(LF)
      if (newline === -1) {
        if (chunk.length > 0) this.carry.push(chunk)
        return true
      }
      this.carry.push(chunk.subarray(0, newline + 1))
      const line = Buffer.concat(this.carry)
      this.carry = []
      if (!this.readLines(line)) return false
      from = newline + 1
    }
    const last = chunk.lastIndexOf(LF)
    if (last < from) {
      if (from < chunk.length) this.carry.push(chunk.subarray(from))
      return true
    }
    if (last + 1 < chunk.length) this.carry.push(chunk.subarray(last + 1))
    return this.readLines(chunk.subarray(from, last + 1))
  }

  /** Reads the last line, which needs no `\n`; false when it is not valid UTF-8. */
  end(): boolean {
    if (this.carry.length === 0) return true
    const last = Buffer.concat([...this.carry, Buffer.of(LF)])
    this.carry = []
    return this.readLines(last)
  }

  /** `data` ends in `\n`. */
  private readLines(data: Uint8Array): boolean {
    if (!isUtf8(data)) return false
    const bytes = asBuffer(data)
    let start = 0
    if (this.first) {
      this.first = false
      if (startsWithBom(bytes)) start = 3
    }
    const items = this.items
    let runStart = start
    let runCount = 0
    while (start < bytes.length && items.total + runCount <= items.maxEmails) {
      const stringEnd = plainStringEnd(bytes, start)
      if (stringEnd !== -1 && bytes[stringEnd] === LF) {
        runCount++
        start = stringEnd + 1
        continue
      }
      const end = bytes.indexOf(LF, start)
      if (runCount > 0) items.verbatim(bytes.subarray(runStart, start), runCount)
      runCount = 0
      if (end - start === 1 && bytes[start] === CR) {
        // A blank `\r\n` line.
      } else if (end > start) {
        const lineEnd = bytes[end - 1] === CR ? end - 1 : end
        const line = bytes.toString("utf8", start, lineEnd)
        if (stringEnd === lineEnd) items.emailJson(line)
        else addNdjsonLine(items, line)
      }
      runStart = end + 1
      start = end + 1
    }
    if (runCount > 0) items.verbatim(bytes.subarray(runStart, start), runCount)
    return true
  }
}

/** A Buffer view of `bytes` (no copy), for its native `indexOf` and `toString`. */
const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
