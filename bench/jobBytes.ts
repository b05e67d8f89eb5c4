/**
 * `npm run bench:jobs:store`: what a job's input and results cost in the
 * shared store now that they live there (`src/jobs/jobBytesShared.ts`), and
 * how long a job takes end to end, for each shared kind:
 * - PostgreSQL (BENCH_DATABASE_URL, default the local `test` database; a
 *   fresh database is made beside it and dropped at the end):
 *   `pg_total_relation_size` of `campusgate_job_chunks` and
 *   `campusgate_job_files` before the job, after it, and after it is deleted
 *   (then after `VACUUM`), and the stored (compressed) size of its chunks;
 * - Redis (BENCH_REDIS_URL, default the local server; keys under a fresh
 *   prefix, deleted at the end): `MEMORY USAGE` of the job's bytes key and
 *   the `used_memory` delta, after the job and after it is deleted.
 * Each run: two daemons with their own data directories on the store; a
 * BENCH_EMAILS-email job (default 1,000,000) submitted to A, followed and
 * downloaded (NDJSON) from B, then deleted through B; and, for the times to
 * compare with, the same job on one daemon on files. BENCH_KINDS (default
 * `postgres,redis,files`) picks the runs. Run `npm run build` first. Progress goes to standard error; the last line on standard output
 * is JSON.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { type DaemonProcess, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"

const jobEmails = Number(process.env.BENCH_EMAILS ?? 1_000_000)
const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-jobbytes-"))
const log = (message: string) => console.error(message)
const mb = (bytes: number) => Math.round(bytes / 1e4) / 100
const seconds = (ms: number) => Math.round(ms / 10) / 100

const psql = (url: string, statement: string): string =>
  execFileSync("psql", [url, "-Atqc", statement], { encoding: "utf8" }).trim()
const redisCli = (...args: Array<string>): string =>
  execFileSync("redis-cli", ["-u", redisUrl, ...args], { encoding: "utf8" }).trim()
const usedMemory = () => Number(/used_memory:(\d+)/.exec(redisCli("INFO", "memory"))![1])

const scopes = ["validate:bulk", "jobs:read"] as const
const body = Buffer.from(
  `${generateEmails(buildInstitutionTable(), jobEmails, 3)
    .map((email) => JSON.stringify(email))
    .join("\n")}\n`
)

const stop = async (daemon: DaemonProcess) => {
  if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM")
  await daemon.exited
}

/**
 * Two daemons on `store`, each with its own data directory: the job is
 * submitted to A, followed and downloaded from B; `measure` runs once the
 * download is done, `removed` once the job is deleted.
 */
const runJob = async <B, M, R>(
  name: string,
  store: unknown,
  before: () => B,
  measure: (jobId: string) => M,
  removed: () => R
) => {
  const settings = store === undefined ? [] : [[["store"], store] as const]
  const one = prepareConfig(join(root, `${name}-a`), scopes, settings)
  const two = { ...one, dataDir: join(root, `${name}-b`, "data") }
  const a = await startDaemon(one, join(root, `${name}-a.log`))
  // The file store serves one daemon: it is both A and B.
  const b = store === undefined ? a : await startDaemon(two, join(root, `${name}-b.log`))
  try {
    const auth = { authorization: `Bearer ${one.key}` }
    const initially = before()
    const started = performance.now()
    const accepted = await fetch(`${a.url}/api/v1/validate/bulk-async?targetGroupId=universities`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-ndjson" },
      body
    })
    if (accepted.status !== 202) throw new Error(`bulk-async answered ${accepted.status}: ${await accepted.text()}`)
    const { jobId } = (await accepted.json()) as { jobId: string }
    const acceptedMs = performance.now() - started
    for (;;) {
      const job = (await (await fetch(`${b.url}/api/v1/jobs/${jobId}`, { headers: auth })).json()) as {
        status: string
      }
      if (job.status === "completed") break
      if (job.status === "failed" || job.status === "cancelled") throw new Error(`the job ${job.status}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const finishedMs = performance.now() - started
    const download = await fetch(`${b.url}/api/v1/jobs/${jobId}/results`, {
      headers: { ...auth, accept: "application/x-ndjson" }
    })
    const downloadedBytes = (await download.arrayBuffer()).byteLength
    const endToEndMs = performance.now() - started
    const measured = measure(jobId)
    const deleted = await fetch(`${b.url}/api/v1/jobs/${jobId}`, { method: "DELETE", headers: auth })
    if (deleted.status !== 200) throw new Error(`delete answered ${deleted.status}`)
    const after = removed()
    const timing = {
      uploadAcceptedSeconds: seconds(acceptedMs),
      finishedSeconds: seconds(finishedMs),
      endToEndSeconds: seconds(endToEndMs),
      downloadedMb: mb(downloadedBytes)
    }
    log(`${name}: ${JSON.stringify(timing)}`)
    return { ...timing, ...initially, ...measured, ...after }
  } finally {
    await Promise.all([stop(a), stop(b)])
  }
}

const postgres = async () => {
  const database = `campusgate_bench_${randomBytes(4).toString("hex")}`
  psql(databaseUrl, `create database ${database}`)
  const url = databaseUrl.replace(/\/[^/?]*(\?|$)/, `/${database}$1`)
  const tablesSize = () =>
    Number(
      psql(
        url,
        "select coalesce(sum(pg_total_relation_size(c)), 0) from unnest(array['campusgate_job_chunks', 'campusgate_job_files']::regclass[]) c"
      )
    )
  try {
    const result = await runJob(
      "postgres",
      { kind: "postgres", url },
      // The schema is made by the first daemon: measured once both run.
      () => ({ tablesBytesBefore: tablesSize() }),
      (jobId) => {
        const after = tablesSize()
        const [stored, raw, chunks] = psql(
          url,
          `select sum(pg_column_size(bytes)), sum(octet_length(bytes)), count(*) from campusgate_job_chunks where job_id = '${jobId}'`
        )
          .split("|")
          .map(Number)
        const compression = psql(
          url,
          "select attcompression from pg_attribute where attrelid = 'campusgate_job_chunks'::regclass and attname = 'bytes'"
        )
        return {
          tablesBytesAfterJob: after,
          chunkRows: chunks!,
          jobBytesRaw: raw!,
          jobBytesStored: stored!,
          compression: compression === "l" ? "lz4" : compression === "p" ? "pglz" : "default"
        }
      },
      () => {
        const afterRemoval = tablesSize()
        const rowsLeft = Number(psql(url, "select count(*) from campusgate_job_chunks"))
        psql(url, "vacuum campusgate_job_chunks")
        psql(url, "vacuum campusgate_job_files")
        return { tablesBytesAfterRemoval: afterRemoval, tablesBytesAfterVacuum: tablesSize(), chunkRowsLeft: rowsLeft }
      }
    )
    log(
      `postgres: the 1M job took ${mb(result.tablesBytesAfterJob)} MB of tables (${mb(result.jobBytesStored)} MB stored for ${mb(result.jobBytesRaw)} MB of bytes, ${result.compression}); after removal ${result.chunkRowsLeft} rows, ${mb(result.tablesBytesAfterVacuum)} MB after VACUUM`
    )
    return result
  } finally {
    psql(databaseUrl, `drop database if exists ${database} with (force)`)
  }
}

const redis = async () => {
  const prefix = `bench-jobbytes-${randomBytes(4).toString("hex")}:`
  let memoryBefore = 0
  try {
    const result = await runJob(
      "redis",
      { kind: "redis", url: redisUrl, keyPrefix: prefix },
      () => {
        memoryBefore = usedMemory()
        return {}
      },
      (jobId) => ({
        memoryUsageOfBytesKey: Number(redisCli("MEMORY", "USAGE", `${prefix}jobs:bytes:${jobId}`, "SAMPLES", "0")),
        jobBytesRaw:
          Number(redisCli("HGET", `${prefix}jobs:bytes:${jobId}`, "input:length")) +
          Number(redisCli("HGET", `${prefix}jobs:bytes:${jobId}`, "results:length")),
        usedMemoryDeltaAfterJob: usedMemory() - memoryBefore
      }),
      () => ({ usedMemoryDeltaAfterRemoval: usedMemory() - memoryBefore })
    )
    log(
      `redis: the 1M job took ${mb(result.memoryUsageOfBytesKey)} MB (MEMORY USAGE; ${mb(result.jobBytesRaw)} MB of bytes); used_memory +${mb(result.usedMemoryDeltaAfterJob)} MB after the job, +${mb(result.usedMemoryDeltaAfterRemoval)} MB after removal`
    )
    return result
  } finally {
    redisCli("EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", "0", `${prefix}*`)
  }
}

const files = () =>
  runJob(
    "files",
    undefined,
    () => ({}),
    () => ({}),
    () => ({})
  )

const kinds = (process.env.BENCH_KINDS ?? "postgres,redis,files").split(",")
try {
  log(
    `node ${process.version}; a ${jobEmails.toLocaleString()}-email job (${mb(body.length)} MB) on ${kinds.join(", ")}`
  )
  const results = {
    emails: jobEmails,
    inputMb: mb(body.length),
    ...(kinds.includes("postgres") ? { postgres: await postgres() } : {}),
    ...(kinds.includes("redis") ? { redis: await redis() } : {}),
    ...(kinds.includes("files") ? { files: await files() } : {})
  }
  console.log(JSON.stringify(results))
} finally {
  rmSync(root, { recursive: true, force: true })
}
