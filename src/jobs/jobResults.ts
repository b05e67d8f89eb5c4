/**
 * Reading a job's results (one `rowText(row)` line per input item, in input
 * order, as the job store keeps them) for `GET /jobs/{id}/results`:
 * - `readResultsPage`: a page of rows and an opaque cursor for the next. A
 *   page costs O(limit): it seeks to the cursor's byte offset and reads only
 *   what the page needs, never from the start. A tampered cursor is a typed
 *   `InvalidCursor` error. Only whole lines (ending in `\n`) are rows.
 * - `streamResults`: every row in order as a byte stream, NDJSON as stored or
 *   CSV (RFC 4180: the `ROW_CSV_COLUMNS` header and the input's other
 *   columns, then `rowCsv` lines, CRLF).
 *   The file is read a chunk at a time as the consumer pulls, so memory stays
 *   constant whatever the row count. `bench/jobIo.ts` measures both formats.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type ResultRow, ROW_CSV_COLUMNS } from "../domain/ResultRow.ts"
import { rowCsv } from "../domain/rowCsv.ts"
import type { JobBytes, JobStoreError } from "./JobStore.ts"
import { decodeCursor, encodeCursor } from "./resultsCursor.ts"

export class JobResultsError extends Schema.TaggedError<JobResultsError>()("JobResultsError", {
  reason: Schema.Literals(["InvalidCursor", "Unreadable"]),
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

export interface ResultsPage {
  readonly data: ReadonlyArray<ResultRow>
  readonly nextCursor: string | null
}

const LF = 10
const CHUNK = 256 * 1024

const unreadable = (error: unknown) =>
  new JobResultsError({
    reason: "Unreadable",
    detail: `Cannot read the job's results: ${error instanceof Error ? error.message : String(error)}`
  })

const invalidCursor = () =>
  new JobResultsError({
    reason: "InvalidCursor",
    detail: "The cursor is not valid: pass a nextCursor as it was given."
  })

const readAt = (file: JobBytes, offset: number, length: number): Buffer => {
  const buffer = Buffer.allocUnsafe(length)
  return buffer.subarray(0, file.read(buffer, 0, length, offset))
}

/** Up to `limit` rows from `cursor` (the start when absent), and the cursor of the rest (null at the end). */
export const readResultsPage = Effect.fn("readResultsPage")(function* (
  file: JobBytes,
  cursor: string | undefined,
  limit: number
): Effect.fn.Return<ResultsPage, JobResultsError> {
  const start = cursor === undefined ? { offset: 0, row: 0 } : decodeCursor(cursor)
  if (start === undefined) return yield* invalidCursor()
  const page = yield* Effect.try({ try: () => readPage(file, start.offset, limit), catch: unreadable })
  if (page === undefined) return yield* invalidCursor()
  const next = { offset: page.offset, row: start.row + page.data.length }
  return { data: page.data, nextCursor: page.data.length > 0 && page.more ? encodeCursor(next) : null }
})

/** The rows of a page from byte `from`, or undefined when `from` is not the start of a row. */
const readPage = (file: JobBytes, from: number, limit: number) => {
  const size = file.size()
  if (from > size) return undefined
  if (from > 0 && readAt(file, from - 1, 1)[0] !== LF) return undefined
  const data: Array<ResultRow> = []
  let offset = from
  let pending: Buffer = Buffer.alloc(0)
  let readLength = Math.min(CHUNK, Math.max(4096, limit * 256))
  while (data.length < limit && offset + pending.length < size) {
    const chunk = readAt(file, offset + pending.length, readLength)
    if (chunk.length === 0) break
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    let lineStart = 0
    while (data.length < limit) {
      const newline = pending.indexOf(LF, lineStart)
      if (newline === -1) break
      data.push(JSON.parse(pending.toString("utf8", lineStart, newline)) as ResultRow)
      lineStart = newline + 1
    }
    offset += lineStart
    pending = pending.subarray(lineStart)
    readLength = Math.min(readLength * 2, 16 * CHUNK)
  }
  return { data, offset, more: offset < size }
}

/**
 * Buffers a download's chunks take turns in, when its consumer writes each
 * chunk to a socket before it pulls the next (`streamResults`' `reuse`).
 * Node answers a write of a chunk larger than the socket's high-water mark
 * (64 KiB unless a server sets it) with false unless the chunk went to the
 * kernel at once, and the consumer then waits for `drain`, which comes once
 * every queued byte has: so a chunk is done with before the next is read,
 * and a buffer is overwritten only three chunks later. Fresh 256 KiB
 * buffers per chunk were ~1,400 allocations per 364 MB download, and V8
 * answered the external memory with a full collection of the request
 * thread every 100-250 ms (`--trace-gc`, bench:jobs).
 */
const RING = 4

/**
 * The file's bytes, a chunk per pull; the file is closed when the stream
 * ends or is interrupted. With `reuse`, chunks take turns in `RING`
 * buffers (so each is valid only until `RING - 1` more have been pulled).
 */
const fileChunks = <R>(
  open: Effect.Effect<JobBytes, JobStoreError, R>,
  reuse: boolean
): Stream.Stream<Uint8Array, JobResultsError, R> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const file = yield* Effect.acquireRelease(Effect.mapError(open, unreadable), (file) =>
        Effect.sync(() => file.close())
      )
      const ring = reuse ? Array.from({ length: RING }, () => Buffer.allocUnsafe(CHUNK)) : undefined
      let turn = 0
      const read = (offset: number): Buffer => {
        if (ring === undefined) return readAt(file, offset, CHUNK)
        const buffer = ring[turn++ % RING]!
        return buffer.subarray(0, file.read(buffer, 0, CHUNK, offset))
      }
      return Stream.paginate(0, (offset: number) =>
        Effect.try({ try: () => read(offset), catch: unreadable }).pipe(
          Effect.map(
            (chunk) =>
              [
                chunk.length === 0 ? [] : [chunk],
                chunk.length < CHUNK ? Option.none() : Option.some(offset + chunk.length)
              ] as const
          )
        )
      )
    })
  )

/** The CSV header: the verdict columns, then the input's other columns. */
const csvHeader = (inputColumns: ReadonlyArray<string>) =>
  Buffer.from(
    `${[...ROW_CSV_COLUMNS, ...inputColumns].map((name) => (/[",\r\n]/.test(name) ? `"${name.replaceAll('"', '""')}"` : name)).join(",")}\r\n`
  )

/** Turns NDJSON rows, in chunks cut anywhere, into CSV lines. */
const toCsv = <R>(
  rows: Stream.Stream<Uint8Array, JobResultsError, R>,
  inputColumns: ReadonlyArray<string>
): Stream.Stream<Uint8Array, JobResultsError, R> =>
  rows.pipe(
    Stream.mapAccum(
      (): Buffer => Buffer.alloc(0),
      (carry: Buffer, chunk: Uint8Array) => {
        const bytes =
          carry.length === 0
            ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
            : Buffer.concat([carry, chunk])
        const end = bytes.lastIndexOf(LF) + 1
        if (end === 0) return [bytes, []] as const
        const text = bytes.toString("utf8", 0, end)
        let csv = ""
        let lineStart = 0
        for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", lineStart)) {
          if (newline > lineStart)
            csv += `${rowCsv(JSON.parse(text.slice(lineStart, newline)) as ResultRow, inputColumns)}\r\n`
          lineStart = newline + 1
        }
        return [bytes.subarray(end), [Buffer.from(csv)]] as const
      }
    ),
    (csv) => Stream.concat(Stream.make(csvHeader(inputColumns)), csv)
  )

/**
 * Every row of the results `open` gives, in order, as stored (`ndjson`) or
 * as CSV with the job's `inputColumns`. `reuse`: the stream goes straight
 * to an HTTP response, written chunk by chunk with `drain` awaited whenever
 * a write is queued (the HTTP server's stream body), so the stored rows can
 * be read into a few reused buffers (`RING`); anything that holds a chunk
 * longer (a compressor, a buffer between) must not set it.
 */
export const streamResults = <R>(
  open: Effect.Effect<JobBytes, JobStoreError, R>,
  format: "ndjson" | "csv",
  inputColumns: ReadonlyArray<string> = [],
  reuse = false
): Stream.Stream<Uint8Array, JobResultsError, R> =>
  format === "ndjson" ? fileChunks(open, reuse) : toCsv(fileChunks(open, false), inputColumns)
