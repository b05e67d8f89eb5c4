/**
 * `npm run bench:jobs`: asynchronous bulk validation end to end, through
 * HTTP, on two daemons started from source on copies of the shipped config:
 * one with usage statistics on (the default), one with them off.
 * - 1,000,000 generated emails (bench/generateEmails.ts) submitted as one
 *   streamed NDJSON body to `POST /api/v1/validate/bulk-async` against a
 *   target group (`universities`: institution criteria), then
 *   `GET /api/v1/jobs/{id}` polled until the job is completed: seconds from
 *   the first byte sent to completion, and the daemon's peak RSS (goals,
 *   DESIGN.md: <= 5 s, <= 400 MB); the same against an offer, which checks
 *   every one of its target groups (two in the shipped config) and counts
 *   usage statistics;
 * - the results downloaded as NDJSON and as CSV (rows/s, MB/s), uncompressed
 *   (`Accept-Encoding: identity`: the daemon's own rate), and NDJSON with
 *   brotli and gzip (bytes on the wire, decompressed as a client would);
 * - validation throughput of jobs with statistics recording on vs off, from
 *   the jobs' own startedAt/finishedAt, rounds alternating between the two
 *   daemons (goal: on is at most 10% slower).
 * BENCH_EMAILS changes the batch size, BENCH_ROUNDS the on/off rounds.
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { get as httpGet, type IncomingMessage } from "node:http"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { createBrotliDecompress, createGunzip } from "node:zlib"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { type DaemonProcess, peakRssMb, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"

const emailCount = Number(process.env.BENCH_EMAILS ?? 1_000_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const offerId = "acme-student-discount"
const targetGroupId = "universities"
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-jobs-"))
const log = (message: string) => console.error(message)
const round2 = (value: number) => Math.round(value * 100) / 100

interface JobView {
  readonly jobId: string
  readonly status: string
  readonly progress: { readonly processed: number }
  readonly startedAt: string | null
  readonly finishedAt: string | null
  readonly error?: string
}

const submit = async (daemon: DaemonProcess, key: string, body: Buffer, target = `offerId=${offerId}`) => {
  const started = performance.now()
  const response = await fetch(`${daemon.url}/api/v1/validate/bulk-async?${target}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
    body
  })
  const accepted = (await response.json()) as { jobId: string }
  if (response.status !== 202) throw new Error(`bulk-async answered ${response.status}: ${JSON.stringify(accepted)}`)
  const acceptedAfter = (performance.now() - started) / 1000
  for (;;) {
    const job = (await (
      await fetch(`${daemon.url}/api/v1/jobs/${accepted.jobId}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as JobView
    if (job.status === "completed") {
      const processingSeconds = (Date.parse(job.finishedAt!) - Date.parse(job.startedAt!)) / 1000
      return { job, endToEndSeconds: (performance.now() - started) / 1000, acceptedAfter, processingSeconds }
    }
    if (job.status !== "queued" && job.status !== "running") throw new Error(`the job ended ${JSON.stringify(job)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const download = async (
  daemon: DaemonProcess,
  key: string,
  jobId: string,
  accept: string,
  encoding: "identity" | "br" | "gzip" = "identity"
) => {
  const started = performance.now()
  const response = await new Promise<IncomingMessage>((resolve, reject) =>
    httpGet(
      `${daemon.url}/api/v1/jobs/${jobId}/results`,
      { headers: { authorization: `Bearer ${key}`, accept, "accept-encoding": encoding } },
      resolve
    ).on("error", reject)
  )
  if (response.statusCode !== 200) throw new Error(`results answered ${response.statusCode}`)
  if ((response.headers["content-encoding"] ?? "identity") !== encoding) {
    // A daemon that does not compress (an older build, run for comparison): no figure.
    response.resume()
    return null
  }
  let wireBytes = 0
  response.on("data", (chunk: Buffer) => {
    wireBytes += chunk.length
  })
  const decoded =
    encoding === "br"
      ? response.pipe(createBrotliDecompress())
      : encoding === "gzip"
        ? response.pipe(createGunzip())
        : response
  let bytes = 0
  let lines = 0
  for await (const chunk of decoded as AsyncIterable<Buffer>) {
    bytes += chunk.length
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
  }
  const seconds = (performance.now() - started) / 1000
  const rows = accept === "text/csv" ? lines - 1 : lines
  if (rows !== emailCount) throw new Error(`${accept} download had ${rows} rows, not ${emailCount}`)
  return {
    seconds: round2(seconds),
    rowsPerSecond: Math.round(rows / seconds),
    mbPerSecond: round2(bytes / 1e6 / seconds),
    ...(encoding === "identity" ? {} : { wireMb: round2(wireBytes / 1e6) })
  }
}

log(`node ${process.version}, ${availableParallelism()} CPUs; working in ${root}`)
const emails = generateEmails(buildInstitutionTable(), emailCount, 5)
const body = Buffer.from(`${emails.map((email) => JSON.stringify(email)).join("\n")}\n`)
log(`${emailCount.toLocaleString()} emails, ${(body.length / 1e6).toFixed(1)} MB of NDJSON`)

const scopes = ["validate:bulk", "jobs:read"] as const
const on = prepareConfig(join(root, "on"), scopes)
const off = prepareConfig(join(root, "off"), scopes, [[["statistics", "enabled"], false]])
const daemonOn = await startDaemon(on, join(root, "on.log"))
const daemonOff = await startDaemon(off, join(root, "off.log"))

try {
  const first = await submit(daemonOn, on.key, body, `targetGroupId=${targetGroupId}`)
  const rssMb = peakRssMb(daemonOn.child.pid)
  log(
    `a target-group job of ${emailCount.toLocaleString()}: completed ${first.endToEndSeconds.toFixed(2)} s after the upload began ` +
      `(accepted after ${first.acceptedAfter.toFixed(2)} s); daemon peak RSS ${rssMb} MB`
  )
  const offerJob = await submit(daemonOn, on.key, body)
  log(
    `an offer job of ${emailCount.toLocaleString()}: completed ${offerJob.endToEndSeconds.toFixed(2)} s after the upload began`
  )
  const ndjson = await download(daemonOn, on.key, first.job.jobId, "application/x-ndjson")
  const csv = await download(daemonOn, on.key, first.job.jobId, "text/csv")
  const ndjsonBrotli = await download(daemonOn, on.key, first.job.jobId, "application/x-ndjson", "br")
  const ndjsonGzip = await download(daemonOn, on.key, first.job.jobId, "application/x-ndjson", "gzip")
  log(
    `download: NDJSON ${ndjson?.rowsPerSecond.toLocaleString()} rows/s, CSV ${csv?.rowsPerSecond.toLocaleString()} rows/s; brotli ${ndjsonBrotli?.wireMb ?? "-"} MB on the wire, gzip ${ndjsonGzip?.wireMb ?? "-"} MB`
  )

  const statsOn: Array<number> = [offerJob.processingSeconds]
  const statsOff: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    statsOff.push((await submit(daemonOff, off.key, body)).processingSeconds)
    statsOn.push((await submit(daemonOn, on.key, body)).processingSeconds)
  }
  const best = (values: ReadonlyArray<number>) => Math.min(...values)
  const onRate = emailCount / best(statsOn)
  const offRate = emailCount / best(statsOff)
  const statsSlowdown = round2(1 - onRate / offRate)
  log(
    `processing: statistics on ${Math.round(onRate).toLocaleString()} emails/s, off ${Math.round(offRate).toLocaleString()} emails/s`
  )
  const peakRss = peakRssMb(daemonOn.child.pid)

  daemonOn.child.kill("SIGTERM")
  daemonOff.child.kill("SIGTERM")
  await Promise.all([daemonOn.exited, daemonOff.exited])
  console.log(
    JSON.stringify({
      emails: emailCount,
      endToEndSeconds: round2(first.endToEndSeconds),
      acceptedAfterSeconds: round2(first.acceptedAfter),
      offerEndToEndSeconds: round2(offerJob.endToEndSeconds),
      peakRssMb: rssMb,
      peakRssMbAfterAllRounds: peakRss,
      download: { ndjson, csv, ndjsonBrotli, ndjsonGzip },
      processing: {
        statsOnEmailsPerSecond: Math.round(onRate),
        statsOffEmailsPerSecond: Math.round(offRate),
        statsSlowdown,
        statsOnSeconds: statsOn.map(round2),
        statsOffSeconds: statsOff.map(round2)
      },
      goals: {
        endToEnd: first.endToEndSeconds <= 5,
        peakRss: peakRss !== undefined && peakRss <= 400,
        statsSlowdown: statsSlowdown <= 0.1
      },
      details: { node: process.version, cpus: availableParallelism(), ndjsonMb: round2(body.length / 1e6) }
    })
  )
} finally {
  if (daemonOn.child.exitCode === null) daemonOn.child.kill("SIGTERM")
  if (daemonOff.child.exitCode === null) daemonOff.child.kill("SIGTERM")
  rmSync(root, { recursive: true, force: true })
}
