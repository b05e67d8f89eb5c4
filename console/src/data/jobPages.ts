/**
 * The Jobs screen's list, page by page, with the job list API's own paging
 * (`GET /api/v1/jobs?limit=&cursor=`, newest first): the jobs shown so far
 * and the cursor of the next page. The API's cursor is a position in the
 * list (a job's creation instant and id), so a job started meanwhile lands
 * before the first page and never shifts a later page: pages appended in
 * turn hold each job once. A refresh (while a job runs) reads the list
 * again from the top as far as it was shown, so a page the user loaded
 * stays loaded.
 */
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from "../../../src/api/pageLimits.ts"
import type { Job, JobList } from "../apiTypes.ts"

/** The jobs shown, newest first, and the cursor of the page after them (null: there is none). */
export interface JobPages {
  readonly jobs: ReadonlyArray<Job>
  readonly nextCursor: string | null
}

/** The page size the console's address asks for (`?limit=N`), within the API's bounds; the API's default otherwise. */
export const pageSizeOf = (search: string): number => {
  const asked = new URLSearchParams(search).get("limit")
  if (asked === null || !/^\d+$/.test(asked)) return PAGE_LIMIT_DEFAULT
  return Math.min(PAGE_LIMIT_MAX, Math.max(1, Number(asked)))
}

/** The address of a page: the first without a cursor, the next with the previous page's `nextCursor`. */
export const jobsPageUrl = (limit: number, cursor: string | null = null): string =>
  `/api/v1/jobs?${new URLSearchParams(cursor === null ? { limit: String(limit) } : { limit: String(limit), cursor })}`

/** The list with one more page read: the first (no list yet) or the one after `shown`; a job already shown is kept once. */
export const withPage = (shown: JobPages | undefined, page: JobList): JobPages => {
  if (shown === undefined) return { jobs: page.data, nextCursor: page.nextCursor }
  const seen = new Set(shown.jobs.map((job) => job.jobId))
  return { jobs: [...shown.jobs, ...page.data.filter((job) => !seen.has(job.jobId))], nextCursor: page.nextCursor }
}

/**
 * The next page a read of the list needs to show at least `wanted` jobs (at
 * least the first page): its address, or undefined once `read` has as many
 * jobs or the list has ended.
 */
export const nextPageUrl = (read: JobPages | undefined, limit: number, wanted: number): string | undefined => {
  if (read === undefined) return jobsPageUrl(limit)
  if (read.nextCursor === null || read.jobs.length >= wanted) return undefined
  return jobsPageUrl(limit, read.nextCursor)
}
