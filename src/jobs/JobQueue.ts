/**
 * The asynchronous bulk-validation queue, as a port: the service every
 * transport calls, its options and requests, the list cursor and a new
 * job's record. Two adapters implement it: `JobQueueLocal.ts` (one daemon,
 * over its `JobStore`) and `jobQueueShared.ts` (daemons sharing one store:
 * `JobQueueRedis.ts` on Redis, `JobQueuePostgres.ts` on PostgreSQL); this
 * module imports none of them.
 *
 * What both promise: a job is accepted only once its input and record are
 * stored, so an accepted job survives a crash (with a durable store);
 * `submit` refuses (`JobsError`, reason `QueueFull`) when `maxQueued` jobs
 * are waiting; a repeated (team, Idempotency-Key) returns the first job
 * when the body hash matches and fails with reason `IdempotencyConflict`
 * otherwise; a job another team owns is `JobNotFound` (the team rule,
 * `domain/visibility.ts`); finished jobs expire `retentionHours` after
 * they finish.
 */
import { randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { TeamId } from "../domain/Identifiers.ts"
import { InvalidJobCursor, type JobsError, jobsError } from "./errors.ts"
import {
  type Job,
  type JobCallback,
  type JobId,
  type JobIdempotency,
  type JobStatus,
  type JobTarget,
  newJob
} from "./Job.ts"
import type { JobPosition } from "./JobIndex.ts"
import type { JobStoreError, StagedUpload } from "./JobStore.ts"
import type { BatchEvaluator } from "./jobBatches.ts"
import type { JobUsage } from "./jobUsage.ts"

/** A page of jobs and where the next page starts (undefined on the last). */
export interface JobList {
  readonly jobs: ReadonlyArray<Job>
  readonly next: string | undefined
}

/** A list position as an opaque cursor: base64url of `<createdAt>.<jobId>`. */
export const encodeJobCursor = (position: JobPosition): string =>
  Buffer.from(`${position.createdAt}.${position.jobId}`, "utf8").toString("base64url")

export const decodeJobCursor = (cursor: string): JobPosition | undefined => {
  const match = /^(\d{1,15})\.(job_[0-9a-f]{32})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  if (match === null) return undefined
  const position = { createdAt: Number(match[1]), jobId: match[2]! }
  return encodeJobCursor(position) === cursor ? position : undefined
}

/** Where a list starts: after the position `after` names (none: the first page); a cursor no queue gave is `InvalidJobCursor`. */
export const listStart = (after: string | undefined): Effect.Effect<JobPosition | undefined, JobsError> => {
  if (after === undefined) return Effect.succeed(undefined)
  const position = decodeJobCursor(after)
  return position === undefined ? jobsError(new InvalidJobCursor({})) : Effect.succeed(position)
}

/** The `next` of a page: where its last job stands when more follow, else undefined. */
export const nextCursor = (page: {
  readonly entries: ReadonlyArray<JobPosition>
  readonly more: boolean
}): string | undefined => {
  const last = page.entries[page.entries.length - 1]
  return page.more && last !== undefined ? encodeJobCursor(last) : undefined
}

export interface SubmitJob {
  readonly team: TeamId
  readonly target: JobTarget
  /** The number of input items (lines of the input). */
  readonly total: number
  /** The input, staged in the queue's store; it is consumed either way: made the job's input, or discarded. */
  readonly input: StagedUpload
  readonly callbackUrl?: string | undefined
  readonly idempotency?: JobIdempotency | undefined
  /** The input's columns besides the email, which results carry. */
  readonly inputColumns?: ReadonlyArray<string> | undefined
}

/** The record of a new job for `request`, submitted at `submittedAt` (epoch ms), with a fresh id. */
export const newJobFor = (request: SubmitJob, submittedAt: number): Job =>
  newJob({
    jobId: `job_${randomBytes(16).toString("hex")}` as JobId,
    team: request.team,
    target: request.target,
    total: request.total,
    createdAt: new Date(submittedAt).toISOString(),
    callbackUrl: request.callbackUrl,
    idempotency: request.idempotency,
    inputColumns: request.inputColumns
  })

export interface Submitted {
  readonly job: Job
  /** False when an earlier request with the same Idempotency-Key and body created it. */
  readonly created: boolean
}

export interface JobQueueOptions {
  readonly concurrency: number
  readonly maxQueued: number
  readonly retentionHours: number
  /** Evaluates the jobs' batches (`evaluateHere`, or on worker threads). */
  readonly evaluator: BatchEvaluator
  /**
   * Called (in a background fiber) when a job with a callback finishes, and
   * at start for finished jobs whose callback is not delivered yet.
   * `recordCallback` stores the delivery state in the job's record.
   */
  readonly onFinished?:
    | ((job: Job, recordCallback: (callback: JobCallback) => Effect.Effect<void>) => Effect.Effect<void>)
    | undefined
  /** How offer jobs count in the usage statistics, exactly once (absent: they are not counted). */
  readonly usage?: JobUsage | undefined
  /** Called (synchronously) with every job's final record, whatever its end. */
  readonly onEnded?: ((job: Job) => void) | undefined
  /** Input items per chunk (default 25,000). */
  readonly chunkItems?: number | undefined
  /** How often expired jobs are deleted (default 10 minutes). */
  readonly sweepInterval?: Duration.Input | undefined
}

export class JobQueue extends Context.Service<
  JobQueue,
  {
    submit(request: SubmitJob): Effect.Effect<Submitted, JobsError | JobStoreError>
    get(team: string, jobId: string): Effect.Effect<Job, JobsError | JobStoreError>
    /**
     * A page of the team's jobs, newest first, optionally with one status;
     * `after` is the `next` of the previous page. An `after` that is not one
     * this queue gave is `InvalidJobCursor`.
     */
    list(
      team: string,
      options: { readonly status?: JobStatus | undefined; readonly after?: string | undefined; readonly limit: number }
    ): Effect.Effect<JobList, JobsError | JobStoreError>
    /** Cancels a queued or running job and answers its final record; a finished job is answered as it is. */
    cancel(team: string, jobId: string): Effect.Effect<Job, JobsError | JobStoreError>
    /** Deletes a finished job and its results. */
    delete(team: string, jobId: string): Effect.Effect<void, JobsError | JobStoreError>
    /** Waits until the job has finished and answers its final record. */
    awaitFinished(team: string, jobId: string): Effect.Effect<Job, JobsError | JobStoreError>
    /** Stores a finished job's callback delivery state (used by `onFinished`). */
    recordCallback(jobId: JobId, callback: JobCallback): Effect.Effect<void>
    /** Jobs waiting for a worker and jobs being processed, now (for metrics). */
    occupancy(): { readonly waiting: number; readonly running: number }
    /**
     * A job's upload has begun on this daemon: its evaluator gets ready now
     * (`BatchEvaluator.prepare`), while the upload is read, not when the
     * job's first batch is taken.
     */
    prepare(): void
  }
>()("campusgate/jobs/JobQueue") {}
