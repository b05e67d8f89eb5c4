/**
 * Where the shared job queue (`JobQueueRedis.ts`) keeps its state in Redis:
 * the names of its keys under the deployment's prefix (what each holds is
 * in `jobQueueScripts.ts`), and `importJobs`, which writes jobs straight
 * into them. Apart from the queue's layer because `campusgate migrate`
 * fills the same keys without running a queue.
 */
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import { RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { isFinished, type Job } from "./Job.ts"
import { encodeJob } from "./JobStoreRedis.ts"
import { idempotencyField } from "./jobQueueState.ts"

/** The queue's keys under `prefix`; `wake` is the channel every submit publishes on. */
export const jobQueueKeys = (prefix: string) => {
  const key = (name: string) => redisKey(prefix, "jobs", name)
  return {
    records: key("records"),
    waiting: key("waiting"),
    running: key("running"),
    leases: key("leases"),
    cancel: key("cancel"),
    expiring: key("expiring"),
    idempotency: key("idempotency"),
    callbacks: key("callbacks"),
    wake: key("wake")
  }
}

export type JobQueueKeys = ReturnType<typeof jobQueueKeys>

/**
 * Puts jobs of another store (a data directory being migrated) into the
 * shared queue as they are: finished ones expire when they would have (a
 * callback not yet delivered is tried again), queued and running ones wait
 * (running ones first, resumed at their checkpoint). Their files are not
 * copied here: a daemon running on the data directory they are in puts them
 * in the store at their first open (`jobBytesShared.ts`), unless the caller
 * wrote them through the store.
 */
export const importJobs = (jobs: ReadonlyArray<Job>): Effect.Effect<void, Redis.RedisError, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const keys = jobQueueKeys(yield* RedisKeyPrefix)
    for (const job of jobs) {
      yield* redis.send("HSET", keys.records, job.jobId, encodeJob(job))
      if (job.idempotency !== undefined) {
        yield* redis.send("HSET", keys.idempotency, idempotencyField(job.team, job.idempotency.key), job.jobId)
      }
      if (isFinished(job.status)) {
        yield* redis.send("ZADD", keys.expiring, String(Date.parse(job.expiresAt ?? job.createdAt)), job.jobId)
        if (job.callback !== undefined && !job.callback.delivered) {
          yield* redis.send("ZADD", keys.callbacks, "0", job.jobId)
        }
      } else {
        const score = job.status === "running" ? 0 : Date.parse(job.createdAt)
        yield* redis.send("ZADD", keys.waiting, String(score), job.jobId)
      }
    }
  })
