/**
 * The daemon's job queue, under the jobs service the handlers call
 * (`jobs/Jobs.ts`): jobs in the store the daemon runs on (`deployment/stores.ts`:
 * the data directory, or Redis or PostgreSQL with a copy of the job bytes in
 * each daemon's data directory), validated on
 * `jobs.workerThreads` threads (`jobs/JobThreads.ts`; default one per
 * available core but one, at least one; 0: on the request thread) with the
 * config snapshot in force when each batch is taken (a reload applies to
 * the batches after it), counted in the metrics and, for offers, in the
 * usage statistics exactly once, with the job's checkpoints,
 * and announced to their `callbackUrl` when they finish, signed with the
 * webhook secret (`CAMPUSGATE_WEBHOOK_SECRET`, else one generated once and
 * kept in the store). Jobs ended and the queue's occupancy are in
 * the metrics, as are callback attempts; every failed one is logged, with the callback's
 * origin only (its path or query may carry the receiver's token). The
 * queue's size settings are read at start.
 */
import { availableParallelism } from "node:os"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { Snapshot } from "../app/Snapshot.ts"
import { Validation } from "../app/Validation.ts"
import type { Stores } from "../deployment/stores.ts"
import { ALL_TEAMS } from "../domain/visibility.ts"
import { duplicatesKey } from "../jobs/duplicates.ts"
import type { Job, JobCallback } from "../jobs/Job.ts"
import { JobQueue } from "../jobs/JobQueue.ts"
import type { JobStore } from "../jobs/JobStore.ts"
import { Jobs } from "../jobs/Jobs.ts"
import { JobThreads } from "../jobs/JobThreads.ts"
import { type BatchEvaluator, type Evaluate, evaluateHere } from "../jobs/jobBatches.ts"
import type { JobUsage } from "../jobs/jobUsage.ts"
import type { OutboundPolicy } from "../net/outbound.ts"
import { ReviewQueue } from "../reviews/ReviewQueue.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import { type DeliveryAttempt, type DeliveryObserver, deliverCallback } from "../webhooks/delivery.ts"
import { Metrics } from "./metrics.ts"

/**
 * Validates a chunk of a job with the snapshot in force; throws (failing the
 * job) when its target is gone. The target's team was checked when the job
 * was submitted.
 */
const evaluator =
  (validation: Validation["Service"]): Evaluate =>
  (target, emails, tally, read, team) =>
    validation.rowVerdicts(team ?? ALL_TEAMS, target, emails, tally, read)

/**
 * Job threads when `jobs.workerThreads` is absent: one per available core
 * but the one the request thread keeps, at least one. The request thread
 * works for a job too (it reads the upload, appends the rows, serves the
 * download: 1-2 s of CPU per 1M emails), and each thread more holds its own
 * engine and what it learned. Measured on the 2-core machine (bench:jobs
 * unpinned, five 1M-email jobs and one latency round, one run each): one
 * thread against two, VmHWM 427 MB against 623 MB, the offer job 3.88 s /
 * 5.34 s (warm / cold) against 3.80 s / 4.62 s, the target group 2.55-2.63 s
 * against 2.41-3.31 s, p99 of single validations while a job runs 2.6x the
 * idle p99 against 4.2x.
 */
export const defaultJobThreads = (cores: number = availableParallelism()): number => Math.max(1, cores - 1)

/** Job threads per `jobs.workerThreads` (stopped with the layer), or evaluation on this thread for 0. */
const batchEvaluator = (
  threads: number,
  validation: Validation["Service"],
  options: Omit<ConstructorParameters<typeof JobThreads>[0], "threads">
): Effect.Effect<BatchEvaluator, never, Scope.Scope> =>
  threads === 0
    ? Effect.succeed(evaluateHere(evaluator(validation), duplicatesKey(options.usageKey)))
    : Effect.acquireRelease(
        Effect.sync(() => new JobThreads({ ...options, threads })),
        (pool) => Effect.promise(() => pool.close())
      )

/** Offer jobs count in the offer's usage statistics, once per checkpoint (`jobs/jobUsage.ts`). */
const jobUsage = (usage: UsageStatistics["Service"]): JobUsage => ({
  tally: (target) => ("offerId" in target ? usage.tally(target.offerId) : undefined),
  store: (job) =>
    "offerId" in job.target && job.checkpoint.usage !== undefined
      ? usage.applyOnce(job.target.offerId, job.jobId, job.checkpoint.processed, job.checkpoint.usage)
      : Effect.void,
  forget: (job) => ("offerId" in job.target ? usage.forget(job.target.offerId, job.jobId) : Effect.void)
})

/** Where a callback goes, as the log shows it: scheme, host and port. */
const originOf = (url: string): string => {
  try {
    return new URL(url).origin
  } catch {
    return "(not a URL)"
  }
}

/** Delivers a finished job's callback, recording every attempt on the job as it happens. */
const announce =
  (secret: string, policy: () => OutboundPolicy, observe: DeliveryObserver) =>
  (job: Job, record: (callback: JobCallback) => Effect.Effect<void>): Effect.Effect<void> => {
    const callback = job.callback
    if (callback === undefined || callback.delivered) return Effect.void
    const attempts: Array<DeliveryAttempt> = [...callback.attempts]
    const payload = {
      jobId: job.jobId,
      status: job.status,
      total: job.progress.total,
      counts: job.counts,
      finishedAt: job.finishedAt ?? new Date().toISOString()
    }
    return deliverCallback(callback.url, payload, secret, {
      policy: policy(),
      observe,
      onAttempt: (attempt) => {
        attempts.push(attempt)
        const recorded = record({ url: callback.url, delivered: attempt.delivered, attempts: [...attempts] })
        if (attempt.delivered) return recorded
        return Effect.andThen(
          recorded,
          Effect.logWarning("job callback attempt failed", {
            jobId: job.jobId,
            callback: originOf(callback.url),
            attempt: attempts.length,
            reason: attempt.reason
          })
        )
      }
    }).pipe(
      Effect.catchTag("CallbackDeliveryError", (error) =>
        Effect.logError("job callback not delivered; no more attempts", {
          jobId: job.jobId,
          callback: originOf(callback.url),
          attempts: error.attempts
        })
      )
    )
  }

/**
 * The jobs service over `JobStore` and `JobQueue` for the daemon on
 * `stores`; needs `Snapshot`, `Metrics`, `Validation` and `UsageStatistics`.
 */
export const jobsLayer = (
  stores: Pick<Stores, "jobs" | "webhookSecret">
): Layer.Layer<Jobs | JobQueue | JobStore, never, Snapshot | Metrics | Validation | UsageStatistics> =>
  Jobs.layer.pipe(Layer.provideMerge(queueLayer(stores)))

const queueLayer = (
  stores: Pick<Stores, "jobs" | "webhookSecret">
): Layer.Layer<JobQueue | JobStore, never, Snapshot | Metrics | Validation | UsageStatistics> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const config = yield* Snapshot
      const metrics = yield* Metrics
      const validation = yield* Validation
      const statistics = yield* UsageStatistics
      const reviews = Option.getOrUndefined(yield* Effect.serviceOption(ReviewQueue))
      const { settings } = config.current().config
      const secret = stores.webhookSecret
      const evaluatorOfJobs = yield* batchEvaluator(settings.jobs.workerThreads ?? defaultJobThreads(), validation, {
        snapshot: config,
        counters: metrics,
        usageKey: statistics.uniqueEmailKey,
        reviews
      })
      return stores
        .jobs({
          concurrency: settings.jobs.concurrency,
          maxQueued: settings.jobs.maxQueued,
          retentionHours: settings.jobs.retentionHours,
          evaluator: evaluatorOfJobs,
          usage: jobUsage(statistics),
          onFinished: announce(secret, () => config.current().config.settings.jobs.callbacks, metrics.callbacks("job")),
          onEnded: (job) => metrics.jobEnded(job.status)
        })
        .pipe(
          Layer.tap((services) =>
            Effect.sync(() => metrics.observeJobs(() => Context.get(services, JobQueue).occupancy()))
          )
        )
    })
  )
