/**
 * `npm run bench:scale`: what sharing state through Redis costs and what
 * more processes give, measured in one run on this machine, against a
 * Redis server the script starts (redis-server must be installed):
 * - single validations (`POST /api/v1/validate/target-group`, 64
 *   connections, autocannon in its own process): answers/s and p99 for one
 *   daemon on files, one daemon on Redis, and `serve --workers 2` on Redis
 *   (the ratio to one worker: target >= 1.7x on 2 cores; with 2 cores the
 *   load generator shares them, which the JSON says);
 * - bulk validation (1,000 emails a request) on one daemon on Redis: emails/s;
 * - a 1,000,000-email job across two daemons on Redis, each with its own
 *   data directory: submitted to one, followed and downloaded (NDJSON) from
 *   the other, seconds end to end;
 * - Redis memory per 1M-email job: its record, queue entries, input and
 *   results (`used_memory` before and after; `npm run bench:jobs:store`
 *   has the detail, and PostgreSQL's).
 * BENCH_SECONDS (default 5) per load run, BENCH_EMAILS for the job.
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { type DaemonProcess, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"
import type { LoadOptions } from "./httpLoad.ts"
import { startRedisServer } from "./redisServer.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const jobEmails = Number(process.env.BENCH_EMAILS ?? 1_000_000)
const connections = 64
const targetGroupId = "universities"
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-scale-"))
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const log = (message: string) => console.error(message)
const round2 = (value: number) => Math.round(value * 100) / 100

const redis = await startRedisServer(root, { appendOnly: true })
const redisUrl = redis.url

const load = (options: Omit<LoadOptions, "connections" | "seconds">, runSeconds: number) => {
  const file = join(root, "load.json")
  writeFileSync(file, JSON.stringify({ ...options, connections, seconds: runSeconds }))
  const output = execFileSync(process.execPath, [here("httpLoad.ts"), file], { encoding: "utf8", maxBuffer: 1 << 24 })
  return JSON.parse(output.trim().split("\n").at(-1)!) as {
    perSecond: number
    latencyMs: { p99: number }
    non2xx: number
    errors: number
  }
}

const measure = (name: string, options: Omit<LoadOptions, "connections" | "seconds">) => {
  load(options, 2)
  const result = load(options, seconds)
  log(
    `${name}: ${result.perSecond.toLocaleString()} answers/s, p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`
  )
  return { perSecond: result.perSecond, p99Ms: result.latencyMs.p99, non2xx: result.non2xx, errors: result.errors }
}

const stop = async (daemon: DaemonProcess) => {
  if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM")
  await daemon.exited
}

const table = buildInstitutionTable()
const candidates = generateEmails(table, 400, 7).map((email) => JSON.stringify({ email, targetGroupId }))
const bulkBody = JSON.stringify({ emails: generateEmails(table, 1000, 11), targetGroupId })

const scopes = ["validate:target-groups", "validate:bulk", "jobs:read"] as const
const withStore = (name: string, prefix: string) =>
  prepareConfig(join(root, name), scopes, [
    [["store"], { kind: "redis", url: redisUrl, keyPrefix: prefix }],
    [["rateLimits", "bulk", "requests"], 1_000_000_000]
  ])
const prepareFiles = (name: string) => prepareConfig(join(root, name), scopes)

try {
  await new Promise((resolve) => setTimeout(resolve, 300))
  log(`node ${process.version}, ${availableParallelism()} CPUs; Redis at ${redisUrl}; working in ${root}`)

  const single = async (name: string, dirs: ReturnType<typeof prepareConfig>, serveArgs: Array<string> = []) => {
    const daemon = await startDaemon(dirs, join(root, `${name}.log`), [], serveArgs)
    // Workers log "listening" one by one: give the second a moment.
    await new Promise((resolve) => setTimeout(resolve, serveArgs.length > 0 ? 3000 : 300))
    const headers = { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" }
    const url = `${daemon.url}/api/v1/validate/target-group`
    // Emails of the mix that answer 200 (valid or not; malformed ones are 400s).
    const bodies: Array<string> = []
    for (const body of candidates)
      if ((await fetch(url, { method: "POST", headers, body })).status === 200) bodies.push(body)
    const result = measure(name, { url, method: "POST", headers, bodies })
    return { daemon, result, headers }
  }

  /** `single`, then bulk validation (1,000 emails a request) on the same daemon, which is then stopped. */
  const singleAndBulk = async (name: string, dirs: ReturnType<typeof prepareConfig>) => {
    const one = await single(name, dirs)
    const bulk = measure(`bulk (1,000 emails) on ${name}`, {
      url: `${one.daemon.url}/api/v1/validate/bulk`,
      method: "POST",
      headers: one.headers,
      bodies: [bulkBody]
    })
    await stop(one.daemon)
    return { ...one, bulk }
  }

  const onFiles = await singleAndBulk("one daemon on files", prepareFiles("files"))
  const bulkOnFiles = onFiles.bulk
  const onRedis = await singleAndBulk("one daemon on Redis", withStore("redis", "bench-one:"))
  const bulk = onRedis.bulk

  const workersDirs = withStore("workers", "bench-workers:")
  const twoWorkers = await single("serve --workers 2 on Redis", workersDirs, ["--workers", "2"])
  await stop(twoWorkers.daemon)

  // A 1M-email job: two daemons on one Redis, a data directory each; submitted to A, followed and downloaded from B.
  const jobDirs = withStore("job", "bench-job:")
  const a = await startDaemon(jobDirs, join(root, "job-a.log"))
  const b = await startDaemon({ ...jobDirs, dataDir: join(root, "job-b-data") }, join(root, "job-b.log"))
  const auth = { authorization: `Bearer ${jobDirs.key}` }
  const body = Buffer.from(
    `${generateEmails(table, jobEmails, 3)
      .map((email) => JSON.stringify(email))
      .join("\n")}\n`
  )
  const memoryBefore = redis.usedMemory()
  const started = performance.now()
  const accepted = await fetch(`${a.url}/api/v1/validate/bulk-async?targetGroupId=${targetGroupId}`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/x-ndjson" },
    body
  })
  const { jobId } = (await accepted.json()) as { jobId: string }
  if (accepted.status !== 202) throw new Error(`bulk-async answered ${accepted.status}`)
  for (;;) {
    const job = (await (await fetch(`${b.url}/api/v1/jobs/${jobId}`, { headers: auth })).json()) as { status: string }
    if (job.status === "completed") break
    if (job.status === "failed" || job.status === "cancelled") throw new Error(`the job ${job.status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const download = await fetch(`${b.url}/api/v1/jobs/${jobId}/results`, {
    headers: { ...auth, accept: "application/x-ndjson" }
  })
  const downloadedBytes = (await download.arrayBuffer()).byteLength
  const jobSeconds = round2((performance.now() - started) / 1000)
  const ranOn = ["a", "b"].findIndex((name) =>
    readFileSync(join(root, `job-${name}.log`), "utf8").includes(`"msg":"job started","jobId":"${jobId}"`)
  )
  const queueMemoryBytes = redis.usedMemory() - memoryBefore
  log(
    `1M-email job across two daemons: ${jobSeconds} s end to end (run on ${"AB"[ranOn] ?? "?"}, downloaded from B, ${(downloadedBytes / 1e6).toFixed(0)} MB); Redis memory for it (input and results included): ${(queueMemoryBytes / 1e6).toFixed(0)} MB`
  )

  await Promise.all([stop(a), stop(b)])

  const workersRatio = round2(twoWorkers.result.perSecond / onRedis.result.perSecond)
  console.log(
    JSON.stringify({
      seconds,
      connections,
      cpus: availableParallelism(),
      singleRps: {
        filesOneDaemon: onFiles.result.perSecond,
        redisOneDaemon: onRedis.result.perSecond,
        redisTwoWorkers: twoWorkers.result.perSecond
      },
      singleP99Ms: {
        filesOneDaemon: onFiles.result.p99Ms,
        redisOneDaemon: onRedis.result.p99Ms,
        redisTwoWorkers: twoWorkers.result.p99Ms
      },
      redisVsFiles: round2(onRedis.result.perSecond / onFiles.result.perSecond),
      twoWorkersVsOne: workersRatio,
      twoWorkersGoal: workersRatio >= 1.7,
      // With 2 cores the load generator runs on the cores the workers use.
      sharedCores: availableParallelism() <= 2,
      bulkEmailsPerSecond: { files: bulkOnFiles.perSecond * 1000, redis: bulk.perSecond * 1000 },
      job: {
        emails: jobEmails,
        endToEndSeconds: jobSeconds,
        submittedTo: "A",
        ranOn: "AB"[ranOn] ?? "unknown",
        downloadedFrom: "B",
        downloadedBytes
      },
      redisMemoryPerJob: { withInputAndResultsBytes: queueMemoryBytes },
      details: { onFiles: onFiles.result, onRedis: onRedis.result, twoWorkers: twoWorkers.result, bulkOnFiles, bulk }
    })
  )
} finally {
  await redis.stop()
  rmSync(root, { recursive: true, force: true })
}
