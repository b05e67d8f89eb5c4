/**
 * Offer usage statistics end to end: a mixed workload through every way of
 * validating against an offer (single, bulk, batch processing, a job) is
 * counted once each, with unique people by canonical address, and the
 * counts survive a restart.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { call, copyConfig, makeKey, roomyBulkAndJobBudgets, setSettings, startDaemon, waitForJob } from "./daemon.ts"

const offerId = "acme-student-discount"

describe("offer usage statistics", () => {
  it("counts single, bulk, batch and job validations, and keeps them across a restart", async () => {
    const dirs = copyConfig()
    setSettings(dirs, roomyBulkAndJobBudgets)
    const key = makeKey(dirs, "acme", ["validate:offers", "validate:bulk", "offers:read", "jobs:read"])
    const daemon = await startDaemon(dirs)
    let verdicts: Array<boolean> = []
    try {
      const before = await call(daemon, "GET", `/api/v1/offers/${offerId}/status`, { key })
      expect(before.body.usage).toMatchObject({ validations: 0, uniqueEmails: { estimate: 0 }, lastValidatedAt: null })

      for (const email of ["jane@ox.ac.uk", "Jane+spring@OX.ac.uk", "jane@gmail.com"]) {
        const single = await call(daemon, "POST", "/api/v1/validate/offer", { key, body: { email, offerId } })
        expect(single.status).toBe(200)
        verdicts.push(single.body.isValid)
      }
      const bulk = await call(daemon, "POST", "/api/v1/validate/bulk", {
        key,
        body: { emails: ["bob@mit.edu", "jane@ox.ac.uk", "not an email"], offerId }
      })
      verdicts = verdicts.concat(bulk.body.results.map((row: { isValid: boolean }) => row.isValid))
      const batch = await call(daemon, "POST", "/api/v1/offers/bulk-process", {
        key,
        body: { requests: [{ offerId, email: "kim@cam.ac.uk" }] }
      })
      verdicts.push(batch.body.results[0].isValid)
      const job = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key,
        body: { emails: ["lee@ox.ac.uk", "bob@mit.edu"], offerId }
      })
      const finished = await waitForJob(daemon, key, job.body.jobId)
      verdicts.push(...Array.from({ length: finished.counts.valid }, () => true))
      verdicts.push(...Array.from({ length: finished.counts.invalid }, () => false))

      const eligible = verdicts.filter(Boolean).length
      const status = await call(daemon, "GET", `/api/v1/offers/${offerId}/status`, { key })
      expect(status.status).toBe(200)
      const { usage } = status.body
      expect(usage).toMatchObject({
        validations: 9,
        eligible,
        ineligible: 9 - eligible,
        uniqueEmails: { method: "hyperloglog" }
      })
      // jane@ox.ac.uk three ways is one person; the malformed address is nobody.
      expect(usage.uniqueEmails.estimate).toBe(5)
      expect(Object.values(usage.ineligibleByReason).reduce((a: number, b) => a + Number(b), 0)).toBe(9 - eligible)
      expect(usage.daily).toEqual([
        { date: new Date().toISOString().slice(0, 10), validations: 9, eligible, ineligible: 9 - eligible }
      ])
      expect(Date.parse(usage.lastValidatedAt)).toBeGreaterThan(Date.now() - 60_000)
      expect(await daemon.stop("SIGTERM")).toBe(0)

      const again = await startDaemon(dirs)
      try {
        const after = await call(again, "GET", `/api/v1/offers/${offerId}/status`, { key })
        expect(after.body.usage).toEqual(usage)
        // The last 7 days for a chart: every day present, today's counts last.
        const week = await call(again, "GET", `/api/v1/offers/${offerId}/status?days=7`, { key })
        expect(week.status).toBe(200)
        expect(week.body.usage.daily).toHaveLength(7)
        expect(week.body.usage.daily.at(-1)).toEqual(usage.daily[0])
        expect(week.body.usage.daily.slice(0, 6).map((day: { validations: number }) => day.validations)).toEqual([
          0, 0, 0, 0, 0, 0
        ])
        expect({ ...week.body.usage, daily: usage.daily }).toEqual(usage)
        for (const days of ["0", "401", "week"]) {
          const refused = await call(again, "GET", `/api/v1/offers/${offerId}/status?days=${days}`, { key })
          expect(refused).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
        }
      } finally {
        await again.stop()
      }
    } finally {
      await daemon.stop()
    }
  }, 60_000)

  it("counts nothing when statistics are switched off", async () => {
    const dirs = copyConfig()
    setSettings(dirs, [[["statistics", "enabled"], false]])
    const key = makeKey(dirs, "acme", ["validate:offers", "offers:read"])
    const daemon = await startDaemon(dirs)
    try {
      const single = await call(daemon, "POST", "/api/v1/validate/offer", {
        key,
        body: { email: "jane@ox.ac.uk", offerId }
      })
      expect(single.status).toBe(200)
      const status = await call(daemon, "GET", `/api/v1/offers/${offerId}/status`, { key })
      expect(status.body.usage).toMatchObject({ validations: 0, lastValidatedAt: null })
    } finally {
      await daemon.stop()
    }
    expect(existsSync(join(dirs.dataDir, "stats"))).toBe(false)
  }, 60_000)
})
