/**
 * What the Jobs screen shows of a job beside its record: how long it ran
 * (or has been running), whether it still changes (and so is polled), the
 * links to download its results and what a file upload is sent as.
 */
import type { Job } from "../apiTypes.ts"

export const jobFinished = (job: Pick<Job, "status">): boolean =>
  job.status === "completed" || job.status === "failed" || job.status === "cancelled"

/** Seconds from start to finish, or to `now` while it runs; undefined before it starts. */
export const jobSeconds = (job: Pick<Job, "startedAt" | "finishedAt">, now: number): number | undefined => {
  if (job.startedAt === null) return undefined
  const end = job.finishedAt === null ? now : Date.parse(job.finishedAt)
  return Math.max(0, (end - Date.parse(job.startedAt)) / 1000)
}

export type ResultFormat = "csv" | "ndjson"

export const resultsUrl = (jobId: string, format: ResultFormat): string =>
  `/api/v1/jobs/${encodeURIComponent(jobId)}/results?format=${format}`

export const resultsFileName = (jobId: string, format: ResultFormat): string => `${jobId}.${format}`

/** The media type a picked file is sent as, from its name (then its type); undefined when neither says CSV or NDJSON. */
export const uploadType = (file: { readonly name: string; readonly type: string }): string | undefined => {
  const name = file.name.toLowerCase()
  if (name.endsWith(".csv") || file.type === "text/csv") return "text/csv"
  if (name.endsWith(".ndjson") || name.endsWith(".jsonl") || file.type === "application/x-ndjson")
    return "application/x-ndjson"
  return undefined
}

/** Where an upload is submitted: the job endpoint with its target in the query. */
export const submitUrl = (target: { readonly kind: "offerId" | "targetGroupId"; readonly id: string }): string =>
  `/api/v1/validate/bulk-async?${new URLSearchParams({ [target.kind]: target.id })}`
