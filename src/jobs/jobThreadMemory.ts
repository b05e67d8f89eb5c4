/**
 * A job thread's memory, bounded by design (issue 16: the daemon's peak RSS
 * over successive 1M-email jobs). A thread holds the modules, its own copy
 * of the engine — the same engine as the request thread's — and what it
 * learns while judging: each host's facts (`engine/targeting/HostDirectory.ts`)
 * and each job target's row verdicts by host (`rowVerdicts.ts`: at most
 * 128k hosts a target, 20-60 MB with their verdicts' text for bench:jobs'
 * targets). With more than one thread, a thread meets only its share of the
 * hosts (batches are split by host, `hostShards.ts`), so what it learned is
 * that share. Nothing else lives beyond a batch: a batch's lines, rows and
 * text die young or travel back.
 *
 * - Its engine keeps no target group's verdicts on institutions
 *   (`EngineContext.remembersVerdicts`), which the request thread's engine
 *   keeps so that the next email of an institution costs a lookup. A job
 *   judges a host once per target and keeps the row, and a new host of a
 *   matched domain judged before mostly takes its row (`rowVerdicts.ts`),
 *   so an institution's verdict is asked for about once per matched
 *   domain (~39k in bench:jobs' mix, of ~113k hosts); keeping the verdicts
 *   of a few groups held ~80 MB live (heap snapshot of the thread: 195 MB live, the
 *   engine 43 MB, the verdicts of four groups 83 MB, the host directory's
 *   records 31 MB). Every verdict a job keeps was copied by the thread's
 *   young-generation collections and traced by its old-generation ones.
 *   Measured without them (`BENCH_BEFORE_TREE=<the code before> npm run
 *   bench:jobs`, shared 2-core machine, one run each): VmHWM after five
 *   jobs 460 MB against 530 MB on one core, 762 MB against 850 MB with two
 *   threads; the cold offer job 7.7 s against 8.1 s, and 3.8 s against
 *   4.7 s; the other jobs alike within the machine's noise. Also measured
 *   with the daemon's jobs in turn, two alternating rounds: 498-513 MB
 *   against 524-541 MB on one core, 724-761 MB against 817-867 MB with two
 *   threads after four jobs.
 * - The old generation is not capped: a `maxOldGenerationSizeMb` under 2 GB
 *   also lowers V8's heap growing factor (to ~1.35 at 384 MB), so the offer
 *   job ran 8-26 full collections per 2M emails (0.5-2.6 s) where 2-5 ran
 *   without (one thread, shared machine), bench:jobs took 1.12-1.41x as long
 *   (three alternating runs) against 0.91x uncapped, and a cap ends the
 *   thread when live data passes it.
 */

/**
 * When a job thread collects its heap in full (`HeapBound`, checked after
 * each batch, and settled once its engine is built): past 1.25 times what
 * the last full collection left, plus 16 MB. V8's own bound let the thread's heap reach ~220 MB around ~130 MB
 * live (`--trace-gc`: one full collection in five 1M-email jobs, on one
 * core). Measured with `BENCH_BEFORE_TREE=<the code before> BENCH_ROUNDS=1
 * npm run bench:jobs` (one core, shared machine, VmHWM after five jobs):
 * - a bound of 1.5x plus 24 MB against none: 435 MB against 536 MB, end to
 *   end 1.02x (0.96-1.12x) as long; one collection of 0.2-0.25 s;
 * - this bound against that one, both with a 16 MB young generation: 405 MB
 *   against 420 MB, end to end 0.96x (0.88-1.00x); two collections of
 *   0.17-0.23 s in five jobs (`--trace-gc`), the heap at most ~160 MB.
 */
export const HEAP_BOUND = { factor: 1.25, slackMb: 16 } as const

/**
 * A thread's young generation, where a batch's rows and strings live and
 * die. V8 sizes it from the machine's memory (128 MB on a 24 GB machine)
 * and keeps what it grew to. Before `HEAP_BOUND`, 16 MB let batches
 * promote into the old generation what no collection freed (the thread's
 * heap grew to ~300 MB over 1M-email jobs, against ~165 MB at 32 MB); with
 * it, what they promote is collected. Measured at 16 MB against 32 MB, both
 * bounded (`BENCH_BEFORE_TREE=<32 MB> BENCH_ROUNDS=1 npm run bench:jobs`,
 * one core, shared machine): VmHWM after five jobs 418 MB against 458 MB,
 * end to end 0.94x (0.83-1.11x) as long.
 */
export const YOUNG_GENERATION_MB = 16

/** The `resourceLimits` of a job thread: its young generation only. */
export const jobThreadLimits = () => ({ maxYoungGenerationSizeMb: YOUNG_GENERATION_MB })
