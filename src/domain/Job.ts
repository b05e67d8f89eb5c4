/**
 * An asynchronous bulk validation job as the API shows it (DESIGN.md "Bulk
 * (async)"): its state, numeric progress and counts, its timestamps, and
 * where its results are. `valid + invalid = processed`; `duplicates` (an
 * address whose canonical form came earlier in the job) and `badInput`
 * (an input item that is not an email at all) are subsets of those. Times
 * are ISO 8601 strings; `expiresAt` is set when the job finishes. The stored
 * record (`jobs/Job.ts`) adds the team, the idempotency key and a checkpoint.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Count } from "./Count.ts"
import { OfferId, TargetGroupId } from "./Identifiers.ts"
import { HTTP_PROTOCOLS, urlOf } from "./urls.ts"

/** `job_` and 32 lower-case hex digits: safe as a directory name and in URLs. */
export const JobId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^job_[0-9a-f]{32}$/, { message: "a job id is job_ and 32 hex digits" })),
  Schema.brand("JobId")
)
export type JobId = typeof JobId.Type

export const JobStatus = Schema.Literals(["queued", "running", "completed", "failed", "cancelled"])
export type JobStatus = typeof JobStatus.Type

/** A finished job never changes status again (only its callback record does). */
export const isFinished = (status: JobStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

/** A job validates against one target group or one offer. */
export const JobTarget = Schema.Union([
  Schema.Struct({ targetGroupId: TargetGroupId }),
  Schema.Struct({ offerId: OfferId })
])
export type JobTarget = typeof JobTarget.Type

export const JobProgress = Schema.Struct({
  total: Count,
  processed: Count,
  /** Whole percent, 0-100; 100 only when every input is processed. */
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

/**
 * Why a callback attempt was not delivered, as a class: the receiver's own
 * answer (status line, error text) is never recorded, so a callback URL
 * tells its submitter nothing more about a host than whether it took the
 * notice. `blocked`: the host is or resolves to an address callbacks may
 * not reach; `dns`: it did not resolve; `connect`: no connection, or it
 * broke; `timeout`; `http`: an answer other than 2xx; `redirect`: a
 * redirect to another origin, or too many.
 */
export const CallbackFailure = Schema.Literals(["blocked", "dns", "connect", "timeout", "http", "redirect"])
export type CallbackFailure = typeof CallbackFailure.Type

export const CallbackAttempt = Schema.Struct({
  at: Schema.String,
  /** The receiver answered 2xx. (Records of an earlier version lack it: they read as not delivered.) */
  delivered: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  reason: Schema.optionalKey(CallbackFailure)
})
export type CallbackAttempt = typeof CallbackAttempt.Type

/** Where a finished job's notice is POSTed: an absolute `http:` or `https:` URL. */
export const CallbackUrl = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(2048)),
  Schema.check(
    Schema.makeFilter((text: string) =>
      urlOf(text, HTTP_PROTOCOLS) !== null ? true : "expected an absolute http or https URL"
    )
  )
)

export const JobCallback = Schema.Struct({
  url: Schema.String,
  delivered: Schema.Boolean,
  attempts: Schema.Array(CallbackAttempt)
})
export type JobCallback = typeof JobCallback.Type

/** The fields the API shows, the stored record's and the answer's alike. */
export const jobViewFields = {
  jobId: JobId,
  target: JobTarget,
  status: JobStatus,
  progress: JobProgress,
  counts: JobCounts,
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  finishedAt: Schema.NullOr(Schema.String),
  /** When a finished job and its results are removed; null until it finishes. */
  expiresAt: Schema.NullOr(Schema.String),
  /** Why a failed job failed, in plain English. */
  error: Schema.optionalKey(Schema.String),
  /** The input's columns besides the email, in input order: each result row carries them (`columns`). */
  inputColumns: Schema.optionalKey(Schema.Array(Schema.String)),
  callback: Schema.optionalKey(JobCallback)
}

export const JobLinks = Schema.Struct({ self: Schema.String, results: Schema.String })

/** A job as `GET /jobs/{jobId}` answers it. */
export const JobView = Schema.Struct({ ...jobViewFields, links: JobLinks }).annotate({ identifier: "Job" })
export type JobView = typeof JobView.Type
