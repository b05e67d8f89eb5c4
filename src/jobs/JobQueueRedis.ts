/**
 * The job queue shared by every daemon on one Redis: the same service as
 * `JobQueueLocal.layer`, with the queue's state in Redis (keys in
 * `jobQueueKeys.ts`, changed by the scripts of `jobQueueScripts.ts`)
 * instead of this process's memory, and the job's input and results on
 * the data directory every daemon mounts (`JobStoreRedis.ts`).
 *
 * - `submit` stores the record, the waiting entry and the Idempotency-Key
 *   in one script, so `maxQueued` and idempotency hold across daemons; the
 *   202 is answered only after it.
 * - Each daemon runs `concurrency` workers (`jobQueueLease.ts`). A worker
 *   claims the next job under a lease (`LEASE_MS`, Redis's clock) and
 *   renews it every `LEASE_MS / 5`; checkpoints and the final record are
 *   written only while the lease is held. A daemon that dies (SIGKILL, a
 *   lost host) stops renewing: once the lease lapses, another daemon's
 *   worker takes the job and resumes it at its last checkpoint, storing
 *   that checkpoint's usage again first (`applyOnce` makes that count
 *   once), so every input is counted and written exactly once. A worker
 *   that cannot renew (Redis down, or the lease taken) stops its run
 *   before its lease could lapse, so two daemons never write one job's
 *   results at once — assuming no pause of a daemon longer than the lease
 *   minus one renewal.
 * - Workers wait for a message on `jobs:wake` (published by every submit)
 *   or `POLL_MS`, whichever comes first.
 * - A cancellation of a job running on another daemon is asked in Redis
 *   and seen at that daemon's next renewal; waiting for a job to finish
 *   polls its record (a job run here is announced at once).
 * - Retention, callbacks and idempotency behave as with one daemon:
 *   finished jobs expire (any daemon's sweeper deletes them), a callback
 *   is delivered by the daemon that finished the job, and tried again by
 *   any daemon when that one is gone before it settled
 *   (`jobQueueCallbacks.ts`).
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { jobVisible } from "../domain/visibility.ts"
import { RedisKeyPrefix } from "../store/redis.ts"
import { IdempotencyConflict, InvalidJobCursor, JobNotFinished, JobNotFound, jobsError, QueueFull } from "./errors.ts"
import { isFinished, type Job, type JobId } from "./Job.ts"
import { type JobEntry, pageOf } from "./JobIndex.ts"
import {
  decodeJobCursor,
  encodeJobCursor,
  JobQueue,
  type JobQueueOptions,
  newJobFor,
  type SubmitJob
} from "./JobQueue.ts"
import { JobStore, JobStoreError } from "./JobStore.ts"
import { encodeJob, makeRedisJobStore, redisStep } from "./JobStoreRedis.ts"
import { callbackAt, makeJobCallbacks } from "./jobQueueCallbacks.ts"
import { idempotencyField, jobQueueKeys } from "./jobQueueKeys.ts"
import { makeLeaseWorker } from "./jobQueueLease.ts"
import { cancelScript, dropScript, submitScript, takeDueScript } from "./jobQueueScripts.ts"
import { forgetJobUsage, storeCheckpointUsage } from "./jobUsage.ts"
import { finalRecord, logEnd } from "./jobWorkers.ts"

/** How often a waiter reads the record of a job running on another daemon. */
const AWAIT_POLL_MS = 250

export interface RedisJobQueueOptions extends JobQueueOptions {
  /** Where job inputs and results are kept: a directory every daemon mounts. */
  readonly dataDir: string
}

const now = Effect.clockWith((clock) => clock.currentTimeMillis)

export const layerRedis = (options: RedisJobQueueOptions): Layer.Layer<JobQueue | JobStore, never, Redis.Redis> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const redis = yield* Redis.Redis
      const prefix = yield* RedisKeyPrefix
      const { store, files, sweepFiles } = yield* makeRedisJobStore(options.dataDir)
      const keys = jobQueueKeys(prefix)
      const scripts = {
        submit: redis.eval(submitScript),
        cancel: redis.eval(cancelScript),
        takeDue: redis.eval(takeDueScript),
        drop: redis.eval(dropScript)
      }
      /** Jobs this daemon runs now, and waiters for jobs that end here. */
      const active = new Map<string, JobEntry>()
      const endings = new Map<string, Deferred.Deferred<Job>>()
      let waitingSeen = 0
      const wake = yield* Queue.sliding<void>(options.concurrency)

      const ending = (jobId: string) => {
        let deferred = endings.get(jobId)
        if (deferred === undefined) {
          deferred = Deferred.makeUnsafe<Job>()
          endings.set(jobId, deferred)
        }
        return deferred
      }
      const announceEnd = (job: Job) =>
        Effect.sync(() => {
          const deferred = endings.get(job.jobId)
          endings.delete(job.jobId)
          if (deferred !== undefined) Deferred.doneUnsafe(deferred, Exit.succeed(job))
        })

      /** Deletes a finished job: record, expiry, key, files, usage marker. */
      const drop = (job: Job) =>
        Effect.gen(function* () {
          const field = job.idempotency === undefined ? "" : idempotencyField(job.team, job.idempotency.key)
          yield* scripts
            .drop(keys.records, keys.expiring, keys.idempotency, keys.callbacks, job.jobId, field)
            .pipe(redisStep("remove", job.jobId))
          yield* store.remove(job.jobId)
          yield* forgetJobUsage(options.usage, job)
        })

      const lookup = Effect.fnUntraced(function* (team: string, jobId: string) {
        const job = yield* store.read(jobId as JobId)
        if (job === undefined || !jobVisible(job, team)) return yield* jobsError(new JobNotFound({ jobId }))
        if (job.expiresAt !== null && Date.parse(job.expiresAt) <= (yield* now)) {
          // Expired: gone now, whichever daemon's sweeper would have come first.
          yield* drop(job)
          return yield* jobsError(new JobNotFound({ jobId }))
        }
        return job
      })

      const { recordCallback, notify, sweep: callbackSweep } = yield* makeJobCallbacks(store, keys, options.onFinished)

      /** What follows a final record written: usage, log, metrics, waiters, callback. */
      const ended = (final: Job) =>
        Effect.gen(function* () {
          yield* storeCheckpointUsage(options.usage, final)
          yield* logEnd(final)
          options.onEnded?.(final)
          yield* announceEnd(final)
          yield* notify(final)
        })

      const submit = Effect.fn("JobQueue.submit")(function* (request: SubmitJob) {
        const submittedAt = yield* now
        const field = request.idempotency === undefined ? "" : idempotencyField(request.team, request.idempotency.key)
        const job = newJobFor(request, submittedAt)
        // The input is moved into place before the record exists: a job with a record has its whole input.
        yield* Effect.try({
          try: () => files.adopt(job.jobId, request.input),
          catch: (cause) => new JobStoreError({ operation: "create", jobId: job.jobId, cause })
        })
        const unadopted = Effect.sync(() => files.remove(job.jobId)).pipe(Effect.ignore)
        for (let attempt = 0; ; attempt++) {
          const [outcome, holder] = yield* scripts
            .submit(
              keys.records,
              keys.waiting,
              keys.idempotency,
              job.jobId,
              encodeJob(job),
              submittedAt,
              options.maxQueued,
              field,
              keys.wake
            )
            .pipe(
              redisStep("create", job.jobId),
              Effect.tapError(() => unadopted)
            )
          if (outcome === "created") {
            yield* Queue.offer(wake, undefined)
            return { job, created: true }
          }
          if (outcome === "full") {
            yield* unadopted
            return yield* jobsError(new QueueFull({ maxQueued: options.maxQueued }))
          }
          const earlier = yield* store.read(holder as JobId)
          const expired =
            earlier?.expiresAt !== null &&
            earlier?.expiresAt !== undefined &&
            Date.parse(earlier.expiresAt) <= submittedAt
          if (earlier === undefined || expired) {
            // The key's job is gone or expired: it no longer holds the key.
            if (earlier !== undefined) yield* drop(earlier)
            else yield* redis.send("HDEL", keys.idempotency, field).pipe(redisStep("create", job.jobId))
            if (attempt < 3) continue
          }
          yield* unadopted
          if (earlier === undefined || earlier.idempotency?.bodyHash !== request.idempotency?.bodyHash) {
            return yield* jobsError(new IdempotencyConflict({ key: request.idempotency!.key, jobId: holder }))
          }
          return { job: earlier, created: false }
        }
      })

      const worker = yield* makeLeaseWorker({
        store,
        keys,
        options,
        active,
        wake,
        sawWaiting: (waiting) => {
          waitingSeen = waiting
        },
        ended
      })

      // Submits on other daemons wake this one's workers.
      const messages = yield* redis.subscribe(keys.wake)
      yield* Effect.forkScoped(
        Effect.forever(Effect.andThen(Queue.take(messages), Queue.offer(wake, undefined))).pipe(Effect.ignore)
      )
      for (let i = 0; i < options.concurrency; i++) yield* Effect.forkScoped(worker)

      const sweep = Effect.gen(function* () {
        const due = yield* scripts.takeDue(keys.expiring, yield* now, "")
        for (const jobId of due) {
          const job = yield* store.read(jobId as JobId)
          if (job !== undefined) yield* drop(job)
        }
        yield* sweepFiles
      }).pipe(Effect.catchCause((cause) => Effect.logWarning("the job sweep failed; it runs again later", cause)))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(options.sweepInterval ?? "10 minutes")))

      // Callbacks whose deliverer died before they settled are delivered here.
      yield* Effect.forkScoped(callbackSweep)

      const awaitEnd = (job: Job): Effect.Effect<Job, JobStoreError> => {
        if (isFinished(job.status)) return Effect.succeed(job)
        const polled = Effect.gen(function* () {
          for (;;) {
            yield* Effect.sleep(AWAIT_POLL_MS)
            const current = yield* store.read(job.jobId)
            if (current === undefined) return job
            if (isFinished(current.status)) return current
          }
        })
        return Effect.raceFirst(Deferred.await(ending(job.jobId)), polled)
      }

      const cancel = Effect.fn("JobQueue.cancel")(function* (team: string, jobId: string) {
        const job = yield* lookup(team, jobId)
        if (isFinished(job.status)) return job
        const local = active.get(jobId)
        if (local !== undefined) {
          local.cancelRequested = true
          return yield* awaitEnd(job)
        }
        const at = yield* now
        const final = finalRecord({ job, status: "cancelled" }, at, options.retentionHours)
        const outcome = yield* scripts
          .cancel(
            keys.waiting,
            keys.records,
            keys.expiring,
            keys.running,
            keys.cancel,
            keys.callbacks,
            jobId,
            encodeJob(final),
            Date.parse(final.expiresAt!),
            callbackAt(final, at)
          )
          .pipe(redisStep("write", jobId))
        if (outcome === 1) {
          yield* ended(final)
          return final
        }
        return yield* awaitEnd(job)
      })

      const queue = JobQueue.of({
        submit,
        get: Effect.fn("JobQueue.get")(function* (team: string, jobId: string) {
          return yield* lookup(team, jobId)
        }),
        // Read from every record: the records are as many as retention keeps (a per-team index would serve
        // very large deployments better).
        list: Effect.fn("JobQueue.list")(function* (team, { status, after, limit }) {
          const position = after === undefined ? undefined : decodeJobCursor(after)
          if (after !== undefined && position === undefined) return yield* jobsError(new InvalidJobCursor({}))
          const at = yield* now
          const positioned = (yield* store.list())
            .filter(
              (job) =>
                jobVisible(job, team) &&
                (job.expiresAt === null || Date.parse(job.expiresAt) > at) &&
                (status === undefined || job.status === status)
            )
            .map((job) => ({ job, jobId: job.jobId, createdAt: Date.parse(job.createdAt) }))
          const page = pageOf(positioned, position, limit)
          const last = page.entries[page.entries.length - 1]
          return {
            jobs: page.entries.map((entry) => entry.job),
            next: page.more && last !== undefined ? encodeJobCursor(last) : undefined
          }
        }),
        cancel,
        delete: Effect.fn("JobQueue.delete")(function* (team: string, jobId: string) {
          const job = yield* lookup(team, jobId)
          if (!isFinished(job.status)) return yield* jobsError(new JobNotFinished({ jobId, status: job.status }))
          yield* drop(job)
        }),
        awaitFinished: Effect.fn("JobQueue.awaitFinished")(function* (team: string, jobId: string) {
          return yield* awaitEnd(yield* lookup(team, jobId))
        }),
        recordCallback: (jobId, callback) => recordCallback(jobId, callback),
        occupancy: () => ({ waiting: waitingSeen, running: active.size }),
        prepare: () => options.evaluator.prepare?.()
      })
      return Context.make(JobQueue, queue).pipe(Context.add(JobStore, store))
    })
  )
