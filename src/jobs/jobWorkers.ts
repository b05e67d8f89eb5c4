/**
 * The queue's moving parts: start (rebuild the index from the store,
 * store the usage of every job's last checkpoint again (once), re-enqueue
 * unfinished jobs, re-deliver pending callbacks), the worker
 * fibers, and how a job finishes (final record, expiry, callback hook). A
 * job whose run dies unexpectedly is finished as failed rather than left
 * running; an interrupted run (shutdown) is left as it is, to resume.
 * Each step is logged (Effect's logger): a job started, finished or
 * failed, resumed at start, a run or callback hook that died.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { isFinished, type Job, type JobCallback, type JobId } from "./Job.ts"
import type { JobEntry, JobIndex } from "./JobIndex.ts"
import type { JobQueueOptions } from "./JobQueue.ts"
import type { JobStore } from "./JobStore.ts"
import { storeCheckpointUsage } from "./jobUsage.ts"
import { type JobEnd, processJob } from "./processJob.ts"

export interface QueueContext {
  readonly store: JobStore["Service"]
  readonly index: JobIndex
  readonly options: JobQueueOptions
  /** The queue's scope: background fibers (callbacks) end with it. */
  readonly scope: Scope.Scope
  /** Runs an effect under the queue's lock (index and record changes). */
  readonly locked: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const DEFAULT_CHUNK_ITEMS = 25_000

const HOUR_MS = 3_600_000

const now = Effect.clockWith((clock) => clock.currentTimeMillis)

export const jobEntry = (job: Job): Effect.Effect<JobEntry> =>
  Effect.map(Deferred.make<Job>(), (finished) => ({
    jobId: job.jobId,
    team: job.team,
    target: job.target,
    createdAt: Date.parse(job.createdAt),
    status: job.status,
    expiresAt: job.expiresAt === null ? undefined : Date.parse(job.expiresAt),
    idempotency: job.idempotency,
    waiting: !isFinished(job.status),
    active: false,
    cancelRequested: false,
    finished
  }))

/** Stores a finished job's callback state, unless the job is gone. Call under the lock. */
const storeCallback = (context: QueueContext, jobId: JobId, callback: JobCallback): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (context.index.get(jobId) === undefined) return
    const job = yield* Effect.orDie(context.store.read(jobId))
    if (job !== undefined) yield* Effect.orDie(context.store.write({ ...job, callback }))
  })

export const recordCallback = (context: QueueContext, jobId: JobId, callback: JobCallback): Effect.Effect<void> =>
  context.locked(storeCallback(context, jobId, callback))

const notify = (context: QueueContext, job: Job): Effect.Effect<void> => {
  const { onFinished } = context.options
  if (onFinished === undefined || job.callback === undefined || job.callback.delivered) return Effect.void
  const hook = onFinished(job, (callback) => recordCallback(context, job.jobId, callback)).pipe(
    Effect.catchCause((cause) => Effect.logError("job callback hook failed", { jobId: job.jobId }, cause))
  )
  return Effect.asVoid(Effect.forkIn(hook, context.scope))
}

/** The line of a job's end: failed at warn (with the reason), completed or cancelled at info. */
export const logEnd = (job: Job): Effect.Effect<void> => {
  const fields = {
    jobId: job.jobId,
    status: job.status,
    processed: job.checkpoint.processed,
    total: job.progress.total,
    counts: job.counts,
    ...(job.startedAt === null || job.finishedAt === null
      ? {}
      : { durationMs: Date.parse(job.finishedAt) - Date.parse(job.startedAt) })
  }
  return job.status === "failed"
    ? Effect.logWarning("job failed", { ...fields, error: job.error })
    : Effect.logInfo("job finished", fields)
}

/** The record a job ends with, finished at `finishedAt` (epoch ms) and kept `retentionHours`. */
export const finalRecord = (end: JobEnd, finishedAt: number, retentionHours: number): Job => {
  const { job } = end
  const processed = job.checkpoint.processed
  return {
    ...job,
    status: end.status,
    progress: end.status === "completed" ? { total: processed, processed, percent: 100 } : job.progress,
    finishedAt: new Date(finishedAt).toISOString(),
    expiresAt: new Date(finishedAt + retentionHours * HOUR_MS).toISOString(),
    ...(end.error === undefined ? {} : { error: end.error })
  }
}

/** The fields of the "job started" line. */
export const startedFields = (job: Job) => ({
  jobId: job.jobId,
  team: job.team,
  ...job.target,
  total: job.progress.total,
  processed: job.checkpoint.processed
})

/** Writes the job's final record, settles its entry and fires the callback hook. Call under the lock. */
export const finishJob = (context: QueueContext, entry: JobEntry, end: JobEnd): Effect.Effect<Job> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const final = finalRecord(end, yield* now, context.options.retentionHours)
      const expiresAt = Date.parse(final.expiresAt!)
      if (context.options.usage !== undefined && end.job.checkpoint.usage !== undefined) {
        // The usage of the last rows is stored before the job reads as finished, so whoever sees it
        // finished sees it counted: first the checkpoint (still running), then its usage (once per
        // checkpoint, so the final record carrying it again counts nothing twice).
        yield* Effect.orDie(context.store.write(end.job))
        yield* storeCheckpointUsage(context.options.usage, end.job)
      }
      // Whoever reads the final record sees the job counted as ended and no longer running: both are
      // marked before the write can be read. A write that fails leaves the job running (its fiber dies
      // and the daemon's next start resumes it), so it is marked running again; the count stays.
      entry.active = false
      context.options.onEnded?.(final)
      yield* Effect.orDie(context.store.write(final)).pipe(
        Effect.onError(() =>
          Effect.sync(() => {
            entry.active = true
          })
        )
      )
      // Not stored now (the store is down): the record keeps it, and the next start stores it.
      yield* storeCheckpointUsage(context.options.usage, final)
      yield* logEnd(final)
      entry.status = end.status
      entry.expiresAt = expiresAt
      yield* Deferred.succeed(entry.finished, final)
      yield* notify(context, final)
      return final
    })
  )

/** Marks the job running (unless it was cancelled while it waited) and answers its record. */
const start = (context: QueueContext, jobId: JobId) =>
  context.locked(
    Effect.gen(function* () {
      const entry = context.index.get(jobId)
      if (entry === undefined || isFinished(entry.status)) return undefined
      context.index.leaveQueue(entry)
      const job = yield* Effect.orDie(context.store.read(jobId))
      if (job === undefined) return undefined
      const running: Job = { ...job, status: "running", startedAt: job.startedAt ?? new Date(yield* now).toISOString() }
      // Active before the record says running: whoever reads the job running sees it counted in the
      // running gauge (the write may yield to other requests before it completes); not, if it fails.
      entry.active = true
      yield* Effect.orDie(context.store.write(running)).pipe(
        Effect.onError(() =>
          Effect.sync(() => {
            entry.active = false
          })
        )
      )
      entry.status = "running"
      return { entry, running }
    })
  )

const runOne = (context: QueueContext, jobId: JobId): Effect.Effect<void> =>
  Effect.gen(function* () {
    const started = yield* start(context, jobId)
    if (started === undefined) return
    const { entry, running } = started
    yield* Effect.logInfo("job started", startedFields(running))
    const chunkItems = context.options.chunkItems ?? DEFAULT_CHUNK_ITEMS
    const end = yield* processJob(context.store, running, entry, context.options.evaluator, {
      chunkItems,
      usage: context.options.usage
    }).pipe(
      Effect.catchDefect((defect) =>
        Effect.as(Effect.logError("job run failed unexpectedly", { jobId }, Cause.die(defect)), {
          job: running,
          status: "failed",
          error: "The job failed unexpectedly."
        } satisfies JobEnd)
      )
    )
    yield* context.locked(finishJob(context, entry, end))
  })

/** Rebuilds the index from the store, re-enqueues unfinished jobs and forks the workers. */
export const startWorkers = (context: QueueContext, ids: Queue.Queue<JobId>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const jobs = [...(yield* Effect.orDie(context.store.list()))].sort(
      (a, b) =>
        Number(b.status === "running") - Number(a.status === "running") || a.createdAt.localeCompare(b.createdAt)
    )
    for (const job of jobs) {
      context.index.add(yield* jobEntry(job))
      // What a crash between a checkpoint and its usage left unstored; stored already, it changes nothing.
      yield* storeCheckpointUsage(context.options.usage, job)
      if (isFinished(job.status)) yield* notify(context, job)
      else {
        // Running when the last process stopped (a crash, or a shutdown mid-job): it goes on from its checkpoint.
        if (job.status === "running") {
          yield* Effect.logInfo("job resumed", {
            jobId: job.jobId,
            processed: job.checkpoint.processed,
            total: job.progress.total
          })
        }
        yield* Queue.offer(ids, job.jobId)
      }
    }
    const worker = Effect.forever(
      Effect.flatMap(Queue.take(ids), (jobId) =>
        runOne(context, jobId).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause)
              : Effect.logError("job worker failed", { jobId }, cause)
          )
        )
      )
    )
    for (let i = 0; i < context.options.concurrency; i++) yield* Effect.forkScoped(worker)
  })
