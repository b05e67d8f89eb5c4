/**
 * One batch of a job: what a job's runner hands an evaluator — on the
 * daemon's own thread, or on a worker thread (`jobs/JobThreads.ts`) — and
 * the bytes that come back. The batch's input lines are decoded, their
 * emails evaluated in one call, and each item's row encoded as result text
 * without `duplicateOf`, which only the runner can know (it appends the
 * batches in input order): the encoded batch says where in each row it
 * goes and carries each email's canonical-address hash, so the runner puts
 * it in as it appends, parsing nothing again. Requests and answers are plain
 * data (bytes, typed arrays, numbers): a worker thread receives and sends
 * them without copying the rows.
 */
import type { JobTarget } from "../domain/Job.ts"
import { needsEscape } from "../domain/jsonText.ts"
import type { MadeHashes, TalliedCounts, UsageTally } from "../domain/OfferUsage.ts"
import type { ResultRow, RowVerdict } from "../domain/ResultRow.ts"
import { rowTextBeforeDuplicate, SharedVerdict, verdictText } from "../domain/rowText.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import type { PlainForms } from "../engine/email/plainAddress.ts"
import { canonicalHash, DUPLICATES_KEY, PlainHashes } from "./duplicates.ts"
import { type BadInput, decodeInputLines, emailOf, type InputItem } from "./inputLines.ts"

/**
 * Validates a chunk of emails against the job's target, one row per email in
 * order (`toResultRow` / `toOfferResultRow`) without its address (a
 * `RowVerdict`: rows may share one), counting offer validations in
 * `tally` when given. `read`: what one pass over the emails found already
 * (their hashes, where they serve the tally, and plain forms). It may
 * throw, e.g. when the target group was removed by a configuration reload:
 * the job then fails with the thrown error's message.
 */
export type Evaluate = (
  target: JobTarget,
  emails: ReadonlyArray<string>,
  tally: UsageTally | undefined,
  read?: (MadeHashes & PlainForms) | undefined,
  /** The job's team: whose reviewed institutions its validations see (`Engine.contextFor`). */
  team?: string | undefined
) => ReadonlyArray<RowVerdict>

/** Why a job failed, in words fit for its record. */
export class JobFailure extends Error {}

/** A batch of a job's input to evaluate. */
export interface BatchRequest {
  readonly target: JobTarget
  /** The job's team; absent in requests made before jobs carried it. */
  readonly team?: string | undefined
  /**
   * Whole input lines (`inputLines.ts`): a view of the reader's buffer, good
   * until the runner reads the next batch. `evaluate` reads them at once or
   * copies them.
   */
  readonly lines: Uint8Array
  /** How many lines (input items). */
  readonly count: number
  /** The job's input columns, which name each item's columns in its row. */
  readonly columns: ReadonlyArray<string>
}

/** A batch evaluated: one row of result text per input item, in order. */
export interface EncodedBatch {
  /** The rows without `duplicateOf`, each ending in a line break. */
  readonly text: Uint8Array
  /** Where `duplicateOf` goes in each row, as an offset into `text`. */
  readonly splices: Uint32Array
  /** Each item's canonical-address hash under the evaluator's `hashKey` (`canonicalHash`), -1 for an item that is not an email. */
  readonly hashes: Float64Array
  readonly valid: number
  readonly badInput: number
  /**
   * Offer usage the batch counted elsewhere (on worker threads: the counts
   * of each that evaluated part of it), for the run's tally once its rows
   * are appended.
   */
  readonly usage?: ReadonlyArray<TalliedCounts> | undefined
}

/** Evaluates a job's batches, here or elsewhere. */
export interface BatchEvaluator {
  /** How many batches of one job may be in flight at once. */
  readonly parallelism: number
  /** The key of its batches' `hashes` (`duplicatesKey`), which a resumed job's earlier rows are hashed with too. */
  readonly hashKey: HashKey
  /**
   * Evaluates one batch, at once or later; a failure fails the job with its
   * message. `tally` is the run's: an evaluator that answers at once may
   * count into it; one that keeps batches in flight must answer the counts
   * in `usage` instead (the runner adds them when it appends the rows), or a
   * checkpoint could carry counts of rows it does not cover.
   */
  evaluate(request: BatchRequest, tally: UsageTally | undefined): EncodedBatch | Promise<EncodedBatch>
  /** A job is on its way (its upload has begun): what takes time to start may start now, ahead of its first batch. */
  prepare?(): void
  /**
   * The runner is done with `batch` (its rows are appended, or its job ended
   * before they were): its buffers may be used again, so the batch is not
   * read after.
   */
  release?(batch: EncodedBatch): void
}

/** Memory a batch's rows are encoded into when they fit (`encodeBatch`): reused, not allocated per batch. */
export interface BatchMemory {
  readonly text: Buffer
  /** Room for a batch's items at most. */
  readonly splices: Uint32Array
  readonly hashes: Float64Array
}

/** Batches evaluated here, one at a time, with `evaluate`; their hashes under `hashKey`. */
export const evaluateHere = (evaluate: Evaluate, hashKey: HashKey = DUPLICATES_KEY): BatchEvaluator => ({
  parallelism: 1,
  hashKey,
  evaluate: (request, tally) => encodeBatch(request, evaluate, tally, undefined, hashKey)
})

const badInputRow = (item: BadInput): ResultRow => ({
  email: item.bad,
  isValid: false,
  reasonCode: "INVALID_EMAIL_FORMAT",
  reason: item.reason
})

/** An item's columns by name (`names`: the job's input columns); undefined when it has none. */
const namedColumns = (item: InputItem, names: ReadonlyArray<string>): Record<string, unknown> | undefined => {
  const values = typeof item === "string" ? undefined : item.columns
  if (values === undefined) return undefined
  const named: Record<string, unknown> = {}
  for (let i = 0; i < names.length; i++) named[names[i]!] = values[i] ?? null
  return named
}

/** Room for a row of the usual 200-310 bytes; the buffer grows when rows are longer. */
const ROW_BYTES = 320

/** A buffer of its own (never a slice of Node's shared pool), so it can be moved to another thread. */
const ownBuffer = (bytes: number): Buffer => Buffer.from(new ArrayBuffer(bytes))

/** Text appended into a buffer (given, or of its own) that is replaced by a larger one of its own as needed. */
class TextBuffer {
  buffer: Buffer
  used = 0
  constructor(bytes: number, given: Buffer | undefined) {
    this.buffer = given ?? ownBuffer(Math.max(bytes, 4096))
  }
  write(text: string): void {
    this.room(text.length * 3)
    this.used += this.buffer.write(text, this.used)
  }
  /** Bytes as they are: a copy, where `write` would encode a string in a call to C++ each time. */
  writeBytes(bytes: Uint8Array): void {
    this.room(bytes.length)
    this.buffer.set(bytes, this.used)
    this.used += bytes.length
  }
  /** `source[start..end]`, copied. */
  copyFrom(source: Buffer, start: number, end: number): void {
    this.room(end - start)
    this.used += source.copy(this.buffer, this.used, start, end)
  }
  /**
   * `jsonString(value)`, written without making it: a string built by `+`
   * or a template is a tree that writing it first copies flat, and a job's
   * rows were a fifth of its thread's allocation that way (sampling heap
   * profile of a 1M-email pass).
   */
  writeJsonString(value: string): void {
    if (needsEscape(value)) {
      this.write(JSON.stringify(value))
      return
    }
    this.room(value.length * 3 + 2)
    const buffer = this.buffer
    buffer[this.used++] = QUOTE
    this.used += buffer.write(value, this.used)
    buffer[this.used++] = QUOTE
  }
  /** `value`, ASCII with nothing JSON escapes, quoted: byte by byte, cheaper than a call to C++ for an email's few bytes. */
  writeAsciiString(value: string): void {
    this.room(value.length + 2)
    const buffer = this.buffer
    let used = this.used
    buffer[used++] = QUOTE
    for (let i = 0; i < value.length; i++) buffer[used++] = value.charCodeAt(i)
    buffer[used++] = QUOTE
    this.used = used
  }
  private room(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return
    const grown = ownBuffer(Math.max(this.buffer.length * 2, this.used + bytes))
    this.buffer.copy(grown, 0, 0, this.used)
    this.buffer = grown
  }
}

const QUOTE = 0x22
const ROW_START = Buffer.from(`{"email":`)
const ROW_END = Buffer.from("}\n")

/**
 * Evaluates a batch with `evaluate` (counting offer usage in `tally`) and
 * encodes its rows, into `memory` when given: the splices and hashes (under
 * `hashKey`) always (it has room for the batch's items), the text while it
 * fits, else into a buffer of the batch's own.
 */
export const encodeBatch = (
  request: BatchRequest,
  evaluate: Evaluate,
  tally: UsageTally | undefined,
  memory?: BatchMemory,
  hashKey: HashKey = DUPLICATES_KEY
): EncodedBatch => {
  const items = decodeInputLines(request.lines)
  const emails: Array<string> = []
  for (const item of items) {
    const email = emailOf(item)
    if (email !== undefined) emails.push(email)
  }
  // Most emails are of the plain form: each is read once, before it is evaluated, and hashed as it is, so that the hash
  // serves as its duplicate hash and, in an offer job's usage count, as its unique-email hash, and the evaluation
  // does not read it again for its form (measured: bench:jobs:batches).
  const plain = new PlainHashes(hashKey, emails)
  let verdicts: ReadonlyArray<RowVerdict>
  try {
    verdicts = emails.length === 0 ? [] : evaluate(request.target, emails, tally, plain, request.team)
  } catch (error) {
    throw new JobFailure(error instanceof Error ? error.message : String(error))
  }
  if (verdicts.length !== emails.length) {
    throw new JobFailure(`The evaluation answered ${verdicts.length} rows for ${emails.length} emails.`)
  }
  if (memory !== undefined && memory.splices.length < items.length) {
    throw new JobFailure(`A batch of ${items.length} items does not fit memory for ${memory.splices.length}.`)
  }
  const text = new TextBuffer(items.length * ROW_BYTES, memory?.text)
  const splices = memory === undefined ? new Uint32Array(items.length) : memory.splices.subarray(0, items.length)
  const hashes = memory === undefined ? new Float64Array(items.length) : memory.hashes.subarray(0, items.length)
  let valid = 0
  let badInput = 0
  for (let i = 0, next = 0; i < items.length; i++) {
    const item = items[i]!
    const email = emailOf(item)
    if (email !== undefined) {
      const verdict = verdicts[next]!
      // An address the engine accepted is most often of the plain form: hashed as it was read, and quoted as it is.
      const plainHash = verdict.reasonCode === "INVALID_EMAIL_FORMAT" ? undefined : plain.hash53(next)
      next++
      hashes[i] = plainHash ?? canonicalHash(email, hashKey) ?? -1
      if (verdict.isValid) valid++
      // The address, then the verdict's text as it is (a shared verdict's is kept as bytes: `SharedVerdict`).
      text.writeBytes(ROW_START)
      if (plainHash === undefined) text.writeJsonString(email)
      else text.writeAsciiString(email)
      if (verdict instanceof SharedVerdict) text.copyFrom(verdict.textChunk, verdict.textStart, verdict.textEnd)
      else text.write(verdictText(verdict))
    } else {
      hashes[i] = -1
      badInput++
      text.write(rowTextBeforeDuplicate(badInputRow(item as BadInput)))
    }
    splices[i] = text.used
    const columns = namedColumns(item, request.columns)
    if (columns === undefined) text.writeBytes(ROW_END)
    else text.write(`,"columns":${JSON.stringify(columns)}}\n`)
  }
  return { text: text.buffer.subarray(0, text.used), splices, hashes, valid, badInput }
}
