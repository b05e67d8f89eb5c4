/**
 * A store outage of a kind other than Redis, on the real daemon with its
 * file stores: a request that meets the outage where the service cannot go
 * on without its store (a defect, not a declared failure) is answered 503
 * with the store's `Retry-After`, not 500, and answered again once the
 * store is back.
 */
import { mkdirSync, renameSync, rmdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as JobStoreFiles from "../../src/jobs/JobStoreFiles.ts"
import { call, copyConfig, makeKey, startDaemon, waitForJob } from "./daemon.ts"

describe("a file store that cannot be used", () => {
  it("answers 503 with Retry-After, not 500, and the job again once its record can be read", async () => {
    const dirs = copyConfig()
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const daemon = await startDaemon(dirs)
    try {
      const submit = () =>
        call(daemon, "POST", "/api/v1/validate/bulk-async", {
          key,
          body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" },
          headers: { "idempotency-key": "outage-1" }
        })
      const first = await submit()
      expect(first.status).toBe(202)
      await waitForJob(daemon, key, first.body.jobId)
      // The job's record cannot be read (a directory stands where it was): a repeated submission must read it.
      const record = JobStoreFiles.jobFilePath(dirs.dataDir, first.body.jobId, "record")
      renameSync(record, `${record}.away`)
      mkdirSync(record)
      const refused = await submit()
      expect(refused).toMatchObject({ status: 503, body: { code: "SERVICE_ERROR" } })
      expect(refused.headers.get("retry-after")).toBe("5")
      expect(refused.body.requestId).toBe(refused.headers.get("x-request-id"))
      rmdirSync(record)
      renameSync(`${record}.away`, record)
      const again = await submit()
      expect(again).toMatchObject({ status: 202, body: { jobId: first.body.jobId } })
    } finally {
      await daemon.stop()
    }
  }, 60_000)
})
