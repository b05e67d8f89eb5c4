/**
 * The job queue of one daemon (`JobQueue.ts`, the port), over any
 * `JobStore`: at start it re-enqueues every queued or running job (a
 * running one resumes at its checkpoint) and hands finished jobs whose
 * callback was not delivered back to `onFinished`. The backlog lives in
 * the store; memory holds a small entry per job (`JobIndex`).
 *
 * `concurrency` worker fibers (`jobWorkers.ts`) take job ids from an
 * Effect queue; a sweeper on Effect's `Clock` deletes expired jobs. For
 * several daemons sharing one Redis, `JobQueueRedis.ts` is the same
 * service.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import { IdempotencyConflict, JobNotFinished, JobNotFound, jobsError, QueueFull } from "./errors.ts"
import { isFinished, type Job, type JobCallback, type JobId } from "./Job.ts"
import { type JobEntry, JobIndex } from "./JobIndex.ts"
import { JobQueue, type JobQueueOptions, listStart, newJobFor, nextCursor, type SubmitJob } from "./JobQueue.ts"
import { JobStore } from "./JobStore.ts"
import { forgetJobUsage } from "./jobUsage.ts"
import { finishJob, jobEntry, type QueueContext, recordCallback, startWorkers } from "./jobWorkers.ts"

export const layer = (options: JobQueueOptions): Layer.Layer<JobQueue, never, JobStore> =>
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
                return yield* jobsError(new IdempotencyConflict({ key: request.idempotency.key, jobId: earlier.jobId }))
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
          const page = index.list(team, yield* now, { status, after: yield* listStart(after), limit })
          const jobs: Array<Job> = []
          for (const entry of page.entries) {
            // A job deleted between the index and the read is left out.
            const job = yield* store.read(entry.jobId)
            if (job !== undefined) jobs.push(job)
          }
          return { jobs, next: nextCursor(page) }
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
