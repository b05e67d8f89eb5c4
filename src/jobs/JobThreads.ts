/**
 * In the `jobs/` slice (records, queue, runner, input and result formats),
 * job evaluation on worker threads: this file, `jobThread.ts`,
 * `hostShards.ts`, `batchSlots.ts` and `jobThreadMemory.ts`, the slice's
 * only files that import the core (`app/`). The verdicts by host
 * (`app/rowVerdicts.ts`, `app/HostNumbers.ts`) stay in the core, which
 * serves them through `Validation`.
 *
 * Job batches evaluated on worker threads (`node:worker_threads`, one
 * module: `jobThread.ts`), so a running job no longer shares the event loop
 * that answers requests: with evaluation on that loop, single validations'
 * p99 rose from 3.9 ms to 553 ms while a 1M-email job ran (issue 16).
 *
 * - Each thread holds an engine built from the snapshot in force: a batch
 *   carries the generation it was taken under, and a thread that has not
 *   seen that generation is sent the config first (messages to a thread
 *   arrive in order), so a reload reaches the batches taken after it, as
 *   on the daemon's own thread.
 * - The runner keeps `parallelism` batches of a job in flight and appends
 *   them in input order. With more than one thread, each batch is split by
 *   host across every thread and its rows put back in input order
 *   (`hostShards.ts`): a host's emails always reach the same thread, so
 *   what a thread learns of a host (its facts, the row verdicts) is
 *   learned and kept once in the pool, not once a thread.
 * - Batches travel in memory each thread shares with this one, given once
 *   when it starts (`batchSlots.ts`): the input lines are copied into a
 *   slot, the rows are encoded into it, and the messages carry lengths. A
 *   batch that does not fit moves its own buffers. A slot is the batch's
 *   until the runner releases it. Verdicts are counted in the metrics as they
 *   come back; offer usage comes back as the batch's counts, which the
 *   runner adds to the job's tally when it appends the rows, so checkpoints
 *   and the exactly-once usage of `jobs/jobUsage.ts` are unchanged.
 * - Threads start when a job's upload begins (`prepare`), or else with
 *   its first batch, and stop after `idleMs` without work, giving their
 *   memory back; what they keep while running is
 *   bounded (`jobThreadMemory.ts`). A thread that dies fails the batches it
 *   held (their jobs fail with the reason) and the next batch starts a new
 *   one.
 */
import { type Worker as NodeWorker, Worker } from "node:worker_threads"
import type { EngineConfig } from "../app/EngineBuilder.ts"
import type { Snapshot } from "../app/Snapshot.ts"
import type { ValidationCounters } from "../app/Validation.ts"
import type { UsageTally } from "../domain/OfferUsage.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import type { ReviewQueue, Sighting } from "../reviews/ReviewQueue.ts"
import { type BatchSlot, fitsSlot, slotMemory, slotsOf } from "./batchSlots.ts"
import { duplicatesKey } from "./duplicates.ts"
import { HostShards } from "./hostShards.ts"
import { type BatchEvaluator, type BatchRequest, type EncodedBatch, JobFailure } from "./jobBatches.ts"
import { jobThreadLimits } from "./jobThreadMemory.ts"

/** What every thread is started with. */
export interface ThreadData {
  /** The unique-email key of the usage statistics; undefined when nothing is counted. */
  readonly usageKey: HashKey | undefined
  /** The memory of the thread's batch slots (`batchSlots.ts`). */
  readonly slots: SharedArrayBuffer
}

/** A batch's verdicts by kind, for the metrics. */
export type Verdicts = Array<{ readonly isValid: boolean; readonly reasonCode: string | undefined; times: number }>

export type ThreadMessage =
  | {
      readonly kind: "config"
      readonly builtInInstitutions: boolean
      readonly config: EngineConfig
      /** The daemon's institution table for this config, in shared memory: the thread reads it, no copy of its own. */
      readonly institutions: Uint8Array | undefined
      /** The names the table's datasets are read under (`InstitutionTable.datasetNames`). */
      readonly institutionDatasetNames: Readonly<Record<string, string>> | undefined
      /** The daemon's email lists, in shared memory, as the table. */
      readonly emailLists: Uint8Array | undefined
    }
  | {
      readonly kind: "batch"
      readonly id: number
      /** The instant offer windows are judged at (the daemon's clock). */
      readonly at: number
      readonly countUsage: boolean
      readonly request: Omit<BatchRequest, "lines">
      /** The batch's slot, or undefined: it has none (its lines are moved, and its rows come back so). */
      readonly slot: number | undefined
      /** The input lines: that many bytes in the slot, or moved with the message. */
      readonly lines: number | Uint8Array
    }

/** A batch's rows as they come back: what is in the batch's slot by its length (text) or as undefined. */
export interface AnsweredBatch extends Omit<EncodedBatch, "text" | "splices" | "hashes"> {
  readonly text: number | Uint8Array
  readonly splices: Uint32Array | undefined
  readonly hashes: Float64Array | undefined
}

export type ThreadAnswer =
  | {
      readonly id: number
      readonly ok: true
      readonly batch: AnsweredBatch
      readonly verdicts: Verdicts
      /** The unknown domains the batch met, by team, for the review queue. */
      readonly sightings: ReadonlyArray<readonly [team: string, seen: ReadonlyArray<Sighting>]>
    }
  | { readonly id: number; readonly ok: false; readonly error: string }

export interface JobThreadsOptions {
  /** Threads at most (at least 1). */
  readonly threads: number
  readonly snapshot: Pick<Snapshot["Service"], "current">
  /** Where verdicts are counted (the daemon's metrics). */
  readonly counters?: ValidationCounters["Service"] | undefined
  /** Where the unknown domains jobs meet are recorded for review; undefined: nowhere. */
  readonly reviews?: Pick<ReviewQueue["Service"], "seen"> | undefined
  /** The usage statistics' unique-email key; undefined: offer usage is not counted. */
  readonly usageKey?: HashKey | undefined
  /** A thread without work this long is stopped (default 30 s). */
  readonly idleMs?: number | undefined
}

/** The thread module beside this one: `.ts` when running from source, `.js` when built. */
const threadUrl = new URL(import.meta.url.endsWith(".ts") ? "./jobThread.ts" : "./jobThread.js", import.meta.url)

interface Waiting {
  readonly resolve: (batch: EncodedBatch) => void
  readonly reject: (error: Error) => void
  /** The batch's slot, or undefined. */
  readonly slot: BatchSlot | undefined
  readonly count: number
}

interface Thread {
  readonly worker: NodeWorker
  /** The snapshot generation it was last sent (0: none). */
  generation: number
  readonly waiting: Map<number, Waiting>
  /** Its batch slots, and the numbers of those no batch holds. */
  readonly slots: ReadonlyArray<BatchSlot>
  readonly free: Array<number>
  idle: ReturnType<typeof setTimeout> | undefined
  stopping: boolean
}

/** What a batch is evaluated under: the snapshot in force when it is taken. */
type Current = ReturnType<JobThreadsOptions["snapshot"]["current"]>

/** `bytes` if they are in shared memory, which a message shares rather than copies. */
const sharedOrNone = (bytes: Uint8Array | undefined): Uint8Array | undefined =>
  bytes?.buffer instanceof SharedArrayBuffer ? bytes : undefined

/** Batches of one job in flight per thread: one evaluated while the answer of the other travels. */
const BATCHES_PER_THREAD = 2

export class JobThreads implements BatchEvaluator {
  readonly parallelism: number
  readonly hashKey: HashKey
  readonly #options: JobThreadsOptions
  readonly #threads: Array<Thread | undefined>
  /** The thread and slot of each answered batch that holds one, until it is released. */
  readonly #held = new WeakMap<EncodedBatch, { readonly thread: Thread; readonly slot: number }>()
  /** Batches split by host across the threads, and their parts merged (with more than one thread). */
  readonly #shards: HostShards
  #nextId = 0
  #closed = false

  constructor(options: JobThreadsOptions) {
    const threads = Math.max(1, Math.floor(options.threads))
    this.#options = options
    this.#threads = new Array<Thread | undefined>(threads).fill(undefined)
    this.#shards = new HostShards(threads)
    this.parallelism = threads * BATCHES_PER_THREAD
    this.hashKey = duplicatesKey(options.usageKey)
  }

  /** Threads running now. */
  get running(): number {
    return this.#threads.filter((thread) => thread !== undefined).length
  }

  /**
   * A job is on its way (its upload has begun): every thread is started
   * and sent the configuration in force, so that it loads its modules and
   * builds its engine (1-2.5 s on the 2-core machine) while the upload is
   * read, not after the job's first batch is sent. A thread that gets no
   * batch stops after `idleMs`, as an idle one does.
   */
  prepare(): void {
    if (this.#closed) return
    const snapshot = this.#options.snapshot.current()
    for (let i = 0; i < this.#threads.length; i++) {
      const thread = this.#threads[i] ?? this.#start()
      this.#threads[i] = thread
      this.#configure(thread, snapshot)
      if (thread.waiting.size === 0) this.#idle(thread)
    }
  }

  evaluate(request: BatchRequest, tally: UsageTally | undefined): Promise<EncodedBatch> {
    if (this.#closed) return Promise.reject(new JobFailure("The job threads are stopped."))
    const snapshot = this.#options.snapshot.current()
    if (this.#threads.length === 1 || request.count === 0) return this.#send(this.#pick(), snapshot, request, tally)
    return this.#evaluateSplit(snapshot, request, tally)
  }

  /**
   * The batch split by host across every thread (`hostShards.ts`): the
   * emails of one host always go to the same thread, so each host is
   * learned by one thread and kept once. Its rows are put back in input
   * order into memory of this pool's, given back on `release`.
   */
  async #evaluateSplit(snapshot: Current, request: BatchRequest, tally: UsageTally | undefined): Promise<EncodedBatch> {
    const owners = new Uint16Array(request.count)
    const parts = this.#shards.split(request.lines, request.count, owners)
    // `#send` copies a part's lines before it returns, so the split buffers serve the next batch.
    const settled = await Promise.allSettled(
      parts.map((part, shard) =>
        part.count === 0
          ? undefined
          : this.#send(this.#shard(shard), snapshot, { ...request, lines: part.lines, count: part.count }, tally)
      )
    )
    const answered = settled.map((result) => (result?.status === "fulfilled" ? result.value : undefined))
    const failed = settled.find((result) => result?.status === "rejected")
    if (failed !== undefined) {
      for (const part of answered) if (part !== undefined) this.release(part)
      throw (failed as PromiseRejectedResult).reason
    }
    const batch = this.#shards.merge(owners, request.count, answered)
    for (const part of answered) if (part !== undefined) this.release(part)
    return batch
  }

  /** The thread of shard `shard`, started when it is not running. */
  #shard(shard: number): Thread {
    let thread = this.#threads[shard]
    if (thread === undefined) {
      thread = this.#start()
      this.#threads[shard] = thread
    }
    return thread
  }

  /** Sends `thread` the configuration of `snapshot` unless it has it (messages arrive in order: before any batch sent after). */
  #configure(thread: Thread, snapshot: Current): void {
    if (thread.generation === snapshot.generation) return
    const { config } = snapshot
    const { index, lists } = snapshot.engine.context
    thread.worker.postMessage({
      kind: "config",
      builtInInstitutions: snapshot.builtInInstitutions,
      config: {
        dataDir: config.dataDir,
        datasets: config.datasets,
        targetGroups: config.targetGroups,
        offers: config.offers
      },
      // Only shared memory: other bytes would be copied into the message (the thread then reads its own).
      institutions: sharedOrNone(index.bytes),
      institutionDatasetNames: index.datasetNames,
      emailLists: sharedOrNone(lists.bytes)
    } satisfies ThreadMessage)
    thread.generation = snapshot.generation
  }

  /** Sends `request` to `thread`: the configuration first when the thread has not seen the one in force. */
  #send(
    thread: Thread,
    snapshot: Current,
    request: BatchRequest,
    tally: UsageTally | undefined
  ): Promise<EncodedBatch> {
    this.#configure(thread, snapshot)
    const id = ++this.#nextId
    const { lines, ...rest } = request
    const free = fitsSlot(request.count, lines.length) ? thread.free.pop() : undefined
    const slot = free === undefined ? undefined : thread.slots[free]!
    // The lines are the reader's until it reads again: copied into the slot, or into a buffer to move.
    let sent: number | Uint8Array
    if (slot === undefined) sent = new Uint8Array(lines)
    else {
      slot.input.set(lines)
      sent = lines.length
    }
    const message: ThreadMessage = {
      kind: "batch",
      id,
      at: snapshot.engine.now(),
      countUsage: tally !== undefined,
      request: rest,
      slot: slot?.index,
      lines: sent
    }
    return new Promise<EncodedBatch>((resolve, reject) => {
      if (thread.waiting.size === 0) {
        clearTimeout(thread.idle)
        thread.worker.ref()
      }
      thread.waiting.set(id, { resolve, reject, slot, count: request.count })
      thread.worker.postMessage(message, typeof sent === "number" ? [] : [sent.buffer as ArrayBuffer])
    })
  }

  /** Gives the batch's slot back to its thread, for a later batch. */
  release(batch: EncodedBatch): void {
    if (this.#shards.release(batch)) return
    const held = this.#held.get(batch)
    if (held === undefined) return
    this.#held.delete(batch)
    held.thread.free.push(held.slot)
  }

  /** Stops every thread; batches still waiting fail. */
  async close(): Promise<void> {
    this.#closed = true
    const threads = this.#threads.filter((thread): thread is Thread => thread !== undefined)
    this.#threads.fill(undefined)
    await Promise.all(threads.map((thread) => this.#stop(thread, "The job threads were stopped.")))
  }

  /** The thread with the least work; a new one when every running thread has some and a slot is free. */
  #pick(): Thread {
    let best: Thread | undefined
    let free = -1
    for (let i = 0; i < this.#threads.length; i++) {
      const thread = this.#threads[i]
      if (thread === undefined) {
        if (free < 0) free = i
      } else if (best === undefined || thread.waiting.size < best.waiting.size) best = thread
    }
    if (best !== undefined && (best.waiting.size === 0 || free < 0)) return best
    const started = this.#start()
    this.#threads[free] = started
    return started
  }

  #start(): Thread {
    const memory = slotMemory()
    const worker = new Worker(threadUrl, {
      workerData: { usageKey: this.#options.usageKey, slots: memory } satisfies ThreadData,
      resourceLimits: jobThreadLimits()
    })
    worker.unref()
    const slots = slotsOf(memory)
    const thread: Thread = {
      worker,
      generation: 0,
      waiting: new Map(),
      slots,
      free: slots.map((slot) => slot.index).reverse(),
      idle: undefined,
      stopping: false
    }
    worker.on("message", (answer: ThreadAnswer) => this.#answered(thread, answer))
    worker.on("error", (error) => this.#failAll(thread, `The job's evaluation thread failed: ${error.message}`))
    worker.on("exit", (code) => {
      this.#forget(thread)
      this.#failAll(thread, `The job's evaluation thread stopped (exit code ${code}).`)
    })
    return thread
  }

  #answered(thread: Thread, answer: ThreadAnswer): void {
    const waiting = thread.waiting.get(answer.id)
    if (waiting === undefined) return
    thread.waiting.delete(answer.id)
    if (thread.waiting.size === 0) this.#idle(thread)
    if (!answer.ok) {
      if (waiting.slot !== undefined) thread.free.push(waiting.slot.index)
      waiting.reject(new JobFailure(answer.error))
      return
    }
    const counters = this.#options.counters
    if (counters !== undefined) {
      for (const verdict of answer.verdicts) {
        if (counters.validatedTimes !== undefined) counters.validatedTimes(verdict, verdict.times)
        else for (let i = 0; i < verdict.times; i++) counters.validated(verdict)
      }
    }
    const reviews = this.#options.reviews
    if (reviews !== undefined) for (const [team, seen] of answer.sightings) reviews.seen(team, seen)
    const { slot, count } = waiting
    const sent = answer.batch
    const batch: EncodedBatch = {
      ...sent,
      text: typeof sent.text === "number" ? slot!.text.subarray(0, sent.text) : sent.text,
      splices: sent.splices ?? slot!.splices.subarray(0, count),
      hashes: sent.hashes ?? slot!.hashes.subarray(0, count)
    }
    if (slot !== undefined) this.#held.set(batch, { thread, slot: slot.index })
    waiting.resolve(batch)
  }

  /** No work left: the thread no longer keeps the process alive, and stops if none comes. */
  #idle(thread: Thread): void {
    thread.worker.unref()
    clearTimeout(thread.idle)
    thread.idle = setTimeout(() => {
      if (thread.waiting.size > 0) return
      this.#forget(thread)
      void this.#stop(thread, "The job thread was stopped.")
    }, this.#options.idleMs ?? 30_000)
    thread.idle.unref()
  }

  #forget(thread: Thread): void {
    const slot = this.#threads.indexOf(thread)
    if (slot >= 0) this.#threads[slot] = undefined
  }

  #failAll(thread: Thread, reason: string): void {
    clearTimeout(thread.idle)
    const waiting = [...thread.waiting.values()]
    thread.waiting.clear()
    for (const { reject } of waiting) reject(new JobFailure(thread.stopping ? "The job threads were stopped." : reason))
  }

  async #stop(thread: Thread, reason: string): Promise<void> {
    thread.stopping = true
    this.#failAll(thread, reason)
    await thread.worker.terminate()
  }
}
