/**
 * The callbacks of the shared job queue (`jobQueueShared.ts`). The daemon
 * that finishes a job delivers its callback in the background; until the
 * delivery settles the job's callback stays due in the shared state
 * `CALLBACK_CLAIM_MS` after it finished, so that when that daemon is gone
 * first, any daemon's sweep takes the job (putting it off again by as much)
 * and delivers it. Apart from the layer because this claim and its sweep
 * are a small protocol of their own, independent of how jobs run.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { Job, JobCallback, JobId } from "./Job.ts"
import type { JobQueueOptions } from "./JobQueue.ts"
import type { JobStore } from "./JobStore.ts"
import type { SharedQueueState } from "./jobQueueState.ts"

/** How long a daemon delivering a callback has before another daemon tries it. */
const CALLBACK_CLAIM_MS = 10 * 60_000
/** How often callbacks whose deliverer is gone are looked for. */
const CALLBACK_SWEEP = "30 seconds"

const now = Effect.clockWith((clock) => clock.currentTimeMillis)

/** When the callback of a job finished at `at` is due on any daemon: '' when it has no callback left to deliver. */
export const callbackAt = (job: Job, at: number): string =>
  job.callback === undefined || job.callback.delivered ? "" : String(at + CALLBACK_CLAIM_MS)

export interface JobCallbacks {
  /** Stores a finished job's callback state, unless the job is gone. */
  readonly recordCallback: (jobId: JobId, callback: JobCallback) => Effect.Effect<void>
  /** Delivers a finished job's callback in the background; once settled, no daemon tries it again. */
  readonly notify: (job: Job) => Effect.Effect<void>
  /** Delivers, for ever, the callbacks whose deliverer died before they settled. */
  readonly sweep: Effect.Effect<void>
}

/** The callbacks of the queue over `store`; deliveries run in the scope. */
export const makeJobCallbacks = (
  store: JobStore["Service"],
  state: SharedQueueState,
  onFinished: JobQueueOptions["onFinished"]
): Effect.Effect<JobCallbacks, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope

    const recordCallback = (jobId: JobId, callback: JobCallback): Effect.Effect<void> =>
      Effect.gen(function* () {
        const job = yield* store.read(jobId)
        if (job === undefined) return
        yield* state.updateFinished({ ...job, callback })
      }).pipe(Effect.orDie)

    const notify = (job: Job): Effect.Effect<void> => {
      if (onFinished === undefined || job.callback === undefined || job.callback.delivered) return Effect.void
      const settled = state.settleCallback(job.jobId).pipe(Effect.ignore)
      const hook = onFinished(job, (callback) => recordCallback(job.jobId, callback)).pipe(
        Effect.andThen(settled),
        Effect.catchCause((cause) => Effect.logError("job callback hook failed", { jobId: job.jobId }, cause))
      )
      return Effect.asVoid(Effect.forkIn(hook, scope))
    }

    const redeliver = Effect.gen(function* () {
      const at = yield* now
      for (const jobId of yield* state.takeDueCallbacks(at, at + CALLBACK_CLAIM_MS)) {
        const job = yield* store.read(jobId as JobId)
        if (job !== undefined) yield* notify(job)
      }
    }).pipe(Effect.ignore)

    return { recordCallback, notify, sweep: Effect.asVoid(Effect.repeat(redeliver, Schedule.spaced(CALLBACK_SWEEP))) }
  })
