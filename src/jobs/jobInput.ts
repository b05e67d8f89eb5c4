/**
 * Reads a bulk-job upload into a job's input (`inputLines.ts`), staged in
 * the job store. The body is a byte
 * stream in one of three forms:
 * - `ndjson`: one item per line, a JSON string or an object with a string
 *   `email`;
 * - `csv` (RFC 4180): a header row with an `email` column (any case), one
 *   item per row, the other columns kept for the results; fields separated
 *   by `,`, `;` or tab (`delimiter`, else detected from the header row);
 * - `json`: `{ emails, targetGroupId | offerId, callbackUrl? }`, scanned as
 *   it arrives (`jsonDocumentReader.ts`);
 * - `detect`: NDJSON or CSV, told from the first line (`inputFormat.ts`),
 *   for a gzip file whose request does not say which.
 * All are read and written incrementally, in constant memory. A compressed
 * body reaches this reader decompressed (`uploadCoding.ts`): the rules and
 * limits here apply to the decompressed bytes.
 *
 * Guarantees: the body is UTF-8 (a leading BOM is dropped; invalid UTF-8 is
 * an error); lines end in `\n` or `\r\n`; empty lines are skipped; an item that
 * cannot be read as an email becomes a bad item (a row of its own), never a
 * whole-request failure. Reading stops as soon as the body passes `maxBytes`
 * or the items pass `maxEmails`. The output is written to `output` (a staged
 * upload, which the caller makes a job's input or discards) in large
 * buffered writes and made durable before success, off the calling thread
 * (`JobBytes.flush`: the daemon's request thread answers meanwhile).
 * `bench/jobIo.ts` measures a million NDJSON lines.
 *
 * The body is an Effect `Stream` rather than an `AsyncIterable` because that
 * is what the HTTP layer's streamed payloads (`HttpApiSchema.StreamUint8Array`)
 * give, and consuming it inside Effect keeps the body's own failures typed and
 * stops the upload when the job is interrupted; an `AsyncIterable` becomes a
 * Stream with `Stream.fromAsyncIterable`.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { CSV_DELIMITERS, type CsvDelimiter, CsvReader, detectDelimiter } from "./csv.ts"
import { detectFormat } from "./inputFormat.ts"
import { InputItems, MAX_INPUT_COLUMNS } from "./inputItems.ts"
import { type JobBytes, JobStoreError } from "./JobStore.ts"
import type { JobInputFields } from "./jobDocument.ts"
import {
  bodyTooLarge,
  invalidUtf8,
  JobInputError,
  missingEmailColumn,
  noEmails,
  tooManyColumns,
  tooManyEmails
} from "./jobInputError.ts"
import { JsonDocumentReader } from "./jsonDocumentReader.ts"
import { NdjsonReader } from "./ndjson.ts"

export type JobInputFormat = "json" | "ndjson" | "csv"

export interface JobInputOptions {
  /** `detect`: NDJSON or CSV, as the first line says. */
  readonly format: JobInputFormat | "detect"
  /** Where the input lines are written, from its start. */
  readonly output: JobBytes
  /** More items than this (bad items included: each is a result row) fail the upload. */
  readonly maxEmails: number
  /** A body longer than this many bytes fails the upload. */
  readonly maxBytes: number
  /** For CSV: the field delimiter; detected from the header row when absent. */
  readonly delimiter?: CsvDelimiter | undefined
  /**
   * Whether to hash the body (`bodyHash`), which only a request with an
   * `Idempotency-Key` needs: SHA-256 over a 1M-email upload (28 MB) cost
   * the request thread 70-200 ms (bench:jobs, `--cpu-prof`).
   */
  readonly hashBody?: boolean | undefined
}

export interface JobInput {
  /** Items written, one line each, bad items included. */
  readonly total: number
  /** Items that could not be read as an email. */
  readonly badInput: number
  /** SHA-256 of the body bytes read (decompressed), hex, when asked for (`hashBody`). */
  readonly bodyHash: string | undefined
  readonly inputBytes: number
  /** For a JSON body, the document's other fields; empty for NDJSON and CSV (query parameters carry them). */
  readonly fields: JobInputFields
  /** The input's columns besides the email, in order (CSV header cells, NDJSON object fields). */
  readonly columns: ReadonlyArray<string>
}

interface BodyReader {
  /** Reads a chunk: a failure ends the upload. */
  push(chunk: Uint8Array): JobInputError | undefined
  end(): JobInputFields | JobInputError
}

/** A reader of decoded text: UTF-8 (fatal on invalid bytes), a leading BOM dropped, characters split across chunks joined. */
const textReader = (
  pushText: (text: string) => JobInputError | undefined,
  endText: () => JobInputFields | JobInputError
): BodyReader => {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  const decode = (chunk?: Uint8Array): string | JobInputError => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true })
    } catch {
      return invalidUtf8()
    }
  }
  return {
    push: (chunk) => {
      const text = decode(chunk)
      return typeof text === "string" ? pushText(text) : text
    },
    end: () => {
      const text = decode()
      return typeof text === "string" ? (pushText(text) ?? endText()) : text
    }
  }
}

const ndjsonReader = (items: InputItems): BodyReader => {
  const lines = new NdjsonReader(items)
  return {
    push: (chunk) => (lines.push(chunk) ? undefined : invalidUtf8()),
    end: () => (lines.end() ? {} : invalidUtf8())
  }
}

/**
 * CSV: the header row names the columns (one is `email`, any case); every
 * other column, and any cell past the header's, is kept by name for the
 * results (a repeated or empty header name gets its position added).
 */
const csvReader = (items: InputItems, delimiter: CsvDelimiter | undefined): BodyReader => {
  let emailColumn = -1
  let failure: JobInputError | undefined
  /** Column index (in `items.columns`) of each CSV field; the email field's is -1. */
  let indexes: Array<number> = []
  const indexOf = (name: string): number => {
    const index = items.columnIndex(name)
    if (index === undefined) failure = tooManyColumns(MAX_INPUT_COLUMNS)
    return index ?? -1
  }
  const onRecord = (fields: Array<string>, unterminated: boolean) => {
    if (emailColumn === -1) {
      emailColumn = fields.findIndex((name) => name.trim().toLowerCase() === "email")
      if (emailColumn === -1) {
        failure = missingEmailColumn(fields)
        return
      }
      const seen = new Set<string>()
      indexes = fields.map((name, i) => {
        if (i === emailColumn) return -1
        const unique = name === "" || seen.has(name) ? `${name || "column"} ${i + 1}` : name
        seen.add(unique)
        return indexOf(unique)
      })
      return
    }
    for (let i = indexes.length; i < fields.length; i++) indexes.push(indexOf(`column ${i + 1}`))
    let columns: Array<unknown> | undefined
    for (let i = 0; i < fields.length; i++) {
      const index = indexes[i]!
      if (index < 0) continue
      columns ??= []
      while (columns.length < index) columns.push(null)
      columns[index] = fields[i]
    }
    const email = fields[emailColumn]
    const raw = () => fields.join(separator)
    if (unterminated) items.bad(raw(), "a quoted field is not closed", columns)
    else if (email === undefined) items.bad(raw(), "the row has no email cell", columns)
    else if (email.trim() === "") items.bad(raw(), "the email cell is empty", columns)
    else items.email(email, columns)
  }
  const stop = () => failure !== undefined || items.overLimit
  let records: CsvReader | undefined
  /** The delimiter in use, to show a bad row's cells as they were sent. */
  let separator = ","
  /** Text before the header row's end, kept until the delimiter is known. */
  let head = ""
  const push = (text: string, last: boolean) => {
    if (records === undefined) {
      head += text
      const newline = head.indexOf("\n")
      if (newline === -1 && !last) return
      const used = delimiter ?? detectDelimiter(newline === -1 ? head : head.slice(0, newline))
      separator = String.fromCharCode(CSV_DELIMITERS[used])
      records = new CsvReader(onRecord, stop, used)
      text = head
      head = ""
    }
    records.push(text)
  }
  return textReader(
    (text) => {
      push(text, false)
      return failure
    },
    () => {
      push("", true)
      records?.end()
      return failure ?? {}
    }
  )
}

const jsonReader = (items: InputItems): BodyReader => {
  const document = new JsonDocumentReader(items)
  return textReader(
    (text) => document.push(text),
    () => document.end()
  )
}

/** NDJSON or CSV, as the first line that is not blank says: the bytes before it are held, then read by the reader chosen. */
const detectingReader = (items: InputItems, options: JobInputOptions): BodyReader => {
  let chosen: BodyReader | undefined
  let head: Uint8Array = new Uint8Array(0)
  const choose = (format: JobInputFormat): JobInputError | undefined => {
    chosen = readerFor(format, items, options)
    const held = head
    head = new Uint8Array(0)
    return chosen.push(held)
  }
  return {
    push: (chunk) => {
      if (chosen !== undefined) return chosen.push(chunk)
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
      const format = detectFormat(head, false)
      return format === undefined ? undefined : choose(format)
    },
    end: () => {
      if (chosen === undefined) {
        const failure = choose(detectFormat(head, true) ?? "csv")
        if (failure !== undefined) return failure
      }
      return chosen!.end()
    }
  }
}

const readerFor = (format: JobInputFormat | "detect", items: InputItems, options: JobInputOptions): BodyReader => {
  switch (format) {
    case "csv":
      return csvReader(items, options.delimiter)
    case "ndjson":
      return ndjsonReader(items)
    case "json":
      return jsonReader(items)
    case "detect":
      return detectingReader(items, options)
  }
}

/** Pending output is written once it reaches this many characters. */
const FLUSH_AT = 1 << 20

/** A write of the upload: its failure (a full disk, a broken volume) is the job store's. */
const io = <A>(run: () => A): Effect.Effect<A, JobStoreError> =>
  Effect.try({ try: run, catch: (cause) => new JobStoreError({ operation: "upload", cause }) })

/** Reads `body` into `options.output` as a job input; see the module header for the rules. */
export const readJobInput = Effect.fn("readJobInput")(function* <E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  options: JobInputOptions
): Effect.fn.Return<JobInput, JobInputError | JobStoreError | E, R> {
  const items = new InputItems(options.maxEmails)
  const reader = readerFor(options.format, items, options)
  const limitField = options.format === "json" ? "/emails" : "/body"
  const hash = options.hashBody === true ? createHash("sha256") : undefined
  let inputBytes = 0
  let written = 0
  const write = () =>
    io(() => {
      written += options.output.writeParts(items.take(), written)
    })

  const readChunk = (chunk: Uint8Array): JobInputError | undefined => {
    inputBytes += chunk.length
    if (inputBytes > options.maxBytes) return bodyTooLarge(options.maxBytes)
    hash?.update(chunk)
    return (
      reader.push(chunk) ??
      (items.overLimit ? tooManyEmails(limitField, options.maxEmails) : undefined) ??
      (items.columnsOverLimit ? tooManyColumns(MAX_INPUT_COLUMNS) : undefined)
    )
  }

  yield* Stream.runForEachArray(body, (chunks) =>
    Effect.suspend((): Effect.Effect<void, JobInputError | JobStoreError> => {
      for (const chunk of chunks) {
        const failure = readChunk(chunk)
        if (failure !== undefined) return Effect.fail(failure)
      }
      return items.pendingSize >= FLUSH_AT ? write() : Effect.void
    })
  )
  const fields = reader.end()
  if (fields instanceof JobInputError) return yield* fields
  if (items.overLimit) return yield* tooManyEmails(limitField, options.maxEmails)
  if (items.columnsOverLimit) return yield* tooManyColumns(MAX_INPUT_COLUMNS)
  if (items.total === 0) return yield* noEmails(limitField)
  yield* write()
  // fsync on libuv's pool: the request thread goes on answering while the upload (tens of MB) reaches the disk.
  yield* Effect.tryPromise({
    try: () => options.output.flush(),
    catch: (cause) => new JobStoreError({ operation: "upload", cause })
  })
  return {
    total: items.total,
    badInput: items.badInput,
    bodyHash: hash?.digest("hex"),
    inputBytes,
    fields,
    columns: items.columns
  }
})
