/**
 * Reading `input.ndjson` (layout in `jobFiles.ts`) in chunks from a byte
 * offset, so a job resumes exactly where its checkpoint says. A chunk ends
 * on a line boundary and reports the bytes it consumed; a line that is
 * neither a JSON string nor a `{bad, reason}` object is read as bad input
 * rather than stopping the job.
 *
 * The file is written by this program (`emailLine`, `badInputLine`), so the
 * common line — a JSON string without escapes — is read by slicing, not by
 * `JSON.parse`: a million lines are read in tens of milliseconds
 * (bench/jobRunner.ts).
 */
import { closeSync, openSync, readSync } from "node:fs"
import { MAX_BAD_INPUT_CHARS } from "./jobFiles.ts"

/** An input item that could not be read as an email: its raw text (shortened) and why. */
export interface BadInput {
  readonly bad: string
  readonly reason: string
}

export type InputItem = string | BadInput

/** The line of an email, as given. */
export const emailLine = (email: string): string => JSON.stringify(email)

/** The line of an input item that is not an email. */
export const badInputLine = (raw: string, reason: string): string =>
  JSON.stringify({ bad: raw.slice(0, MAX_BAD_INPUT_CHARS), reason })

const QUOTE = 0x22
const BACKSLASH = "\\"
const NEWLINE = 0x0a

const unreadable = (line: string): BadInput => ({
  bad: line.slice(0, MAX_BAD_INPUT_CHARS),
  reason: "The input line could not be read."
})

export const decodeInputLine = (line: string): InputItem => {
  const last = line.length - 1
  if (last > 0 && line.charCodeAt(0) === QUOTE && line.charCodeAt(last) === QUOTE && !line.includes(BACKSLASH)) {
    return line.slice(1, last)
  }
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return unreadable(line)
  }
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null) {
    const { bad, reason } = value as { bad?: unknown; reason?: unknown }
    if (typeof bad === "string" && typeof reason === "string") return { bad, reason }
  }
  return unreadable(line)
}

export interface InputChunk {
  readonly items: ReadonlyArray<InputItem>
  /** Bytes of the file the chunk's lines took, line breaks included. */
  readonly bytes: number
}

/**
 * Reads consecutive chunks of lines from `path`, from byte `offset` up to
 * byte `end` (a line boundary; default the end of the file).
 */
export class InputReader {
  private readonly fd: number
  private position: number
  private buffer: Buffer
  private readonly end: number

  constructor(path: string, options: { readonly offset: number; readonly end?: number; readonly blockBytes: number }) {
    this.fd = openSync(path, "r")
    this.position = options.offset
    this.end = options.end ?? Number.POSITIVE_INFINITY
    this.buffer = Buffer.allocUnsafe(Math.max(options.blockBytes, 64))
  }

  /** The next at most `maxItems` lines, or `undefined` at the end of the file. */
  next(maxItems: number): InputChunk | undefined {
    for (;;) {
      const length = this.fill()
      if (length === 0) return undefined
      const block = this.buffer
      let end = 0
      let count = 0
      while (count < maxItems) {
        const newline = block.indexOf(NEWLINE, end)
        if (newline < 0 || newline >= length) break
        end = newline + 1
        count++
      }
      const atEnd = length < block.length || this.position + length >= this.end
      if (count === 0 && atEnd)
        end = length // a last line without a line break
      else if (count === 0) {
        // One line longer than the block: read it with a larger block.
        this.buffer = Buffer.allocUnsafe(block.length * 2)
        continue
      }
      const text = block.toString("utf8", 0, end)
      const lines = text.split("\n")
      if (lines[lines.length - 1] === "") lines.pop()
      const items = new Array<InputItem>(lines.length)
      for (let i = 0; i < lines.length; i++) items[i] = decodeInputLine(lines[i]!)
      this.position += end
      return { items, bytes: end }
    }
  }

  close(): void {
    closeSync(this.fd)
  }

  private fill(): number {
    const wanted = Math.min(this.buffer.length, this.end - this.position)
    let length = 0
    while (length < wanted) {
      const read = readSync(this.fd, this.buffer, length, wanted - length, this.position + length)
      if (read === 0) break
      length += read
    }
    return length
  }
}
