/**
 * Jobs under pressure, on the real daemon: a full queue answers 503 with
 * Retry-After and loses nothing already accepted; queued and running jobs
 * can be cancelled; and a daemon killed with SIGKILL mid-job resumes it on
 * restart so that its results hold every input exactly once, in order, and
 * the offer's usage statistics count every input exactly once.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { call, copyConfig, makeKey, roomyBulkAndJobBudgets, setSettings, startDaemon, waitForJob } from "./daemon.ts"

const batch = (size: number, tag: string) => Array.from({ length: size }, (_, i) => `${tag}${i}@ox.ac.uk`)
const ndjson = (emails: ReadonlyArray<string>) => `${emails.map((email) => JSON.stringify(email)).join("\n")}\n`

const submitNdjson = (daemon: Parameters<typeof call>[0], key: string, emails: ReadonlyArray<string>) =>
  call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
    key,
    rawBody: ndjson(emails),
    headers: { "content-type": "application/x-ndjson" }
  })

/** Submits `emails` as a job: it is accepted (202) and completes. */
const expectCompleted = async (daemon: Parameters<typeof call>[0], key: string, emails: ReadonlyArray<string>) => {
  const accepted = await submitNdjson(daemon, key, emails)
  expect(accepted.status).toBe(202)
  expect((await waitForJob(daemon, key, accepted.body.jobId)).status).toBe("completed")
}

describe("jobs under pressure", () => {
  it("answers 503 with Retry-After when the queue is full, and cancels queued and running jobs", async () => {
    const dirs = copyConfig()
    setSettings(dirs, [
      [["jobs", "concurrency"], 1],
      [["jobs", "maxQueued"], 1],
      [["rateLimits", "bulk", "requests"], 1000],
      [["rateLimits", "jobs", "requests"], 1000]
    ])
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const daemon = await startDaemon(dirs)
    try {
      const running = await submitNdjson(daemon, key, batch(600_000, "a"))
      expect(running.status).toBe(202)
      await waitForJob(daemon, key, running.body.jobId, (job) => job.status === "running")
      const queued = await submitNdjson(daemon, key, batch(10, "b"))
      expect(queued.status).toBe(202)
      const refused = await submitNdjson(daemon, key, batch(10, "c"))
      expect(refused).toMatchObject({ status: 503, body: { code: "SERVICE_ERROR" } })
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)

      const cancelQueued = await call(daemon, "DELETE", `/api/v1/jobs/${queued.body.jobId}`, { key })
      expect(cancelQueued).toMatchObject({ status: 200, body: { status: "cancelled", deleted: false } })
      const cancelRunning = await call(daemon, "DELETE", `/api/v1/jobs/${running.body.jobId}`, { key })
      expect(cancelRunning).toMatchObject({ status: 200, body: { deleted: false } })
      const stopped = await waitForJob(daemon, key, running.body.jobId)
      // Cancelled between chunks, unless it had just finished.
      expect(["cancelled", "completed"]).toContain(stopped.status)
      if (stopped.status === "cancelled") expect(stopped.progress.processed).toBeLessThan(600_000)
      await expectCompleted(daemon, key, batch(10, "d"))
    } finally {
      await daemon.stop()
    }
  }, 120_000)

  it("resumes a job after SIGKILL, with every input in the results exactly once, in order", async () => {
    const dirs = copyConfig()
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const emails = batch(400_000, "s")
    const first = await startDaemon(dirs)
    const accepted = await submitNdjson(first, key, emails)
    expect(accepted.status).toBe(202)
    const { jobId } = accepted.body
    const midway = await waitForJob(first, key, jobId, (job) => job.progress.processed > 0)
    expect(midway.status).not.toBe("completed")
    await first.stop("SIGKILL")

    const second = await startDaemon(dirs)
    try {
      const job = await waitForJob(second, key, jobId)
      expect(job).toMatchObject({ status: "completed", progress: { total: emails.length, processed: emails.length } })
      expect(job.counts.valid + job.counts.invalid).toBe(emails.length)
      const download = await fetch(`${second.url}/api/v1/jobs/${jobId}/results`, {
        headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" }
      })
      const rows = (await download.text()).trim().split("\n")
      expect(rows).toHaveLength(emails.length)
      for (let i = 0; i < rows.length; i++) {
        const email = (JSON.parse(rows[i]!) as { email: string }).email
        if (email !== emails[i]) throw new Error(`row ${i} is ${email}, not ${emails[i]}`)
      }
    } finally {
      await second.stop()
    }
  }, 120_000)

  it("counts an offer job's validations in the offer's usage exactly once across two SIGKILLs", async () => {
    const dirs = copyConfig()
    setSettings(dirs, [[["statistics", "flushIntervalMs"], 50]])
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read", "offers:read"])
    const emails = batch(200_000, "u")
    const offerJob = (daemon: Parameters<typeof call>[0]) =>
      call(daemon, "POST", "/api/v1/validate/bulk-async?offerId=acme-student-discount", {
        key,
        rawBody: ndjson(emails),
        headers: { "content-type": "application/x-ndjson" }
      })
    const first = await startDaemon(dirs)
    const accepted = await offerJob(first)
    expect(accepted.status).toBe(202)
    const { jobId } = accepted.body
    let processed = (await waitForJob(first, key, jobId, (job) => job.progress.processed > 0)).progress.processed
    await first.stop("SIGKILL")
    const second = await startDaemon(dirs)
    const later = await waitForJob(second, key, jobId, (job) => job.progress.processed > processed)
    expect(later.status).not.toBe("completed")
    processed = later.progress.processed
    await second.stop("SIGKILL")

    const third = await startDaemon(dirs)
    try {
      const job = await waitForJob(third, key, jobId)
      expect(job).toMatchObject({ status: "completed", progress: { processed: emails.length } })
      const status = await call(third, "GET", "/api/v1/offers/acme-student-discount/status", { key })
      expect(status.status).toBe(200)
      expect(status.body.usage.validations).toBe(emails.length)
      expect(status.body.usage.eligible + status.body.usage.ineligible).toBe(emails.length)
      expect(status.body.usage.eligible).toBe(job.counts.valid)
    } finally {
      await third.stop()
    }
  }, 180_000)

  it("answers 503 with Retry-After, accepting nothing, when the data directory cannot take a batch", async () => {
    const dirs = copyConfig()
    setSettings(dirs, roomyBulkAndJobBudgets)
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const daemon = await startDaemon(dirs)
    const jobs = join(dirs.dataDir, "jobs")
    try {
      renameSync(jobs, `${jobs}.away`)
      writeFileSync(jobs, "not a directory")
      const refused = await submitNdjson(daemon, key, batch(10, "e"))
      expect(refused).toMatchObject({ status: 503, body: { code: "SERVICE_ERROR" } })
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(refused.body.requestId).toBe(refused.headers.get("x-request-id"))
      rmSync(jobs)
      renameSync(`${jobs}.away`, jobs)
      await expectCompleted(daemon, key, batch(10, "f"))
    } finally {
      await daemon.stop()
    }
  }, 60_000)
})
