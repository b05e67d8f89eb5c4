/**
 * How a job's offer validations reach the offer's usage statistics exactly
 * once, whatever crashes in between. A run counts into its own tally; each
 * checkpoint record carries what its chunk counted (`checkpoint.usage`), and
 * only once the record is written is that usage stored, keyed by the job and
 * the checkpoint's `processed`, so storing it again changes nothing:
 * - a crash before the record is written loses the chunk's rows and its
 *   counts together, and the resumed run counts the chunk again, once;
 * - a crash between the record and the store is healed at the next start,
 *   which stores every listed job's last checkpoint usage again;
 * - a store that fails is retried briefly, then the counts go back to the
 *   tally and travel with the next checkpoint (the record still holds them
 *   until then).
 * The daemon implements this over `UsageStatistics` (`server/jobService.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { UsageTally } from "../domain/OfferUsage.ts"
import type { Job, JobId, JobTarget } from "./Job.ts"

export interface JobUsage {
  /** A tally for one run of a job against `target`; undefined when its validations are not counted. */
  tally(target: JobTarget): UsageTally | undefined
  /** Stores the usage `job`'s checkpoint carries, once per checkpoint. */
  store(job: Job): Effect.Effect<void, Error>
  /** Forgets a job that is gone (its counts stay in the statistics). */
  forget(job: { readonly jobId: JobId; readonly target: JobTarget }): Effect.Effect<void, Error>
}

/** A few quick tries: a store that is briefly busy should not hold the usage back a whole chunk. */
const retries = { schedule: Schedule.exponential("50 millis"), times: 3 }

/** Stores the checkpoint's usage, retrying; answers whether it was stored (a failure is logged). */
export const storeCheckpointUsage = (usage: JobUsage | undefined, job: Job): Effect.Effect<boolean> =>
  usage === undefined || job.checkpoint.usage === undefined
    ? Effect.succeed(true)
    : usage.store(job).pipe(
        Effect.retry(retries),
        Effect.as(true),
        Effect.catch((error) =>
          Effect.as(
            Effect.logWarning("job usage statistics could not be stored; they go with the next checkpoint", {
              jobId: job.jobId,
              processed: job.checkpoint.processed,
              error: error.message
            }),
            false
          )
        )
      )

/** Forgets a removed job, logging a failure (the statistics keep a small marker of it). */
export const forgetJobUsage = (
  usage: JobUsage | undefined,
  job: { readonly jobId: JobId; readonly target: JobTarget }
): Effect.Effect<void> =>
  usage === undefined
    ? Effect.void
    : usage.forget(job).pipe(
        Effect.catch((error) =>
          Effect.logWarning("a removed job's usage marker could not be dropped", {
            jobId: job.jobId,
            error: error.message
          })
        )
      )
