/** A job's duration, whether it is finished, its download links and what an upload is sent as. */
import { describe, expect, it } from "vitest"
import { jobFinished, jobSeconds, resultsUrl, submitUrl, uploadType } from "../../console/src/data/jobs.ts"

describe("jobs", () => {
  it("are finished once completed, failed or cancelled", () => {
    expect(
      ["queued", "running", "completed", "failed", "cancelled"].map((status) => jobFinished({ status } as never))
    ).toEqual([false, false, true, true, true])
  })

  it("last from start to finish, or to now while running", () => {
    const now = Date.parse("2026-05-31T12:01:00Z")
    expect(jobSeconds({ startedAt: null, finishedAt: null }, now)).toBeUndefined()
    expect(jobSeconds({ startedAt: "2026-05-31T12:00:00Z", finishedAt: null }, now)).toBe(60)
    expect(jobSeconds({ startedAt: "2026-05-31T12:00:00Z", finishedAt: "2026-05-31T12:00:02.500Z" }, now)).toBe(2.5)
  })

  it("download their results as CSV or NDJSON", () => {
    expect(resultsUrl("job_00ff", "csv")).toBe("/api/v1/jobs/job_00ff/results?format=csv")
    expect(resultsUrl("job_00ff", "ndjson")).toBe("/api/v1/jobs/job_00ff/results?format=ndjson")
  })

  it("are uploaded as CSV or NDJSON by the file's name or type, with the target in the query", () => {
    expect(uploadType({ name: "Students.CSV", type: "" })).toBe("text/csv")
    expect(uploadType({ name: "list.ndjson", type: "" })).toBe("application/x-ndjson")
    expect(uploadType({ name: "list.jsonl", type: "" })).toBe("application/x-ndjson")
    expect(uploadType({ name: "export", type: "text/csv" })).toBe("text/csv")
    expect(uploadType({ name: "list.xlsx", type: "application/vnd.ms-excel" })).toBeUndefined()
    expect(submitUrl({ kind: "offerId", id: "acme spring" })).toBe("/api/v1/validate/bulk-async?offerId=acme+spring")
  })
})
