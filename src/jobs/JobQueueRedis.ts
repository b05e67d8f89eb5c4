/**
 * The job queue shared by every daemon on one Redis (`jobQueueShared.ts`
 * says what it promises): its state in Redis keys (`jobQueueKeys.ts`),
 * each step one of the Lua scripts of `jobQueueScripts.ts`, records in the
 * store of `JobStoreRedis.ts`, and submits announced on the `jobs:wake`
 * channel.
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import { type RedisConnection, RedisKeyPrefix } from "../store/redis.ts"
import type { JobQueue } from "./JobQueue.ts"
import type { JobStore } from "./JobStore.ts"
import { encodeJob, makeRedisJobStore, redisStep } from "./JobStoreRedis.ts"
import { jobQueueKeys } from "./jobQueueKeys.ts"
import {
  cancelScript,
  claimScript,
  dropScript,
  fencedWriteScript,
  finishScript,
  renewScript,
  submitScript,
  takeDueScript,
  updateFinishedScript
} from "./jobQueueScripts.ts"
import { layerShared, type SharedJobQueueOptions } from "./jobQueueShared.ts"
import type { SharedJobStore, SharedQueueState } from "./jobQueueState.ts"

export type RedisJobQueueOptions = SharedJobQueueOptions

/** The queue's state in the Redis connection in force, with the store of records and bytes beside it. */
export const makeRedisSharedStore = (dataDir: string): Effect.Effect<SharedJobStore, never, RedisConnection> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const keys = jobQueueKeys(yield* RedisKeyPrefix)
    const { store, bytes } = yield* makeRedisJobStore(dataDir)
    const submit = redis.eval(submitScript)
    const cancel = redis.eval(cancelScript)
    const takeDue = redis.eval(takeDueScript)
    const drop = redis.eval(dropScript)
    const claim = redis.eval(claimScript)
    const renew = redis.eval(renewScript)
    const fencedWrite = redis.eval(fencedWriteScript)
    const finish = redis.eval(finishScript)
    const updateFinished = redis.eval(updateFinishedScript)
    const state: SharedQueueState = {
      submit: (job, maxQueued, field) =>
        submit(
          keys.records,
          keys.waiting,
          keys.idempotency,
          job.jobId,
          encodeJob(job),
          Date.parse(job.createdAt),
          maxQueued,
          field,
          keys.wake
        ).pipe(
          redisStep("create", job.jobId),
          Effect.map(([outcome, holder]) =>
            outcome === "created"
              ? { outcome: "created" as const }
              : outcome === "full"
                ? { outcome: "full" as const }
                : { outcome: "existing" as const, holder }
          )
        ),
      freeKey: (field) => Effect.asVoid(redis.send("HDEL", keys.idempotency, field).pipe(redisStep("create"))),
      cancel: (final, callbackDue) =>
        cancel(
          keys.waiting,
          keys.records,
          keys.expiring,
          keys.running,
          keys.cancel,
          keys.callbacks,
          final.jobId,
          encodeJob(final),
          Date.parse(final.expiresAt!),
          callbackDue
        ).pipe(
          redisStep("write", final.jobId),
          Effect.map((outcome) => (outcome === 1 ? "ended" : outcome === 2 ? "asked" : "finished"))
        ),
      takeExpired: (now) => takeDue(keys.expiring, now, "").pipe(redisStep("list")),
      drop: (job, field) =>
        Effect.asVoid(
          drop(keys.records, keys.expiring, keys.idempotency, keys.callbacks, job.jobId, field).pipe(
            redisStep("remove", job.jobId)
          )
        ),
      claim: (token, leaseMs) =>
        claim(keys.waiting, keys.running, keys.leases, token, leaseMs).pipe(
          redisStep("read"),
          Effect.map(([jobId, waiting]) => ({ jobId, waiting: Number(waiting) }))
        ),
      renew: (jobId, token, leaseMs) =>
        renew(keys.running, keys.leases, keys.cancel, jobId, token, leaseMs).pipe(
          redisStep("write", jobId),
          Effect.map((renewed) => (renewed < 0 ? "lost" : renewed === 1 ? "cancelAsked" : "renewed"))
        ),
      fencedWrite: (jobId, token, record) =>
        fencedWrite(keys.records, keys.leases, jobId, token, encodeJob(record)).pipe(
          redisStep("write", jobId),
          Effect.map((written) => written === 1)
        ),
      finish: (jobId, token, final, expiresAt, callbackDue) =>
        finish(
          keys.records,
          keys.leases,
          keys.running,
          keys.expiring,
          keys.cancel,
          keys.callbacks,
          jobId,
          token,
          final === undefined ? "" : encodeJob(final),
          expiresAt,
          callbackDue
        ).pipe(
          redisStep("write", jobId),
          Effect.map((written) => written === 1)
        ),
      updateFinished: (record) =>
        Effect.asVoid(
          updateFinished(keys.records, record.jobId, encodeJob(record)).pipe(redisStep("write", record.jobId))
        ),
      takeDueCallbacks: (now, next) => takeDue(keys.callbacks, now, String(next)).pipe(redisStep("list")),
      settleCallback: (jobId) =>
        Effect.asVoid(redis.send("ZREM", keys.callbacks, jobId).pipe(redisStep("write", jobId))),
      wakeOnSubmit: (wake) =>
        Effect.gen(function* () {
          const messages = yield* redis.subscribe(keys.wake)
          yield* Effect.forkScoped(
            Effect.forever(Effect.andThen(Queue.take(messages), Effect.sync(wake))).pipe(Effect.ignore)
          )
        })
    }
    return { store, state, bytes }
  })

/** The queue and its store, shared by every daemon on the Redis connection in force. */
export const layerRedis = (options: RedisJobQueueOptions): Layer.Layer<JobQueue | JobStore, never, RedisConnection> =>
  layerShared(options, makeRedisSharedStore(options.dataDir))
