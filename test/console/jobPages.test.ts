/** The Jobs screen's paging: the page size asked in the address, page addresses, pages appended, a refresh's reach. */
import { describe, expect, it } from "vitest"
import type { Job, JobList } from "../../console/src/apiTypes.ts"
import { jobsPageUrl, nextPageUrl, pageSizeOf, withPage } from "../../console/src/data/jobPages.ts"

const job = (n: number): Job =>
  ({ jobId: `job_${n.toString(16).padStart(32, "0")}`, status: "completed" }) as unknown as Job
const page = (ids: ReadonlyArray<number>, nextCursor: string | null): JobList => ({ data: ids.map(job), nextCursor })
const ids = (jobs: ReadonlyArray<Job>) => jobs.map((entry) => Number.parseInt(entry.jobId.slice(4), 16))

describe("job pages", () => {
  it("take the page size from the console's address, within the API's bounds", () => {
    expect(pageSizeOf("")).toBe(50)
    expect(pageSizeOf("?limit=2")).toBe(2)
    expect(pageSizeOf("?limit=0")).toBe(1)
    expect(pageSizeOf("?limit=500")).toBe(100)
    expect(pageSizeOf("?limit=ten")).toBe(50)
    expect(pageSizeOf("?limit=-3")).toBe(50)
    expect(pageSizeOf("?status=running&limit=7")).toBe(7)
  })

  it("ask the list API for a page by limit, and for the next by the previous page's cursor", () => {
    expect(jobsPageUrl(50)).toBe("/api/v1/jobs?limit=50")
    expect(jobsPageUrl(2, "MTc0OC5qb2Jf+/=")).toBe("/api/v1/jobs?limit=2&cursor=MTc0OC5qb2Jf%2B%2F%3D")
  })

  it("append each page after the jobs shown, each job once, and end where the API says", () => {
    const first = withPage(undefined, page([9, 8], "c1"))
    expect(ids(first.jobs)).toEqual([9, 8])
    expect(first.nextCursor).toBe("c1")
    const second = withPage(first, page([8, 7], "c2"))
    expect(ids(second.jobs)).toEqual([9, 8, 7])
    const last = withPage(second, page([6], null))
    expect(ids(last.jobs)).toEqual([9, 8, 7, 6])
    expect(last.nextCursor).toBeNull()
  })

  it("read a refresh from the top as far as the jobs shown, or to the end of the list", () => {
    expect(nextPageUrl(undefined, 2, 0)).toBe("/api/v1/jobs?limit=2")
    // Four jobs were shown: one page of two is not enough, two are.
    const one = withPage(undefined, page([10, 9], "c1"))
    expect(nextPageUrl(one, 2, 4)).toBe("/api/v1/jobs?limit=2&cursor=c1")
    const two = withPage(one, page([8, 7], "c2"))
    expect(nextPageUrl(two, 2, 4)).toBeUndefined()
    // The list ended before that many (jobs deleted or expired meanwhile).
    expect(nextPageUrl(withPage(undefined, page([10], null)), 2, 4)).toBeUndefined()
  })
})
