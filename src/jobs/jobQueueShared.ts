/**
 * The job queue shared by every daemon on one store: the same service as
 * `JobQueueLocal.layer`, with the queue's state in the shared store (a
 * `SharedQueueState`: Redis, `JobQueueRedis.ts`, or PostgreSQL,
 * `JobQueuePostgres.ts`) instead of this process's memory, the job's input
 * and results in that store too (`jobBytesShared.ts`): each daemon has its
 * own data directory, where it keeps copies.
 *
 * - `submit` stores the record, the waiting entry and the Idempotency-Key
 *   in one step, so `maxQueued` and idempotency hold across daemons; the
 *   202 is answered only after it.
 * - Each daemon runs `concurrency` workers (`jobQueueLease.ts`). A worker
 *   claims the next job under a lease (`LEASE_MS`, the store's clock) and
 *   renews it every `LEASE_MS / 5`; checkpoints and the final record are
 *   written only while the lease is held. A daemon that dies (SIGKILL, a
 *   lost host) stops renewing: once the lease lapses, another daemon's
 *   worker takes the job and resumes it at its last checkpoint, storing
 *   that checkpoint's usage again first (`applyOnce` makes that count
 *   once), so every input is counted and written exactly once. A worker
 *   that cannot renew (the store down, or the lease taken) stops its run
 *   before its lease could lapse, so two daemons never write one job's
 *   results at once — assuming no pause of a daemon longer than the lease
 *   minus one renewal.
 * - Workers wait for word of a submit on any daemon (`wakeOnSubmit`) or
 *   `POLL_MS`, whichever comes first.
 * - A cancellation of a job running on another daemon is asked in the
 *   store and seen at that daemon's next renewal; waiting for a job to
 *   finish polls its record (a job run here is announced at once).
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
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { jobVisible } from "../domain/visibility.ts"
import { IdempotencyConflict, JobNotFinished, JobNotFound, jobsError, QueueFull } from "./errors.ts"
import { isFinished, type Job, type JobId, type JobStatus } from "./Job.ts"
import { type JobEntry, pageOf } from "./JobIndex.ts"
import { JobQueue, type JobQueueOptions, listStart, newJobFor, nextCursor, type SubmitJob } from "./JobQueue.ts"
import { JobStore, type JobStoreError } from "./JobStore.ts"
import { callbackAt, makeJobCallbacks } from "./jobQueueCallbacks.ts"
import { makeLeaseWorker } from "./jobQueueLease.ts"
import { idempotencyField, type SharedJobStore, type SharedQueueState } from "./jobQueueState.ts"
import { forgetJobUsage, storeCheckpointUsage } from "./jobUsage.ts"
import { finalRecord, logEnd } from "./jobWorkers.ts"

/** How often a waiter reads the record of a job running on another daemon. */
const AWAIT_POLL_MS = 250
/** Attempts of a submit whose Idempotency-Key a gone or expired job still held. */
const SUBMIT_ATTEMPTS = 4

export interface SharedJobQueueOptions extends JobQueueOptions {
  /** Where this daemon keeps its copies of job inputs and results (the store holds them). */
  readonly dataDir: string
}

const now = Effect.clockWith((clock) => clock.currentTimeMillis)

/** What every step of the shared queue works on: the shared state, the store, and this daemon's view of its own jobs. */
interface SharedQueue {
  readonly state: SharedQueueState
  readonly store: JobStore["Service"]
  readonly bytes: SharedJobStore["bytes"]
  readonly options: SharedJobQueueOptions
  /** Jobs this daemon runs now. */
  readonly active: Map<string, JobEntry>
  /** Waiters for jobs that end on this daemon. */
  readonly endings: Map<string, Deferred.Deferred<Job>>
  /** Offered on every submit seen (here or by another daemon): wakes an idle worker. */
  readonly wake: Queue.Queue<void>
}

/** What follows a job's final record written: usage, log, metrics, waiters, callback. */
type Ended = (final: Job) => Effect.Effect<void>

/** Deletes a finished job: record, expiry, key, bytes, usage marker. */
const dropJob = (queue: SharedQueue, job: Job) =>
  Effect.gen(function* () {
    const { options } = queue
    const field = job.idempotency === undefined ? "" : idempotencyField(job.team, job.idempotency.key)
    yield* queue.state.drop(job, field)
    yield* queue.store.remove(job.jobId)
    yield* forgetJobUsage(options.usage, job)
  })

const expiredAt = (job: Job, at: number): boolean => job.expiresAt !== null && Date.parse(job.expiresAt) <= at

/** The job `team` may see (the team rule), not expired; an expired one is deleted now, whichever daemon comes first. */
const lookupJob = Effect.fnUntraced(function* (queue: SharedQueue, team: string, jobId: string) {
  const job = yield* queue.store.read(jobId as JobId)
  if (job === undefined || !jobVisible(job, team)) return yield* jobsError(new JobNotFound({ jobId }))
  if (expiredAt(job, yield* now)) {
    yield* dropJob(queue, job)
    return yield* jobsError(new JobNotFound({ jobId }))
  }
  return job
})

/** Resolves the waiters of a job that ended on this daemon. */
const announceEnd = (queue: SharedQueue, job: Job) =>
  Effect.sync(() => {
    const deferred = queue.endings.get(job.jobId)
    queue.endings.delete(job.jobId)
    if (deferred !== undefined) Deferred.doneUnsafe(deferred, Exit.succeed(job))
  })

/** The job's final record: at once when it ends on this daemon, else when a poll of its record sees it. */
const awaitEnd = (queue: SharedQueue, job: Job): Effect.Effect<Job, JobStoreError> => {
  if (isFinished(job.status)) return Effect.succeed(job)
  let ending = queue.endings.get(job.jobId)
  if (ending === undefined) {
    ending = Deferred.makeUnsafe<Job>()
    queue.endings.set(job.jobId, ending)
  }
  const polled = Effect.gen(function* () {
    for (;;) {
      yield* Effect.sleep(AWAIT_POLL_MS)
      const current = yield* queue.store.read(job.jobId)
      if (current === undefined) return job
      if (isFinished(current.status)) return current
    }
  })
  return Effect.raceFirst(Deferred.await(ending), polled)
}

/**
 * Stores the job (its input put in the store first: a job with a record
 * has its whole input), its waiting entry and Idempotency-Key in one
 * step. A key held by a job that is gone or expired is freed and the
 * submit tried again; a key held by a live job answers that job, or a
 * conflict when the body differs.
 */
const submitJob = (queue: SharedQueue) =>
  Effect.fn("JobQueue.submit")(function* (request: SubmitJob) {
    const { state, store, bytes, options } = queue
    const submittedAt = yield* now
    const field = request.idempotency === undefined ? "" : idempotencyField(request.team, request.idempotency.key)
    const job = newJobFor(request, submittedAt)
    yield* bytes.adopt(job.jobId, request.input)
    const unadopted = Effect.ignore(bytes.remove(job.jobId))
    for (let attempt = 1; ; attempt++) {
      const submitted = yield* state.submit(job, options.maxQueued, field).pipe(Effect.tapError(() => unadopted))
      if (submitted.outcome === "created") {
        yield* Queue.offer(queue.wake, undefined)
        return { job, created: true }
      }
      if (submitted.outcome === "full") {
        yield* unadopted
        return yield* jobsError(new QueueFull({ maxQueued: options.maxQueued }))
      }
      const holder = submitted.holder
      const earlier = yield* store.read(holder as JobId)
      if (earlier === undefined || expiredAt(earlier, submittedAt)) {
        // The key's job is gone or expired: it no longer holds the key.
        if (earlier !== undefined) yield* dropJob(queue, earlier)
        else yield* state.freeKey(field)
        if (attempt < SUBMIT_ATTEMPTS) continue
      }
      yield* unadopted
      if (earlier === undefined || earlier.idempotency?.bodyHash !== request.idempotency?.bodyHash) {
        return yield* jobsError(new IdempotencyConflict({ key: request.idempotency!.key, jobId: holder }))
      }
      return { job: earlier, created: false }
    }
  })

/**
 * Cancels a job: one running here is asked to stop; one waiting is ended
 * in the shared state; one running on another daemon is asked there and
 * seen at that daemon's next renewal. Answers the final record.
 */
const cancelJob = (queue: SharedQueue, ended: Ended) =>
  Effect.fn("JobQueue.cancel")(function* (team: string, jobId: string) {
    const { options } = queue
    const job = yield* lookupJob(queue, team, jobId)
    if (isFinished(job.status)) return job
    const local = queue.active.get(jobId)
    if (local !== undefined) {
      local.cancelRequested = true
      return yield* awaitEnd(queue, job)
    }
    const at = yield* now
    const final = finalRecord({ job, status: "cancelled" }, at, options.retentionHours)
    const outcome = yield* queue.state.cancel(final, callbackAt(final, at))
    if (outcome === "ended") {
      yield* ended(final)
      return final
    }
    return yield* awaitEnd(queue, job)
  })

/**
 * A page of the team's jobs, read from every record: the records are as
 * many as retention keeps (a per-team index would serve very large
 * deployments better).
 */
const listJobs = (queue: SharedQueue) =>
  Effect.fn("JobQueue.list")(function* (
    team: string,
    options: { readonly status?: JobStatus | undefined; readonly after?: string | undefined; readonly limit: number }
  ) {
    const { status, after, limit } = options
    const start = yield* listStart(after)
    const at = yield* now
    const positioned = (yield* queue.store.list())
      .filter((job) => jobVisible(job, team) && !expiredAt(job, at) && (status === undefined || job.status === status))
      .map((job) => ({ job, jobId: job.jobId, createdAt: Date.parse(job.createdAt) }))
    const page = pageOf(positioned, start, limit)
    return { jobs: page.entries.map((entry) => entry.job), next: nextCursor(page) }
  })

/** Deletes the expired jobs (whichever daemon's sweep comes first), then the bytes and copies no job owns. */
const sweepExpired = (queue: SharedQueue) =>
  Effect.gen(function* () {
    const due = yield* queue.state.takeExpired(yield* now)
    for (const jobId of due) {
      const job = yield* queue.store.read(jobId as JobId)
      if (job !== undefined) yield* dropJob(queue, job)
    }
    yield* queue.bytes.sweep
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("the job sweep failed; it runs again later", cause)))

/** The background work: `concurrency` lease workers, woken by submits on any daemon, the sweep and the callbacks' redelivery. */
const startBackground = (
  queue: SharedQueue,
  work: {
    readonly ended: Ended
    readonly sawWaiting: (waiting: number) => void
    readonly sweep: Effect.Effect<void>
    readonly callbackSweep: Effect.Effect<void>
  }
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { options, wake } = queue
    const worker = makeLeaseWorker({
      store: queue.store,
      state: queue.state,
      openLeased: queue.bytes.open,
      options,
      active: queue.active,
      wake,
      sawWaiting: work.sawWaiting,
      ended: work.ended
    })
    // Submits on other daemons wake this one's workers.
    yield* queue.state.wakeOnSubmit(() => Queue.offerUnsafe(wake, undefined))
    for (let i = 0; i < options.concurrency; i++) yield* Effect.forkScoped(worker)
    yield* Effect.forkScoped(Effect.repeat(work.sweep, Schedule.spaced(options.sweepInterval ?? "10 minutes")))
    // Callbacks whose deliverer died before they settled are delivered here.
    yield* Effect.forkScoped(work.callbackSweep)
  })

/**
 * The queue and its store, shared by every daemon on the store `shared`
 * opens.
 */
export const layerShared = <R>(
  options: SharedJobQueueOptions,
  shared: Effect.Effect<SharedJobStore, never, R>
): Layer.Layer<JobQueue | JobStore, never, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const { store, state, bytes } = yield* shared
      const queue: SharedQueue = {
        state,
        store,
        bytes,
        options,
        active: new Map(),
        endings: new Map(),
        wake: yield* Queue.sliding<void>(options.concurrency)
      }
      const callbacks = yield* makeJobCallbacks(store, state, options.onFinished)
      const ended: Ended = (final) =>
        Effect.gen(function* () {
          yield* storeCheckpointUsage(options.usage, final)
          yield* logEnd(final)
          options.onEnded?.(final)
          yield* announceEnd(queue, final)
          yield* callbacks.notify(final)
        })
      let waitingSeen = 0
      yield* startBackground(queue, {
        ended,
        sawWaiting: (waiting) => {
          waitingSeen = waiting
        },
        sweep: sweepExpired(queue),
        callbackSweep: callbacks.sweep
      })
      const service = JobQueue.of({
        submit: submitJob(queue),
        get: Effect.fn("JobQueue.get")(function* (team: string, jobId: string) {
          return yield* lookupJob(queue, team, jobId)
        }),
        list: listJobs(queue),
        cancel: cancelJob(queue, ended),
        delete: Effect.fn("JobQueue.delete")(function* (team: string, jobId: string) {
          const job = yield* lookupJob(queue, team, jobId)
          if (!isFinished(job.status)) return yield* jobsError(new JobNotFinished({ jobId, status: job.status }))
          yield* dropJob(queue, job)
        }),
        awaitFinished: Effect.fn("JobQueue.awaitFinished")(function* (team: string, jobId: string) {
          return yield* awaitEnd(queue, yield* lookupJob(queue, team, jobId))
        }),
        recordCallback: (jobId, callback) => callbacks.recordCallback(jobId, callback),
        occupancy: () => ({ waiting: waitingSeen, running: queue.active.size }),
        prepare: () => options.evaluator.prepare?.()
      })
      return Context.make(JobQueue, service).pipe(Context.add(JobStore, store))
    })
  )
