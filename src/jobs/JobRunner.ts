/**
 * Runs one job through its input in batches, without an Effect per email.
 * `next` reads the next batch of input lines; an evaluator turns it into
 * encoded rows (`jobBatches.ts`: here, or on a worker thread, several
 * batches at once); `append` takes the encoded batches back in input order,
 * names the duplicates and appends the rows to the results.
 * `flush` makes the results durable in the store (a cut included) and
 * `checkpoint` then answers the record to write, whose checkpoint names the
 * bytes of both files that are done (the caller checkpoints once a chunk of
 * items): one rule, a record written names only bytes the store holds. The
 * files are the job store's (`JobBytes`), opened and closed by the caller.
 * `resume` cuts the results back to the checkpoint (stored at the next
 * flush) and rebuilds the duplicate set from the inputs already done, so
 * after any crash the results hold each input item exactly once, in input
 * order.
 */
import type { UsageTally } from "../domain/OfferUsage.ts"
import { duplicateOfText } from "../domain/rowText.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import { DuplicateSet } from "./duplicates.ts"
import { emailOf, InputReader } from "./inputLines.ts"
import { type Job, percentOf } from "./Job.ts"
import type { JobBytes } from "./JobStore.ts"
import { type BatchRequest, type EncodedBatch, JobFailure } from "./jobBatches.ts"

export interface RunnerOptions {
  /** Input items between checkpoints (the caller checkpoints); batches are never larger. */
  readonly chunkItems: number
  /** Where this run counts its usage; each checkpoint takes what it counted. */
  readonly tally?: UsageTally | undefined
  /** The key of the batches' hashes (`BatchEvaluator.hashKey`), which the rows written before a resume are hashed with. */
  readonly hashKey?: HashKey | undefined
}

interface Tally {
  valid: number
  duplicates: number
  badInput: number
}

/**
 * Input items evaluated at once: small enough that a batch's rows and
 * strings die young (cheap minor collections) and that a batch takes a few
 * milliseconds, so the event loop is never held long; fsync and the
 * checkpoint stay once a chunk. bench/jobRunner.ts at 300k emails: peak RSS
 * 330 MB against 402 MB evaluating whole 25k chunks, and 1.7-2.6 s against
 * 2.9-5.3 s (two runs each, shared machine).
 */
export const BATCH_ITEMS = 2048

/** Input bytes read per block: generous for the usual 20-40 byte line. */
const blockBytesFor = (chunkItems: number): number => Math.min(64 * 1024 * 1024, Math.max(64 * 1024, chunkItems * 64))

/** A batch read and not yet appended: its request and the input bytes it took. */
export interface PendingBatch {
  readonly request: BatchRequest
  readonly inputBytes: number
}

export class JobRunner {
  /** The record as of the last checkpoint. */
  private committed: Job
  private pending: Tally & { items: number; inputBytes: number; resultsBytes: number }
  private exhausted = false
  private readonly reader: InputReader
  private readonly results: JobBytes
  private readonly duplicates: DuplicateSet
  private readonly batchItems: number
  private readonly runTally: UsageTally | undefined

  private constructor(
    job: Job,
    options: RunnerOptions,
    reader: InputReader,
    results: JobBytes,
    duplicates: DuplicateSet
  ) {
    this.committed = job
    this.batchItems = Math.min(BATCH_ITEMS, options.chunkItems)
    this.runTally = options.tally
    this.pending = emptyPending()
    this.reader = reader
    this.results = results
    this.duplicates = duplicates
  }

  /** Goes on with the job where its checkpoint says; throws `JobFailure` when its files disagree with it. */
  static resume(
    files: { readonly input: JobBytes; readonly results: JobBytes },
    job: Job,
    options: RunnerOptions
  ): JobRunner {
    const { inputBytes, resultsBytes } = job.checkpoint
    const blockBytes = blockBytesFor(options.chunkItems)
    const duplicates = new DuplicateSet(job.progress.total, options.hashKey)
    if (inputBytes > 0) {
      const done = new InputReader(files.input, { offset: 0, end: inputBytes, blockBytes })
      let row = 0
      for (let chunk = done.next(BATCH_ITEMS); chunk !== undefined; chunk = done.next(BATCH_ITEMS)) {
        for (const item of chunk.items) {
          row++
          const email = emailOf(item)
          if (email !== undefined) duplicates.firstRow(email, row)
        }
      }
    }
    const { results } = files
    if (results.size() < resultsBytes) throw new JobFailure("The job's results file is shorter than its checkpoint.")
    results.truncate(resultsBytes)
    const reader = new InputReader(files.input, { offset: inputBytes, blockBytes })
    return new JobRunner(job, options, reader, results, duplicates)
  }

  /** The record as of the last checkpoint. */
  get job(): Job {
    return this.committed
  }

  /** The run's usage tally (absent when the job's validations are not counted). */
  get tally(): UsageTally | undefined {
    return this.runTally
  }

  /** True once `next` has read the whole input. */
  get inputDone(): boolean {
    return this.exhausted
  }

  /** Input items appended since the last checkpoint. */
  get uncommitted(): number {
    return this.pending.items
  }

  /** The next batch of input, or undefined once the whole input has been read. */
  next(): PendingBatch | undefined {
    if (this.exhausted) return undefined
    const chunk = this.reader.nextLines(this.batchItems)
    if (chunk === undefined) {
      this.exhausted = true
      return undefined
    }
    const request: BatchRequest = {
      target: this.committed.target,
      team: this.committed.team,
      lines: chunk.lines,
      count: chunk.count,
      columns: this.committed.inputColumns ?? []
    }
    return { request, inputBytes: chunk.lines.length }
  }

  /**
   * Appends the rows of `batch`, the evaluation of `read` (batches in the
   * order `next` gave them), naming duplicates; they are not yet flushed to
   * disk. Throws `JobFailure` when the batch does not answer its items.
   */
  append(read: PendingBatch, batch: EncodedBatch): void {
    const { count } = read.request
    if (batch.splices.length !== count || batch.hashes.length !== count) {
      throw new JobFailure(`The evaluation answered ${batch.splices.length} rows for ${count} input items.`)
    }
    const pending = this.pending
    const position = this.committed.checkpoint.resultsBytes + pending.resultsBytes
    const firstRow = this.committed.checkpoint.processed + pending.items + 1
    const { text, splices, hashes } = batch
    // The batch's text as it was encoded, cut where a row names the earlier row it repeats, in one write.
    const parts: Array<Uint8Array> = []
    let duplicates = 0
    let from = 0
    for (let i = 0; i < count; i++) {
      const hash = hashes[i]!
      if (hash < 0) continue
      const earlier = this.duplicates.firstRowOfHash(hash, firstRow + i)
      if (earlier === undefined) continue
      duplicates++
      parts.push(text.subarray(from, splices[i]!), Buffer.from(duplicateOfText(earlier), "latin1"))
      from = splices[i]!
    }
    parts.push(text.subarray(from))
    pending.resultsBytes += this.results.writeParts(parts, position)
    pending.items += count
    pending.inputBytes += read.inputBytes
    pending.valid += batch.valid
    pending.duplicates += duplicates
    pending.badInput += batch.badInput
    if (batch.usage !== undefined) for (const counts of batch.usage) this.runTally?.addCounts(counts)
  }

  /** Makes the results as they are (rows appended, a cut) durable in the store without holding the thread; `checkpoint` then. */
  flush(): Promise<void> {
    return this.results.flush()
  }

  /**
   * The record that covers the rows appended so far, for the caller to
   * write once `flush` has made them durable (nothing appended since), with
   * the usage they counted (which the caller stores once the record is
   * written).
   */
  checkpoint(): Job {
    const pending = this.pending
    if (pending.items === 0) return this.committed
    const { checkpoint, counts, progress } = this.committed
    const processed = checkpoint.processed + pending.items
    const usage = this.runTally?.take()
    this.committed = {
      ...this.committed,
      progress: { ...progress, processed, percent: Math.min(100, percentOf(processed, progress.total)) },
      counts: {
        valid: counts.valid + pending.valid,
        invalid: counts.invalid + pending.items - pending.valid,
        duplicates: counts.duplicates + pending.duplicates,
        badInput: counts.badInput + pending.badInput
      },
      checkpoint: {
        processed,
        inputBytes: checkpoint.inputBytes + pending.inputBytes,
        resultsBytes: checkpoint.resultsBytes + pending.resultsBytes,
        ...(usage === undefined ? {} : { usage })
      }
    }
    this.pending = emptyPending()
    return this.committed
  }

  /** Cuts off rows appended (and usage counted) since the last checkpoint, so the results match the record (after a failure; `flush` then). */
  discard(): void {
    this.results.truncate(this.committed.checkpoint.resultsBytes)
    this.runTally?.take()
    this.pending = emptyPending()
  }

  /** Takes back the usage of a checkpoint that could not be stored: the next checkpoint carries it. */
  usageNotStored(): void {
    const usage = this.committed.checkpoint.usage
    if (usage !== undefined) this.runTally?.restore(usage)
  }
}

const emptyPending = () => ({ items: 0, inputBytes: 0, resultsBytes: 0, valid: 0, duplicates: 0, badInput: 0 })
