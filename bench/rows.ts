/**
 * `npm run bench:rows`: rows per second for turning verdicts into answer
 * text, the code in src against the code it replaced (`bench/rowsReference.ts`),
 * on the benchmark engine's verdicts (`bench/benchEngine.ts`) for the
 * generated emails:
 * - `jobRowsTargetGroup`, `jobRowsOffer`: a job's NDJSON rows as a job batch
 *   encodes them (`toResultRow` / `toOfferResultRow`, the text up to
 *   `duplicateOf`, the rest and a newline, each written into one growing
 *   buffer), for the target group and for the offer of three groups;
 * - `csvRows`: the CSV download (`rowCsv` of each row parsed back from its
 *   NDJSON line, with two input columns and some duplicates, joined per
 *   chunk of 1,000 and encoded), as `jobs/jobResults.ts` streams it;
 * - `bulkAnswers`: `validate/bulk` answers of 1,000 emails (the writer of
 *   `server/jsonBytes.ts` and `rowText(toResultRow(...))`, the summary
 *   left out as it is the same for both).
 * The verdicts are made afresh (untimed) before every timed pass, so each
 * pass meets new, unflattened reason strings as a request or a job does.
 * Before timing, every loop's output is checked byte for byte against the
 * reference's, and the run fails on any difference. Rounds alternate the
 * loops and which side goes first; each pass is timed in CPU time; figures
 * are medians over the rounds with their spread, `speedup` (reference time
 * / new time) taken within each round. Garbage is collected before each
 * pass (`--expose-gc`), so a pass does not pay for the last one's. Passes
 * are short (20,480 emails) and many (21 rounds), medians over them. `--quick` (or BENCH_QUICK=1) for a
 * short check. Prints progress, then one final JSON line.
 */
import type { ResultRow } from "../src/domain/ResultRow.ts"
import * as current from "../src/domain/ResultRow.ts"
import type { OfferValidationResult, ValidationResult } from "../src/domain/ValidationResult.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { JsonBytes } from "../src/server/jsonBytes.ts"
import { BENCH_TARGET_GROUP, benchOffer, makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"
import { quick, ratios, spread, timed } from "./rounds.ts"
import * as reference from "./rowsReference.ts"

const count = Number(process.env.BENCH_EMAILS ?? (quick ? 4_000 : 20_480))
const rounds = quick ? 3 : 21
/** Collects garbage before each timed pass when node runs with --expose-gc (`npm run bench:rows` does). */
const collect = (globalThis as { gc?: () => void }).gc ?? (() => {})
const BULK = 1_000
/** Items per job batch (`jobs/JobRunner.ts`, `BATCH_ITEMS`). */
const JOB_BATCH = 2048
const INPUT_COLUMNS = ["customerId", "note"] as const

const table = buildInstitutionTable()
const engine = makeBenchEngine(table)
const emails = generateEmails(table, count)
const offerId = benchOffer(3)

/** The functions one side writes with. */
interface Writer {
  readonly toResultRow: typeof current.toResultRow
  readonly toOfferResultRow: typeof current.toOfferResultRow
  readonly rowText: typeof current.rowText
  readonly rowTextBeforeDuplicate: typeof current.rowTextBeforeDuplicate
  readonly rowTextAfterDuplicate: typeof current.rowTextAfterDuplicate
  readonly rowCsv: typeof current.rowCsv
  readonly JsonBytes: new (estimate: number) => { write(text: string): void; bytes(): Buffer }
}
const writers = {
  current: { ...current, JsonBytes } satisfies Writer,
  reference: {
    ...reference,
    toResultRow: current.toResultRow,
    toOfferResultRow: current.toOfferResultRow
  } satisfies Writer
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

/** Input columns for every third row (a formula-like note on some), `duplicateOf` on every seventh. */
const jobRow = (row: ResultRow, i: number): ResultRow => {
  if (i % 3 !== 0 && i % 7 !== 3) return row
  const out: { -readonly [K in keyof ResultRow]: ResultRow[K] } = { ...row }
  if (i % 7 === 3) out.duplicateOf = i - 2
  if (i % 3 === 0) out.columns = { customerId: `c-${i}`, note: i % 2 === 0 ? "=1+1, see" : "ok" }
  return out
}

/** What a timed pass works on: fresh verdicts (or, for CSV, rows freshly parsed from their lines). */
type Input =
  | { readonly kind: "targetGroup"; readonly results: ReadonlyArray<ValidationResult> }
  | { readonly kind: "offer"; readonly results: ReadonlyArray<OfferValidationResult> }
  | { readonly kind: "csv"; readonly rows: ReadonlyArray<ResultRow> }

const ndjsonLines = (() => {
  const results = engine.validateMany(emails, BENCH_TARGET_GROUP)
  return results.map((result, i) => JSON.stringify(jobRow(current.toResultRow(emails[i]!, result), i)))
})()

const fresh = {
  targetGroup: (): Input => ({ kind: "targetGroup", results: engine.validateMany(emails, BENCH_TARGET_GROUP) }),
  offer: (): Input => ({ kind: "offer", results: engine.validateManyOffer(emails, offerId) }),
  csv: (): Input => ({ kind: "csv", rows: ndjsonLines.map((line) => JSON.parse(line) as ResultRow) })
}

/** A job's rows in batches of `JOB_BATCH`: the text up to `duplicateOf`, then the rest and a newline. */
const jobRows = (w: Writer, input: Input): Array<Buffer> => {
  if (input.kind === "csv") throw new Error("jobRows: verdicts expected")
  const batches: Array<Buffer> = []
  for (let start = 0; start < emails.length; start += JOB_BATCH) {
    const end = Math.min(emails.length, start + JOB_BATCH)
    const text = new TextBuffer((end - start) * 320)
    for (let i = start; i < end; i++) {
      const row =
        input.kind === "targetGroup"
          ? w.toResultRow(emails[i]!, input.results[i]!)
          : w.toOfferResultRow(emails[i]!, input.results[i]!)
      text.write(w.rowTextBeforeDuplicate(row))
      text.write(`${w.rowTextAfterDuplicate(row)}\n`)
    }
    batches.push(text.buffer.subarray(0, text.used))
  }
  return batches
}

/** The CSV download: lines joined per chunk of 1,000 rows, each chunk encoded. */
const csvRows = (w: Writer, input: Input): Array<Buffer> => {
  if (input.kind !== "csv") throw new Error("csvRows: rows expected")
  const chunks: Array<Buffer> = []
  let csv = ""
  for (let i = 0; i < input.rows.length; i++) {
    csv += `${w.rowCsv(input.rows[i]!, INPUT_COLUMNS)}\r\n`
    if (i % BULK === BULK - 1) {
      chunks.push(Buffer.from(csv))
      csv = ""
    }
  }
  chunks.push(Buffer.from(csv))
  return chunks
}

/** `validate/bulk` answers of `BULK` emails each, as `server/handlers/validation.ts` writes them. */
const bulkAnswers = (w: Writer, input: Input): Array<Buffer> => {
  if (input.kind !== "targetGroup") throw new Error("bulkAnswers: target-group verdicts expected")
  const answers: Array<Buffer> = []
  for (let start = 0; start < emails.length; start += BULK) {
    const end = Math.min(emails.length, start + BULK)
    const out = new w.JsonBytes(256 + (end - start) * 320)
    out.write(`{"results":`)
    out.write("[")
    for (let i = start; i < end; i++) {
      const text = w.rowText(w.toResultRow(emails[i]!, input.results[i]!))
      out.write(i === start ? text : `,${text}`)
    }
    out.write("]")
    out.write(`,"requestId":"bench"}`)
    answers.push(out.bytes())
  }
  return answers
}

interface Loop {
  readonly name: string
  readonly input: () => Input
  readonly write: (w: Writer, input: Input) => Array<Buffer>
  readonly micros: { current: Array<number>; reference: Array<number> }
}
const loop = (name: string, input: () => Input, write: Loop["write"]): Loop => ({
  name,
  input,
  write,
  micros: { current: [], reference: [] }
})
const loops: Array<Loop> = [
  loop("jobRowsTargetGroup", fresh.targetGroup, jobRows),
  loop("jobRowsOffer", fresh.offer, jobRows),
  loop("csvRows", fresh.csv, csvRows),
  loop("bulkAnswers", fresh.targetGroup, bulkAnswers)
]

// Same bytes, or no figures; this also warms every loop once.
for (const l of loops) {
  const input = l.input()
  const mine = Buffer.concat(l.write(writers.current, input))
  const theirs = Buffer.concat(l.write(writers.reference, l.input()))
  if (!mine.equals(theirs)) {
    let at = 0
    while (at < mine.length && mine[at] === theirs[at]) at++
    throw new Error(
      `${l.name}: the output differs from the reference at byte ${at}: ${JSON.stringify(mine.subarray(Math.max(0, at - 80), at + 80).toString())} vs ${JSON.stringify(theirs.subarray(Math.max(0, at - 80), at + 80).toString())}`
    )
  }
}

const sides = ["current", "reference"] as const
for (let round = 0; round < rounds; round++) {
  for (const l of round % 2 === 0 ? loops : [...loops].reverse()) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const input = l.input()
      collect()
      const t = timed(() => l.write(writers[side], input).length)
      l.micros[side].push((t.cpuMs * 1000) / emails.length)
    }
  }
}

const perSecond = (micros: ReadonlyArray<number>) => micros.map((m) => 1e6 / m)
const figures = loops.map((l) => ({
  name: l.name,
  rowsPerSecond: spread(perSecond(l.micros.current), 0),
  referenceRowsPerSecond: spread(perSecond(l.micros.reference), 0),
  nanosPerRow: spread(
    l.micros.current.map((m) => m * 1000),
    0
  ),
  referenceNanosPerRow: spread(
    l.micros.reference.map((m) => m * 1000),
    0
  ),
  /** Reference time / new time, per round. */
  speedup: spread(ratios(l.micros.reference, l.micros.current))
}))
for (const f of figures) {
  console.error(
    `${f.name}: ${f.nanosPerRow.median} ns/row (${f.nanosPerRow.min}-${f.nanosPerRow.max}), reference ${f.referenceNanosPerRow.median} ns/row (${f.referenceNanosPerRow.min}-${f.referenceNanosPerRow.max}); speedup ${f.speedup.median}x (${f.speedup.min}-${f.speedup.max})`
  )
}
console.log(JSON.stringify({ rows: emails.length, rounds, quick, clock: "cpu", loops: figures }))
