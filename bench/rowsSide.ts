/**
 * One side of `npm run bench:rows` (bench/rows.ts): the loops, writing with
 * the code in src or with `bench/rowsReference.ts` as the `side` of its URL
 * says (`rowsSide.ts?side=current`, `?side=reference`). bench/rows.ts loads
 * it once per side, so each side's functions are compiled for its calls
 * alone, as a caller in src is: sharing one loop between the two sides made
 * every call site polymorphic and measured the dispatch, not the code.
 * Each side has its engine (over one shared institution table), so what one
 * side's writing does to the verdicts (flattening shared reason sentences)
 * does not help the other.
 */
import type { ResultRow } from "../src/domain/ResultRow.ts"
import * as currentRows from "../src/domain/ResultRow.ts"
import * as currentCsv from "../src/domain/rowCsv.ts"
import * as currentText from "../src/domain/rowText.ts"
import type { OfferValidationResult, ValidationResult } from "../src/domain/ValidationResult.ts"
import { JsonBytes } from "../src/server/jsonBytes.ts"
import { BENCH_TARGET_GROUP, benchOffer, makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"
import * as reference from "./rowsReference.ts"
import { sharedTable } from "./rowsTable.ts"

/** Items per job batch (`jobs/JobRunner.ts`, `BATCH_ITEMS`). */
const JOB_BATCH = 2048
/** Emails per bulk request (the usual `limits.bulkMaxEmails`). */
const BULK = 1_000

export type LoopName = "jobRowsTargetGroup" | "jobRowsOffer" | "csvRows" | "bulkAnswers" | "bulkAnswersOffer"

const INPUT_COLUMNS = ["customerId", "note"] as const

export const side = new URL(import.meta.url).searchParams.get("side") === "reference" ? "reference" : "current"

/** The code in src, as the reference module holds it: the rows, their CSV and JSON text. */
const current = { ...currentRows, ...currentCsv, ...currentText }

/** The functions this side writes with: a constant, so every call below has one target. */
const w =
  side === "reference"
    ? {
        ...reference,
        /** The same, with the former writers. */
        bulkAnswer: (rows: ReadonlyArray<ResultRow>): Buffer => {
          const out = new reference.JsonBytes(256 + rows.length * 320)
          out.write(`{"results":[`)
          for (let i = 0; i < rows.length; i++) {
            const text = reference.rowText(rows[i]!)
            out.write(i === 0 ? text : `,${text}`)
          }
          out.write(`],"requestId":"bench"}`)
          return out.bytes()
        }
      }
    : {
        ...current,
        /** A bulk answer as `server/handlers/validation.ts` writes it: each row's string, a comma in front. */
        bulkAnswer: (rows: ReadonlyArray<ResultRow>): Buffer => {
          const out = new JsonBytes(256 + rows.length * 320)
          out.write(`{"results":[`)
          for (let i = 0; i < rows.length; i++) {
            const text = current.rowText(rows[i]!)
            out.write(i === 0 ? text : `,${text}`)
          }
          out.write(`],"requestId":"bench"}`)
          return out.bytes()
        }
      }

/** A job batch's buffer (`jobs/jobBatches.ts`: room for rows of 320 bytes, grown when needed), alike for both sides. */
class TextBuffer {
  buffer: Buffer
  used = 0
  constructor(bytes: number) {
    this.buffer = Buffer.from(new ArrayBuffer(Math.max(bytes, 4096)))
  }
  write(text: string): void {
    const room = text.length * 3
    if (this.used + room > this.buffer.length) {
      const grown = Buffer.from(new ArrayBuffer(Math.max(this.buffer.length * 2, this.used + room)))
      this.buffer.copy(grown, 0, 0, this.used)
      this.buffer = grown
    }
    this.used += this.buffer.write(text, this.used)
  }
}

/** The emails are this many job batches; a round works on one of them. */
export const SLICES = 16
const table = sharedTable
const engine = makeBenchEngine(table)
const emails = generateEmails(table, JOB_BATCH * SLICES)
const offerId = benchOffer(3)

/** Input columns for every third row (a formula-like note on some), `duplicateOf` on every seventh. */
const jobRow = (row: ResultRow, i: number): ResultRow => {
  if (i % 3 !== 0 && i % 7 !== 3) return row
  const out: { -readonly [K in keyof ResultRow]: ResultRow[K] } = { ...row }
  if (i % 7 === 3) out.duplicateOf = i - 2
  if (i % 3 === 0) out.columns = { customerId: `c-${i}`, note: i % 2 === 0 ? "=1+1, see" : "ok" }
  return out
}

/** The NDJSON lines of a job's results, the CSV download's input. */
const ndjsonLines = engine
  .validateMany(emails, BENCH_TARGET_GROUP)
  .map((result, i) => JSON.stringify(jobRow(current.toResultRow(emails[i]!, result), i)))

/** A job batch's rows: the text up to `duplicateOf`, then the rest and a newline. */
const jobRowsTargetGroup = (some: ReadonlyArray<string>, results: ReadonlyArray<ValidationResult>): Buffer => {
  const text = new TextBuffer(some.length * 320)
  for (let i = 0; i < some.length; i++) {
    const row = w.toResultRow(some[i]!, results[i]!)
    text.write(w.rowTextBeforeDuplicate(row))
    text.write(`${w.rowTextAfterDuplicate(row)}\n`)
  }
  return text.buffer.subarray(0, text.used)
}

const jobRowsOffer = (some: ReadonlyArray<string>, results: ReadonlyArray<OfferValidationResult>): Buffer => {
  const text = new TextBuffer(some.length * 320)
  for (let i = 0; i < some.length; i++) {
    const row = w.toOfferResultRow(some[i]!, results[i]!)
    text.write(w.rowTextBeforeDuplicate(row))
    text.write(`${w.rowTextAfterDuplicate(row)}\n`)
  }
  return text.buffer.subarray(0, text.used)
}

/** CSV lines, joined per chunk of 1,000 and each chunk encoded. */
const csvRows = (rows: ReadonlyArray<ResultRow>): Buffer => {
  const chunks: Array<Buffer> = []
  let csv = ""
  for (let i = 0; i < rows.length; i++) {
    csv += `${w.rowCsv(rows[i]!, INPUT_COLUMNS)}\r\n`
    if (i % 1000 === 999) {
      chunks.push(Buffer.from(csv))
      csv = ""
    }
  }
  chunks.push(Buffer.from(csv))
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/** The loop `name` over `count` emails from `start`: its input made (untimed), then its run timed; the output and ns per row. */
const run = (name: LoopName, start: number, count: number): { readonly bytes: Buffer; readonly nanos: number } => {
  const some = emails.slice(start, start + count)
  let write: () => Buffer
  if (name === "jobRowsTargetGroup") {
    const results = engine.validateMany(some, BENCH_TARGET_GROUP)
    write = () => jobRowsTargetGroup(some, results)
  } else if (name === "jobRowsOffer") {
    const results = engine.validateManyOffer(some, offerId)
    write = () => jobRowsOffer(some, results)
  } else if (name === "csvRows") {
    const rows = ndjsonLines.slice(start, start + count).map((line) => JSON.parse(line) as ResultRow)
    write = () => csvRows(rows)
  } else if (name === "bulkAnswers") {
    const results = engine.validateMany(some, BENCH_TARGET_GROUP)
    write = () => w.bulkAnswer(results.map((result, i) => w.toResultRow(some[i]!, result)))
  } else {
    const results = engine.validateManyOffer(some, offerId)
    write = () => w.bulkAnswer(results.map((result, i) => w.toOfferResultRow(some[i]!, result)))
  }
  const began = performance.now()
  const bytes = write()
  return { bytes, nanos: ((performance.now() - began) * 1e6) / count }
}

const batchOf = (name: LoopName): number => (name.startsWith("bulk") ? BULK : JOB_BATCH)

/** The loop's output over all the emails, for the byte-for-byte check. */
export const bytesOf = (name: LoopName): Buffer => {
  const parts: Array<Buffer> = []
  const batch = batchOf(name)
  for (let start = 0; start < emails.length; start += batch) {
    parts.push(run(name, start, Math.min(batch, emails.length - start)).bytes)
  }
  return Buffer.concat(parts)
}

/** Fresh verdicts for one slice of the emails (untimed), then the nanoseconds per row the loop took over them. */
export const timeOf = (name: LoopName, slice: number): number => run(name, slice * JOB_BATCH, batchOf(name)).nanos
