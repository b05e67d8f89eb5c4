/**
 * The record of one asynchronous bulk-validation job, as kept in
 * `job.json`: the fields the API shows (`domain/Job.ts`) plus the team, the
 * idempotency key and the private checkpoint (`toJobView` strips them). Counts always agree with the checkpoint they were written
 * with: `valid + invalid = progress.processed`; `duplicates` (the same
 * canonical address seen earlier in the job) and `badInput` (an item that
 * could not be read as an email) are subsets of them. Times are ISO 8601
 * strings; `expiresAt` is set when the job finishes.
 */
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { TeamId } from "../domain/Identifiers.ts"
import { JobId, type JobTarget, type JobView, jobViewFields } from "../domain/Job.ts"
import { UsageDelta } from "../domain/OfferUsage.ts"

export {
  CallbackAttempt,
  isFinished,
  JobCallback,
  JobCounts,
  JobId,
  JobProgress,
  JobStatus,
  JobTarget
} from "../domain/Job.ts"

export const isJobId: (input: unknown) => input is JobId = Schema.is(JobId)

export const JobIdempotency = Schema.Struct({
  /** The client's `Idempotency-Key`. */
  key: Schema.String,
  /** A hash of the request body: a repeat with another body is a conflict. */
  bodyHash: Schema.String
})
export type JobIdempotency = typeof JobIdempotency.Type

/**
 * How far the job got, durably: the first `processed` input lines, which end
 * at byte `inputBytes` of the input, have their rows in the first
 * `resultsBytes` bytes of the results. Anything after that is redone.
 * `usage` is what the chunk that ends here counted in the offer's usage
 * statistics; it is stored once per checkpoint (`jobUsage.ts`).
 */
export const JobCheckpoint = Schema.Struct({
  processed: Count,
  inputBytes: Count,
  resultsBytes: Count,
  usage: Schema.optionalKey(UsageDelta)
})
export type JobCheckpoint = typeof JobCheckpoint.Type

/** The stored record: what the API shows, plus the team, the idempotency key and the checkpoint. */
export const Job = Schema.Struct({
  ...jobViewFields,
  team: TeamId,
  idempotency: Schema.optionalKey(JobIdempotency),
  checkpoint: JobCheckpoint
})
export type Job = typeof Job.Type

/** The job as the API shows it: no team, idempotency key or checkpoint; `links` come from the caller. */
export const toJobView = (job: Job, links: JobView["links"]): JobView => {
  const { team: _team, idempotency: _idempotency, checkpoint: _checkpoint, ...view } = job
  return { ...view, links }
}

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
  readonly inputColumns?: ReadonlyArray<string> | undefined
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
  ...(fields.inputColumns === undefined || fields.inputColumns.length === 0
    ? {}
    : { inputColumns: fields.inputColumns }),
  checkpoint: { processed: 0, inputBytes: 0, resultsBytes: 0 }
})
