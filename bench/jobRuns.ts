/**
 * `npm run bench:jobs:runs`: bench:jobs' five successive jobs (a target
 * group, the three-group offer, alternating; `bench/jobs.ts` with
 * BENCH_ROUNDS=0, so no latency rounds) run BENCH_RUNS times (default 5),
 * each on a fresh daemon with a fresh data directory, so the first job of
 * each kind, the cold one, is measured as often as the others. One run of
 * bench:jobs measures each job once, and the shared machine's speed moves
 * by a third within minutes: a single cold job says little.
 *
 * With BENCH_BEFORE_TREE=DIR (another checkout, built) the runs alternate
 * this checkout's daemon and DIR's, each alone on the machine and measured
 * by this checkout's `bench/jobs.ts` (BENCH_DAEMON_TREE), so an older
 * version is timed as this one is (an old script may stop its clock
 * elsewhere); each job's end-to-end time is compared with the other's of
 * the same run pair. Environment for bench/jobs.ts (BENCH_EMAILS,
 * BENCH_PIN, ...) passes through. Progress goes to standard error; the
 * final line on standard output is JSON: per job, the end-to-end seconds'
 * median and spread over the runs (and the ratios to the before tree's),
 * the VmHWM after the five jobs, and how fast the machine was: before each
 * run, `bench/machineSpeed.ts`'s probe on the daemon's core (its
 * milliseconds; the same probe took 0.6-0.9 s in a slow hour), so that
 * figures measured at different times can be read against each other.
 */
import { spawnSync } from "node:child_process"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { machineProbeMs } from "./machineSpeed.ts"
import { ratios, type Spread, spread } from "./rounds.ts"

interface JobFigures {
  readonly target: "targetGroup" | "offer"
  readonly endToEndSeconds: number
  readonly vmHwmMb?: number | undefined
}

const runs = Number(process.env.BENCH_RUNS ?? 5)
const beforeTree = process.env.BENCH_BEFORE_TREE || undefined
const thisTree = fileURLToPath(new URL("..", import.meta.url))

/** The core bench:jobs runs its daemon on (core 0 where it pins, see bench/jobs.ts), for the machine probe. */
const daemonCore = availableParallelism() >= 2 && process.env.BENCH_PIN !== "0" ? "0" : undefined
/** The machine probe's milliseconds before each run, in run order. */
const probes: Array<number> = []

/** One run of bench:jobs without latency rounds on the daemon of `tree`: its jobs' figures. */
const run = (tree: string): ReadonlyArray<JobFigures> => {
  try {
    probes.push(machineProbeMs(daemonCore))
  } catch {
    probes.push(machineProbeMs())
  }
  const env = {
    ...process.env,
    BENCH_ROUNDS: "0",
    BENCH_BEFORE_TREE: "",
    BENCH_DAEMON_TREE: tree === thisTree ? "" : tree
  }
  const done = spawnSync(process.execPath, [join(thisTree, "bench", "jobs.ts")], {
    cwd: thisTree,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024
  })
  if (done.status !== 0) throw new Error(`bench:jobs of ${tree} failed (${done.status})`)
  return (JSON.parse(done.stdout.trim().split("\n").at(-1)!) as { jobs: ReadonlyArray<JobFigures> }).jobs
}

const after: Array<ReadonlyArray<JobFigures>> = []
const before: Array<ReadonlyArray<JobFigures>> = []
const shown = (jobs: ReadonlyArray<JobFigures>) => jobs.map((job) => job.endToEndSeconds.toFixed(2)).join(" / ")
for (let i = 0; i < runs; i++) {
  // The pair's order alternates, so neither tree always runs on a machine the other just warmed.
  const beforeFirst = beforeTree !== undefined && i % 2 === 1
  if (beforeFirst) before.push(run(beforeTree))
  after.push(run(thisTree))
  if (beforeTree !== undefined && !beforeFirst) before.push(run(beforeTree))
  console.error(
    `run ${i + 1}: ${shown(after.at(-1)!)} s${beforeTree === undefined ? "" : `; before: ${shown(before.at(-1)!)} s`}; machine probe ${probes.slice(beforeTree === undefined ? -1 : -2).join(" / ")} ms`
  )
}

/** Per job position (1-5): its target and end-to-end seconds over the runs. */
const byJob = (of: ReadonlyArray<ReadonlyArray<JobFigures>>) =>
  of[0]!.map((job, j) => ({
    job: j + 1,
    target: job.target,
    endToEndSeconds: spread(of.map((jobs) => jobs[j]!.endToEndSeconds))
  }))
const vmHwm = (of: ReadonlyArray<ReadonlyArray<JobFigures>>): Spread =>
  spread(
    of.map((jobs) => Math.max(...jobs.map((job) => job.vmHwmMb ?? 0))),
    0
  )

console.log(
  JSON.stringify({
    runs,
    jobs: byJob(after),
    vmHwmMbAfterFiveJobs: vmHwm(after),
    /** `bench/machineSpeed.ts`'s milliseconds before each run (both trees'): lower is a faster machine. */
    machineProbeMs: spread(probes, 0),
    ...(beforeTree === undefined
      ? {}
      : {
          beforeTree,
          before: { jobs: byJob(before), vmHwmMbAfterFiveJobs: vmHwm(before) },
          /** Each job's end-to-end time over the before tree's in the same run pair. */
          afterOverBefore: after[0]!.map((_, j) =>
            spread(
              ratios(
                after.map((jobs) => jobs[j]!.endToEndSeconds),
                before.map((jobs) => jobs[j]!.endToEndSeconds)
              )
            )
          )
        }),
    goals: {
      // Issue 16: every offer job within 5 s, the cold one (job 2) included; judged on the median over the runs.
      offerEndToEndMedianAtMost5s: byJob(after)
        .filter((job) => job.target === "offer")
        .every((job) => job.endToEndSeconds.median <= 5)
    }
  })
)
