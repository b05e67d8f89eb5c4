/**
 * A worker of the shared job queue (`jobQueueShared.ts`): it claims the
 * next job under a lease (`LEASE_MS`, the store's clock), renews it every
 * `LEASE_MS / 5` while the job runs, and writes checkpoints, the results'
 * bytes and the final record only while it holds it (fenced writes,
 * `jobQueueState.ts`, `jobBytesShared.ts`). A
 * job whose previous run was lost is resumed at its last checkpoint, whose
 * usage is stored again first (`applyOnce` makes that count once). When a
 * renewal fails (the store down, or the lease taken) the run stops before
 * the lease could lapse. Apart from the layer because this is the one part
 * that holds a lease: everything else the queue does is a single step.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { isFinished, type Job, type JobId } from "./Job.ts"
import type { JobEntry } from "./JobIndex.ts"
import type { JobQueueOptions } from "./JobQueue.ts"
import { type JobBytes, type JobFile, JobStore, type JobStoreError } from "./JobStore.ts"
import { callbackAt } from "./jobQueueCallbacks.ts"
import type { SharedQueueState } from "./jobQueueState.ts"
import { storeCheckpointUsage } from "./jobUsage.ts"
import { DEFAULT_CHUNK_ITEMS, finalRecord, jobEntry, startedFields } from "./jobWorkers.ts"
import { type JobEnd, processJob } from "./processJob.ts"

/** How long a claim lasts without renewal. */
export const LEASE_MS = 10_000
/** How often idle workers look for jobs besides wake-up messages. */
const POLL_MS = 1000

const now = Effect.clockWith((clock) => clock.currentTimeMillis)

export interface LeaseWorkers {
  readonly store: JobStore["Service"]
  readonly state: SharedQueueState
  /** A job file whose writes are fenced: refused once `token` no longer holds the job's lease. */
  readonly openLeased: (jobId: JobId, file: JobFile, token: string) => Effect.Effect<JobBytes, JobStoreError>
  readonly options: JobQueueOptions
  /** Jobs this daemon runs now, by id. */
  readonly active: Map<string, JobEntry>
  /** Offered on every submit seen; an idle worker waits for it or `POLL_MS`. */
  readonly wake: Queue.Dequeue<void>
  /** How many jobs wait, as the last claim saw. */
  readonly sawWaiting: (waiting: number) => void
  /** What follows a final record written: usage, log, waiters, callback. */
  readonly ended: (final: Job) => Effect.Effect<void>
}

/**
 * A worker, to be run `concurrency` times: for ever, it claims the next job,
 * runs it under its lease, and waits when none is waiting.
 */
export const makeLeaseWorker = (workers: LeaseWorkers): Effect.Effect<never> => {
  const { store, state, options, active } = workers

  /** The run of one claimed job, its lease renewed meanwhile; ends with its final record unless the lease is lost. */
  const runClaimed = (jobId: JobId, token: string) =>
    Effect.gen(function* () {
      const claimedAt = Date.now()
      let validUntil = claimedAt + LEASE_MS - LEASE_MS / 5
      const job = yield* store.read(jobId)
      if (job === undefined || isFinished(job.status)) {
        yield* state.finish(jobId, token, job, 0, "").pipe(Effect.ignore)
        return
      }
      if (job.status === "running") {
        yield* Effect.logInfo("job resumed", {
          jobId,
          processed: job.checkpoint.processed,
          total: job.progress.total
        })
        // What its previous run checkpointed but may not have stored: stored already, it changes nothing.
        yield* storeCheckpointUsage(options.usage, job)
      }
      const fenced = (record: Job) =>
        state.fencedWrite(jobId, token, record).pipe(
          Effect.retry({ schedule: Schedule.spaced("200 millis"), while: () => Date.now() < validUntil }),
          Effect.catch(() => Effect.succeed(false)),
          Effect.flatMap((written) => (written ? Effect.void : Effect.interrupt))
        )
      const running: Job = {
        ...job,
        status: "running",
        startedAt: job.startedAt ?? new Date(yield* now).toISOString()
      }
      const entry = yield* jobEntry(running)
      entry.active = true
      active.set(jobId, entry)
      const run = Effect.gen(function* () {
        yield* fenced(running)
        yield* Effect.logInfo("job started", startedFields(running))
        // The record and the results' bytes are written only while the lease is held.
        const fencedStore = JobStore.of({
          ...store,
          write: (record) => fenced(record),
          open: (id, file) => workers.openLeased(id, file, token)
        })
        return yield* processJob(fencedStore, running, entry, options.evaluator, {
          chunkItems: options.chunkItems ?? DEFAULT_CHUNK_ITEMS,
          usage: options.usage
        }).pipe(
          Effect.catchDefect((defect) =>
            Effect.as(Effect.logError("job run failed unexpectedly", { jobId }, defect), {
              job: running,
              status: "failed",
              error: "The job failed unexpectedly."
            } satisfies JobEnd)
          )
        )
      })
      const runFiber = yield* Effect.forkChild(run)
      const heartbeat = Effect.gen(function* () {
        for (;;) {
          yield* Effect.sleep(LEASE_MS / 5)
          const sentAt = Date.now()
          const renewed = yield* Effect.result(state.renew(jobId, token, LEASE_MS))
          if (renewed._tag === "Success" && renewed.success !== "lost") {
            validUntil = sentAt + LEASE_MS - LEASE_MS / 5
            if (renewed.success === "cancelAsked") entry.cancelRequested = true
          } else if (renewed._tag === "Success" || Date.now() >= validUntil) {
            return yield* Fiber.interrupt(runFiber)
          }
        }
      })
      const heartbeatFiber = yield* Effect.forkChild(heartbeat)
      const exit = yield* Fiber.await(runFiber)
      yield* Fiber.interrupt(heartbeatFiber)
      active.delete(jobId)
      if (Exit.isFailure(exit)) {
        yield* Effect.logWarning("job claim lost; another daemon goes on with it from its last checkpoint", {
          jobId
        })
        return
      }
      const finishedAt = yield* now
      const final = finalRecord(exit.value, finishedAt, options.retentionHours)
      const written = yield* state
        .finish(jobId, token, final, Date.parse(final.expiresAt!), callbackAt(final, finishedAt))
        .pipe(
          Effect.retry({ schedule: Schedule.spaced("200 millis"), while: () => Date.now() < validUntil }),
          Effect.catch(() => Effect.succeed(false))
        )
      if (!written) {
        yield* Effect.logWarning("job claim lost before its end was stored; another daemon finishes it", { jobId })
        return
      }
      yield* workers.ended(final)
    })

  let storeDown = false
  return Effect.forever(
    Effect.gen(function* () {
      const token = randomBytes(12).toString("hex")
      const claimed = yield* Effect.result(state.claim(token, LEASE_MS))
      if (claimed._tag === "Failure") {
        if (!storeDown)
          yield* Effect.logWarning("the job queue cannot reach its store; retrying", {
            error: String(claimed.failure.cause)
          })
        storeDown = true
        yield* Effect.sleep(POLL_MS)
        return
      }
      if (storeDown) yield* Effect.logInfo("the job queue reaches its store again")
      storeDown = false
      const { jobId, waiting } = claimed.success
      workers.sawWaiting(waiting)
      if (jobId === "") {
        yield* Effect.raceFirst(Queue.take(workers.wake), Effect.sleep(POLL_MS))
        return
      }
      yield* runClaimed(jobId as JobId, token).pipe(
        Effect.catchCause((cause) => Effect.logError("job worker failed", { jobId }, cause))
      )
    })
  )
}
