/**
 * A job thread's memory, bounded by design (issue 16: the daemon's peak RSS
 * over successive 1M-email jobs). A thread holds the modules, its own copy
 * of the engine — the same engine as the request thread's — and what the
 * engine remembers while judging: each target group's verdict per
 * institution met, beside each host's facts the verdicts of the last
 * four groups (`engine/targeting/HostDirectory.ts`), and each job target's
 * row verdicts by host (`rowVerdicts.ts`: at most 128k hosts a target,
 * 20-60 MB with their verdicts' text for bench:jobs' targets). With more
 * than one thread, a thread meets only its share of the hosts (batches
 * are split by host, `hostShards.ts`), so what it learned is that share.
 * Nothing else lives beyond a batch: a batch's lines, rows and text die
 * young or travel back.
 *
 * - The verdicts are bounded by the groups they are kept for: a thread
 *   remembers those of at most `VERDICT_GROUPS` target groups (or of one
 *   offer's groups, when it has more) and forgets them all before judging
 *   another (`jobThread.ts`). Forgetting costs the verdicts' warm-up again
 *   (each institution judged once more per group), never a rebuilt index.
 * - What is live is then the engine and those verdicts. Measured (bench:jobs,
 *   1M emails of bench/generateEmails.ts, the offer of three groups after a
 *   target-group job; heap snapshot of the thread): 195 MB live — the engine
 *   43 MB, verdicts of four groups 83 MB, the host directory's records 31 MB.
 * - The old generation is not capped: a `maxOldGenerationSizeMb` under 2 GB
 *   also lowers V8's heap growing factor (to ~1.35 at 384 MB), so the offer
 *   job ran 8-26 full collections per 2M emails (0.5-2.6 s) where 2-5 ran
 *   without (one thread, shared machine), bench:jobs took 1.12-1.41x as long
 *   (three alternating runs) against 0.91x uncapped, and a cap ends the
 *   thread when live data passes it. Uncapped, V8 has let the heap reach
 *   ~700 MB around those 195 MB live (twice in about ten runs).
 */
/** Target groups whose verdicts a job thread keeps at once: HostDirectory's owners per host. */
export const VERDICT_GROUPS = 4

/**
 * A thread's young generation, where a batch's rows and strings live and
 * die. V8 sizes it from the machine's memory (128 MB on a 24 GB machine)
 * and keeps what it grew to. Measured over 1M-email jobs on one thread
 * (shared 2-core machine, one run each): at 16 MB, batches promoted into
 * the old generation grew the thread's heap to ~300 MB; at 32 MB it stayed
 * at ~165 MB (~120 MB of it live: the engine, its caches, the modules).
 */
export const YOUNG_GENERATION_MB = 32

/** The `resourceLimits` of a job thread: its young generation only. */
export const jobThreadLimits = () => ({ maxYoungGenerationSizeMb: YOUNG_GENERATION_MB })
