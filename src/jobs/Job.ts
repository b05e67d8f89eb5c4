/**
 * The record of one asynchronous bulk-validation job (issue 5), as kept in
 * `job.json` and, without its private checkpoint, as answered by
 * `GET /jobs/{id}`. Counts always agree with the checkpoint they were written
 * with: `valid + invalid = progress.processed`; `duplicates` (the same
 * canonical address seen earlier in the job) and `badInput` (an item that
 * could not be read as an email) are subsets of them. Times are ISO 8601
 * strings; `expiresAt` is set when the job finishes.
 */
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { OfferId, TargetGroupId, TeamId } from "../domain/Identifiers.ts"

/** `job_` and 32 lower-case hex digits: safe as a directory name and in URLs. */
export const JobId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^job_[0-9a-f]{32}$/, { message: "a job id is job_ and 32 hex digits" })),
  Schema.brand("JobId")
)
export type JobId = typeof JobId.Type

export const isJobId: (input: unknown) => input is JobId = Schema.is(JobId)

export const JobStatus = Schema.Literals(["queued", "running", "completed", "failed", "cancelled"])
export type JobStatus = typeof JobStatus.Type

/** A job validates against one target group or one offer. */
export const JobTarget = Schema.Union([
  Schema.Struct({ targetGroupId: TargetGroupId }),
  Schema.Struct({ offerId: OfferId })
])
export type JobTarget = typeof JobTarget.Type

const Count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

export const JobProgress = Schema.Struct({
  total: Count,
  processed: Count,
  /** Whole percent, 0-100. */
  percent: Count
})
export type JobProgress = typeof JobProgress.Type

export const JobCounts = Schema.Struct({
  valid: Count,
  invalid: Count,
  duplicates: Count,
  badInput: Count
})
export type JobCounts = typeof JobCounts.Type

export const CallbackAttempt = Schema.Struct({
  at: Schema.String,
  /** The HTTP status the callback URL answered, when it answered. */
  status: Schema.optionalKey(Schema.Int),
  error: Schema.optionalKey(Schema.String)
})
export type CallbackAttempt = typeof CallbackAttempt.Type

export const JobCallback = Schema.Struct({
  url: Schema.String,
  delivered: Schema.Boolean,
  attempts: Schema.Array(CallbackAttempt)
})
export type JobCallback = typeof JobCallback.Type

export const JobIdempotency = Schema.Struct({
  /** The client's `Idempotency-Key`. */
  key: Schema.String,
  /** A hash of the request body: a repeat with another body is a conflict. */
  bodyHash: Schema.String
})
export type JobIdempotency = typeof JobIdempotency.Type

/**
 * How far the job got, durably: the first `processed` input lines, which end
 * at byte `inputBytes` of `input.ndjson`, have their rows in the first
 * `resultsBytes` bytes of `results.ndjson`. Anything after that is redone.
 */
export const JobCheckpoint = Schema.Struct({
  processed: Count,
  inputBytes: Count,
  resultsBytes: Count
})
export type JobCheckpoint = typeof JobCheckpoint.Type

const jobFields = {
  jobId: JobId,
  team: TeamId,
  target: JobTarget,
  status: JobStatus,
  progress: JobProgress,
  counts: JobCounts,
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  finishedAt: Schema.NullOr(Schema.String),
  expiresAt: Schema.NullOr(Schema.String),
  /** Why a failed job failed, in plain English. */
  error: Schema.optionalKey(Schema.String),
  callback: Schema.optionalKey(JobCallback),
  idempotency: Schema.optionalKey(JobIdempotency),
  checkpoint: JobCheckpoint
}

export const Job = Schema.Struct(jobFields)
export type Job = typeof Job.Type

/** The job as API users see it: the record without its checkpoint. */
export const JobView = Schema.Struct(Struct.omit(jobFields, ["checkpoint"]))
export type JobView = typeof JobView.Type

export const toJobView = (job: Job): JobView => {
  const { checkpoint: _, ...view } = job
  return view
}

/** A finished job never changes status again (only its callback record does). */
export const isFinished = (status: JobStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

export const percentOf = (processed: number, total: number): number =>
  total === 0 ? 100 : Math.floor((processed * 100) / total)

/** A new job, queued, with nothing processed yet. */
export const newJob = (fields: {
  readonly jobId: JobId
  readonly team: TeamId
  readonly target: JobTarget
  readonly total: number
  readonly createdAt: string
  readonly callbackUrl?: string | undefined
  readonly idempotency?: JobIdempotency | undefined
}): Job => ({
  jobId: fields.jobId,
  team: fields.team,
  target: fields.target,
  status: "queued",
  progress: { total: fields.total, processed: 0, percent: 0 },
  counts: { valid: 0, invalid: 0, duplicates: 0, badInput: 0 },
  createdAt: fields.createdAt,
  startedAt: null,
  finishedAt: null,
  expiresAt: null,
  ...(fields.callbackUrl === undefined
    ? {}
    : { callback: { url: fields.callbackUrl, delivered: false, attempts: [] } }),
  ...(fields.idempotency === undefined ? {} : { idempotency: fields.idempotency }),
  checkpoint: { processed: 0, inputBytes: 0, resultsBytes: 0 }
})
