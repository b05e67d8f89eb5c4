/**
 * `npm run bench:jobs` (bench/jobRunner.ts): one asynchronous job over 1,000,000 generated
 * emails (bench/generateEmails.ts) through the job queue and runner, on the
 * file store in a temporary data directory, against a target group with
 * institution + country criteria. The input file is generated first; a
 * fresh child process stages it in the file store, as an HTTP upload does,
 * then times submit → completed and reports its peak RSS, then, for
 * scale on a shared machine, times the engine's bare `validateMany` over
 * the same emails. Goal (DESIGN.md, async budget): well under 3 s for the
 * runner, so upload → completed fits 5 s and 400 MB. Prints one final JSON
 * line. BENCH_EMAILS and BENCH_CHUNK override the size and the chunk.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { toResultRow } from "../src/domain/ResultRow.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { emailLine } from "../src/jobs/inputLines.ts"
import { JobQueue } from "../src/jobs/JobQueue.ts"
import * as JobQueueLocal from "../src/jobs/JobQueueLocal.ts"
import { JobStore } from "../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../src/jobs/JobStoreFiles.ts"
import { type Evaluate, evaluateHere } from "../src/jobs/jobBatches.ts"
import { makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"

const count = Number(process.env.BENCH_EMAILS ?? 1_000_000)
const chunkItems = Number(process.env.BENCH_CHUNK ?? 25_000)
const table = buildInstitutionTable()

const engine = () => makeBenchEngine(table)

const run = async (dataDir: string, inputPath: string): Promise<void> => {
  const snapshot = engine()
  const evaluate: Evaluate = (target, emails) => {
    if (!("targetGroupId" in target)) throw new Error("the bench validates against a target group")
    return snapshot.validateMany(emails, target.targetGroupId).map((result, i) => toResultRow(emails[i]!, result))
  }
  const layer = JobQueueLocal.layer({
    concurrency: 2,
    maxQueued: 100,
    retentionHours: 1,
    evaluator: evaluateHere(evaluate),
    chunkItems
  }).pipe(Layer.provideMerge(JobStoreFiles.layerFiles(dataDir)))
  const rssBeforeMB = Math.round(process.memoryUsage.rss() / 1048576)
  const program = Effect.gen(function* () {
    const queue = yield* JobQueue
    const input = yield* (yield* JobStore).stage()
    const bytes = readFileSync(inputPath)
    input.bytes.write(bytes, 0, bytes.length, 0)
    const started = performance.now()
    const { job } = yield* queue.submit({
      team: "bench" as never,
      target: { targetGroupId: "bench" as never },
      total: count,
      input
    })
    const done = yield* queue.awaitFinished("bench", job.jobId)
    return { done, seconds: (performance.now() - started) / 1000 }
  })
  const { done, seconds } = await Effect.runPromise(program.pipe(Effect.provide(layer)))
  const peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024)
  const resultsMB = Math.round(done.checkpoint.resultsBytes / 1048576)
  const emails = readFileSync(join(dataDir, "jobs", done.jobId, "input.ndjson"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as string)
  const bare = performance.now()
  snapshot.validateMany(emails, "bench")
  const validateOnlySeconds = (performance.now() - bare) / 1000
  console.log(
    JSON.stringify({
      emails: count,
      chunkItems,
      status: done.status,
      counts: done.counts,
      seconds: Math.round(seconds * 1000) / 1000,
      emailsPerSecond: Math.round(count / seconds),
      validateOnlySeconds: Math.round(validateOnlySeconds * 1000) / 1000,
      runnerVsValidateOnly: Math.round((seconds / validateOnlySeconds) * 100) / 100,
      resultsMB,
      rssBeforeMB,
      peakRssMB,
      goals: { seconds: seconds <= 3, peakRssMB: peakRssMB <= 400 }
    })
  )
}

if (process.argv[2] === "--run") {
  await run(process.argv[3]!, process.argv[4]!)
} else {
  const dataDir = mkdtempSync(join(tmpdir(), "campusgate-bench-jobs-"))
  const inputPath = join(dataDir, "upload.ndjson")
  writeFileSync(inputPath, `${generateEmails(table, count).map(emailLine).join("\n")}\n`)
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--run", dataDir, inputPath], {
    stdio: "inherit"
  })
  rmSync(dataDir, { recursive: true, force: true })
  process.exitCode = child.status ?? 1
}
