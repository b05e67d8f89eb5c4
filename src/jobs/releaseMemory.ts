/**
 * Gives the request thread's young generation back around job runs. V8
 * sizes a thread's young generation by how much survives its collections
 * and keeps what it grew to, up to a maximum it takes from the machine's
 * memory (64 MB semi-spaces on a 24 GB machine): building the engine at
 * start and reading a 1M-email upload grow the request thread's to that
 * maximum, 128 MB resident for the daemon's life, while a running job
 * allocates there at a few MB/s (appending rows, answering requests), which
 * 8 MB serve. `release` runs a memory-reducing collection when the young
 * generation is larger than that, which shrinks it; `processJob` calls it
 * when a run starts with no other run going (after the upload) and when the
 * last run ends, and `Jobs.ts` when an upload begins with no run going
 * (`uploadBegins`). Measured (bench:jobs, pinned, one run each on the shared
 * 2-core machine): the daemon's peak RSS after the first 1M-email job 440 MB
 * against 624 MB; three collections in five jobs, 0.2-0.4 s each.
 *
 * Kept at 8 MB rather than 16 (`KEPT_YOUNG_GENERATION_MB`): a run grows the
 * young generation to 16 MB (`--trace-gc`: the thread's heap 57 MB after a
 * release, 74-77 MB by a run's end), which 16 left in place for the next
 * upload to double (93 MB at that upload, the moment of the daemon's peak
 * RSS); at 8 the release at a run's end takes it back first. Measured
 * against 16, `BENCH_BEFORE_TREE=<16> BENCH_ROUNDS=1 npm run bench:jobs`,
 * three runs: VmHWM after five jobs 365 and 359 MB against 380 and 385 MB
 * pinned, 374 against 390 MB unpinned; two pairs of collections in five
 * jobs either way (64-71 ms each), job times and p99 alike within the
 * machine's noise.
 *
 * Its cost, measured since (two 1M-email jobs, a target group then the
 * three-group offer, two job threads, `--trace-incremental-marking`): a
 * memory-reducing collection also sets V8's old-generation limit to about
 * 1.1x what is live (89 MB live, a limit of 100-107 MB after the release at
 * a run's start, 172 MB without it), so the next marking starts after a
 * few MB are promoted. The request thread started 44 incremental markings
 * during the two jobs against 31 without the release, each freeing ~2 MB;
 * without the release they were started by V8's own scheduling ("task")
 * and by the batches' transferred buffers ("external memory pressure").
 * Marking steps run between requests, so they are a likely share of the
 * p99 while a job runs. The same release once the
 * daemon has started (215 MB resident idle against 362 MB) was measured at
 * 0.93x the idle single-validation throughput (two alternating rounds), so
 * it is not done.
 *
 * V8 offers that collection only to scripts given `gc` (`--expose-gc`): the
 * flag is set here at run time, which gives a new context the function and
 * changes nothing else. Where that fails, nothing is released.
 */
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/** A young generation of at most this many MB is left as it is. */
export const KEPT_YOUNG_GENERATION_MB = 8

type Collect = (options: { type: "major"; execution: "sync"; flavor?: "last-resort" }) => void

/** V8's `gc`, got once; null where it cannot be had. */
let collect: Collect | null | undefined

const collector = (): Collect | null => {
  if (collect === undefined) {
    try {
      setFlagsFromString("--expose-gc")
      const found: unknown = runInNewContext("typeof gc === 'function' ? gc : null")
      collect = typeof found === "function" ? (found as Collect) : null
    } catch {
      collect = null
    }
  }
  return collect
}

/** This thread's young generation (the new space's two semi-spaces), in MB. */
export const youngGenerationMb = (): number => {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === "new_space") return space.space_size / (1024 * 1024)
  }
  return 0
}

/** Shrinks this thread's young generation when it is larger than `KEPT_YOUNG_GENERATION_MB`; answers whether it collected. */
export const releaseMemory = (): boolean => {
  if (youngGenerationMb() <= KEPT_YOUNG_GENERATION_MB) return false
  const gc = collector()
  if (gc === null) return false
  gc({ type: "major", execution: "sync", flavor: "last-resort" })
  return true
}

/**
 * A thread's heap kept near what is live in it. V8 lets a heap grow to a
 * multiple of what its last full collection left before it collects again,
 * a multiple it takes from the machine's memory (up to 4 on a large one):
 * a job thread that learns ~70 MB over its first jobs (`jobs/jobThreadMemory.ts`)
 * ran one full collection in five 1M-email jobs and held what it had
 * promoted meanwhile. `check` runs a full collection when the heap holds
 * more than `factor` times what the last one left plus `slackMb`, so the
 * heap follows what is live; the first check only takes the measure.
 */
export class HeapBound {
  #live: number | undefined
  readonly #factor: number
  readonly #slackBytes: number

  constructor(options: { readonly factor: number; readonly slackMb: number }) {
    this.#factor = options.factor
    this.#slackBytes = options.slackMb * 1024 * 1024
  }

  /**
   * Collects in full now and takes what is left as the measure: for a
   * thread that has just built what it keeps (its engine), whose garbage a
   * first `check` would otherwise count as live, more or less of it as the
   * collector's timing falls, and then let the heap grow that much further
   * before its next full collection. Measured on a job thread, after each
   * engine build (`BENCH_RUNS=6 BENCH_BEFORE_TREE=<without> npm run
   * bench:jobs:runs`, one core, two sets of six alternating pairs): VmHWM
   * after five 1M-email jobs 356-371 MB against 366-398 MB (the tree
   * without it also reached 400 MB once in four runs alone); the cold offer
   * job 1.03 (0.97-1.17) and 0.97 (0.88-1.14) of the time, the first job
   * 1.02 and 1.06, which it starts during.
   */
  settle(): void {
    this.#collect()
  }

  /** Collects when the heap has grown past the bound; answers whether it collected. */
  check(): boolean {
    const used = getHeapStatistics().used_heap_size
    if (this.#live === undefined) {
      this.#live = used
      return false
    }
    if (used <= this.#live * this.#factor + this.#slackBytes) return false
    return this.#collect()
  }

  /** A full collection, and what it left as the measure; false where V8's `gc` cannot be had. */
  #collect(): boolean {
    const gc = collector()
    if (gc === null) return false
    gc({ type: "major", execution: "sync" })
    this.#live = getHeapStatistics().used_heap_size
    return true
  }
}

/** Runs in progress in this process (`processJob`). */
let runs = 0

/** A run starts: alone, after its upload, it starts from a small young generation. */
export const runStarted = (): void => {
  if (runs++ === 0) releaseMemory()
}

/** A run ends: the last one gives the young generation back. */
export const runEnded = (): void => {
  if (--runs === 0) releaseMemory()
}

/**
 * A job's upload begins, before its job threads start (`Jobs.ts`): with no
 * run going, the young generation is given back now, so that the heap the
 * daemon's start left (its engine build's garbage in a young generation
 * grown to V8's maximum) is collected before a job thread builds its own
 * engine beside it, not after the upload, when `runStarted` releases it.
 * The daemon's peak RSS is its start's (~372-380 MB idle after start,
 * pinned to one core: the request thread's heap ~250 MB committed, ~97 MB
 * live); a job's thread then added ~50 MB above it before the release.
 * Measured with `BENCH_ORDER=offer-first BENCH_ROUNDS=0
 * BENCH_BEFORE_TREE=<the code before> npm run bench:jobs` (pinned, one run
 * on the shared machine): VmHWM after five 1M-email jobs 383 MB against
 * 429 MB, the daemon's CPU seconds alike (cold offer job 10.2 against 10.3);
 * 366-394 MB over five runs since (the tree before: 393-429 MB). Dropping
 * `runStarted`'s release then (the upload regrows the young generation to
 * ~16 MB, 0.25-0.3 s of collection when it fires) saved no CPU in two
 * alternating runs (the daemon's CPU over five jobs 27.3 and 27.7 s against
 * 26.6 and 24.6) for VmHWM 383 and 376 MB against 372 and 394: kept.
 */
export const uploadBegins = (): void => {
  if (runs === 0) releaseMemory()
}
