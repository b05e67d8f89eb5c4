/**
 * An asynchronous bulk validation job as the API shows it (DESIGN.md "Bulk
 * (async)"): its state, numeric progress and counts, its timestamps, and
 * where its results are. `valid + invalid = processed`; `duplicates` (an
 * address whose canonical form came earlier in the job) and `badInput`
 * (an input item that is not an email at all) are subsets of those.
 */
import * as Schema from "effect/Schema"

export const JobStatus = Schema.Literals(["queued", "running", "completed", "failed", "cancelled"])
export type JobStatus = typeof JobStatus.Type

/** A job is finished once it can no longer change. */
export const isFinished = (status: JobStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

export const JobTarget = Schema.Union([
  Schema.Struct({ targetGroupId: Schema.String }),
  Schema.Struct({ offerId: Schema.String })
])
export type JobTarget = typeof JobTarget.Type

export const JobProgress = Schema.Struct({
  total: Schema.Number,
  processed: Schema.Number,
  /** 0-100, whole numbers; 100 only when every input is processed. */
  percent: Schema.Number
})
export type JobProgress = typeof JobProgress.Type

export const JobCounts = Schema.Struct({
  valid: Schema.Number,
  invalid: Schema.Number,
  duplicates: Schema.Number,
  badInput: Schema.Number
})
export type JobCounts = typeof JobCounts.Type

export const CallbackAttempt = Schema.Struct({
  at: Schema.String,
  /** The receiver's HTTP status, when it answered. */
  status: Schema.optionalKey(Schema.Number),
  error: Schema.optionalKey(Schema.String)
})
export type CallbackAttempt = typeof CallbackAttempt.Type

export const JobCallback = Schema.Struct({
  url: Schema.String,
  delivered: Schema.Boolean,
  attempts: Schema.Array(CallbackAttempt)
})
export type JobCallback = typeof JobCallback.Type

export const JobLinks = Schema.Struct({ self: Schema.String, results: Schema.String })

export const JobView = Schema.Struct({
  jobId: Schema.String,
  status: JobStatus,
  target: JobTarget,
  progress: JobProgress,
  counts: JobCounts,
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  finishedAt: Schema.NullOr(Schema.String),
  /** When a finished job and its results are removed; null until it finishes. */
  expiresAt: Schema.NullOr(Schema.String),
  error: Schema.optionalKey(Schema.String),
  callback: Schema.optionalKey(JobCallback),
  links: JobLinks
})
export type JobView = typeof JobView.Type
