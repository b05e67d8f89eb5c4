/**
 * The asynchronous bulk-validation queue. A job is accepted only
 * once its input and record are stored (`JobStore.create`), so an accepted
 * job survives a crash (with a durable store): at start the queue
 * re-enqueues every queued or running job (a running one resumes at its
 * checkpoint) and hands finished jobs whose callback was not delivered back
 * to `onFinished`. The backlog lives in the store; memory holds a small
 * entry per job (`JobIndex`).
 *
 * `concurrency` worker fibers take job ids from an Effect queue; `submit`
 * refuses (`JobsError`, reason `QueueFull`) when `maxQueued` jobs are
 * waiting. A repeated (team, Idempotency-Key) returns the first job when
 * the body hash matches and fails with reason `IdempotencyConflict`
 * otherwise. Another team's job is `JobNotFound`. Finished jobs expire `retentionHours` after they finish; a
 * sweeper on Effect's `Clock` deletes them. `layerRedis` is the same service
 * for several daemons sharing one Redis (`JobQueueRedis.ts`).
 */
import { randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import type { TeamId } from "../domain/Identifiers.ts"
import {
  IdempotencyConflict,
  InvalidJobCursor,
  JobNotFinished,
  JobNotFound,
  type JobsError,
  jobsError,
  QueueFull
} from "./errors.ts"
import {
  isFinished,
  type Job,
  type JobCallback,
  type JobId,
  type JobIdempotency,
  type JobStatus,
  type JobTarget,
  newJob
} from "./Job.ts"
import { type JobEntry, JobIndex, type JobPosition } from "./JobIndex.ts"
import { type RedisJobQueueOptions, layerRedis as redisQueue } from "./JobQueueRedis.ts"
import { JobStore, type JobStoreError, type StagedUpload } from "./JobStore.ts"
import type { BatchEvaluator } from "./jobBatches.ts"
import { forgetJobUsage, type JobUsage } from "./jobUsage.ts"
import { finishJob, jobEntry, type QueueContext, recordCallback, startWorkers } from "./jobWorkers.ts"

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
>()("campusgate/jobs/JobQueue") {
  /** The queue and its store shared by every daemon on one Redis (`JobQueueRedis.ts`). */
  static readonly layerRedis = (options: RedisJobQueueOptions): Layer.Layer<JobQueue | JobStore, never, Redis.Redis> =>
    Layer.unwrap(Effect.sync(() => redisQueue(options)))

  static readonly layer = (options: JobQueueOptions): Layer.Layer<JobQueue, never, JobStore> =>
    Layer.effect(
      JobQueue,
      Effect.gen(function* () {
        const store = yield* JobStore
        const ids = yield* Queue.unbounded<JobId>()
        const lock = yield* Semaphore.make(1)
        const context: QueueContext = {
          store,
          index: new JobIndex(),
          options,
          scope: yield* Effect.scope,
          locked: lock.withPermits(1)
        }
        const { index, locked } = context
        const now = Effect.clockWith((clock) => clock.currentTimeMillis)
        const lookup = Effect.fnUntraced(function* (team: string, jobId: string) {
          const entry = index.find(team, jobId, yield* now)
          if (entry === undefined) return yield* jobsError(new JobNotFound({ jobId }))
          return entry
        })
        const readJob = Effect.fnUntraced(function* (entry: JobEntry) {
          const job = yield* store.read(entry.jobId)
          if (job === undefined) return yield* jobsError(new JobNotFound({ jobId: entry.jobId }))
          return job
        })

        /** Deletes a finished job: its data, its entry, its usage marker. Call under the lock. */
        const drop = Effect.fnUntraced(function* (entry: JobEntry) {
          yield* store.remove(entry.jobId)
          index.remove(entry)
          yield* forgetJobUsage(options.usage, entry)
        })

        const submit = Effect.fn("JobQueue.submit")(
          function* (request: SubmitJob) {
            const submittedAt = yield* now
            if (request.idempotency !== undefined) {
              let earlier = index.byIdempotency(request.team, request.idempotency.key)
              if (earlier?.expiresAt !== undefined && earlier.expiresAt <= submittedAt) {
                // An expired job no longer holds its key, even before the sweeper removes it.
                yield* drop(earlier)
                earlier = undefined
              }
              if (earlier !== undefined) {
                yield* store.discard(request.input)
                if (earlier.idempotency?.bodyHash !== request.idempotency.bodyHash) {
                  return yield* jobsError(
                    new IdempotencyConflict({ key: request.idempotency.key, jobId: earlier.jobId })
                  )
                }
                return { job: yield* Effect.orDie(readJob(earlier)), created: false }
              }
            }
            if (index.waiting >= options.maxQueued) {
              yield* store.discard(request.input)
              return yield* jobsError(new QueueFull({ maxQueued: options.maxQueued }))
            }
            const job = newJobFor(request, submittedAt)
            yield* store.create(job, request.input)
            index.add(yield* jobEntry(job))
            yield* Queue.offer(ids, job.jobId)
            return { job, created: true }
          },
          (effect) => locked(effect)
        )

        const cancel = Effect.fn("JobQueue.cancel")(function* (team: string, jobId: string) {
          const entry = yield* lookup(team, jobId)
          const settled = yield* locked(
            Effect.gen(function* () {
              if (isFinished(entry.status)) return yield* readJob(entry)
              if (entry.active) {
                entry.cancelRequested = true
                return undefined
              }
              index.leaveQueue(entry)
              return yield* finishJob(context, entry, { job: yield* readJob(entry), status: "cancelled" })
            })
          )
          return settled ?? (yield* Deferred.await(entry.finished))
        })

        const remove = Effect.fn("JobQueue.delete")(function* (team: string, jobId: string) {
          const entry = yield* lookup(team, jobId)
          yield* locked(
            Effect.gen(function* () {
              if (!isFinished(entry.status)) {
                return yield* jobsError(new JobNotFinished({ jobId, status: entry.status }))
              }
              yield* drop(entry)
            })
          )
        })

        const sweep = locked(
          Effect.gen(function* () {
            for (const entry of index.expired(yield* now)) {
              yield* drop(entry)
            }
          })
        )

        yield* startWorkers(context, ids)
        yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(options.sweepInterval ?? "10 minutes")))

        return JobQueue.of({
          submit,
          get: Effect.fn("JobQueue.get")(function* (team: string, jobId: string) {
            return yield* readJob(yield* lookup(team, jobId))
          }),
          list: Effect.fn("JobQueue.list")(function* (team, { status, after, limit }) {
            const position = after === undefined ? undefined : decodeJobCursor(after)
            if (after !== undefined && position === undefined) return yield* jobsError(new InvalidJobCursor({}))
            const page = index.list(team, yield* now, { status, after: position, limit })
            const jobs: Array<Job> = []
            for (const entry of page.entries) {
              // A job deleted between the index and the read is left out.
              const job = yield* store.read(entry.jobId)
              if (job !== undefined) jobs.push(job)
            }
            const last = page.entries[page.entries.length - 1]
            return { jobs, next: page.more && last !== undefined ? encodeJobCursor(last) : undefined }
          }),
          cancel,
          delete: remove,
          awaitFinished: Effect.fn("JobQueue.awaitFinished")(function* (team: string, jobId: string) {
            const entry = yield* lookup(team, jobId)
            return isFinished(entry.status) ? yield* readJob(entry) : yield* Deferred.await(entry.finished)
          }),
          occupancy: () => index.occupancy(),
          prepare: () => options.evaluator.prepare?.(),
          recordCallback: Effect.fn("JobQueue.recordCallback")(function* (jobId: JobId, callback: JobCallback) {
            yield* recordCallback(context, jobId, callback)
          })
        })
      })
    )
}
