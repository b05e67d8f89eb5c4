/**
 * The job store's Redis adapter: records in Redis (`<prefix>jobs:records`,
 * job id → record as JSON), so every daemon reads the same state, and each
 * job's input and results as files under `<dataDir>/jobs/` (`jobFiles`),
 * on a volume every daemon mounts. The bytes stay files because the runner
 * reads and writes them synchronously in large blocks and resumes at byte
 * offsets; in Redis a 1M-email job's input and results would cost
 * hundreds of megabytes of memory (`npm run bench:scale` measures it).
 *
 * `create` moves the upload into place before the record exists, so a job
 * that has a record has its whole input. A directory whose record never
 * came (a crash in between) and uploads left behind are removed by
 * `sweepFiles` once old enough that no daemon can still be using them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { Job, type JobId } from "./Job.ts"
import { JobStore, JobStoreError } from "./JobStore.ts"
import { jobFiles, sweepOrphanFiles } from "./JobStoreFiles.ts"
import { fileStep, readableJobs } from "./jobQueueState.ts"

const encode = Schema.encodeSync(Schema.fromJsonString(Job))
export const decodeJob = Schema.decodeUnknownSync(Schema.fromJsonString(Job))
export const encodeJob = encode

/** A Redis step of a job-store operation, its error a `JobStoreError` naming the operation (and job). */
export const redisStep =
  (operation: JobStoreError["operation"], jobId?: string) =>
  <A>(effect: Effect.Effect<A, Redis.RedisError>) =>
    Effect.mapError(
      effect,
      (error) => new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause: error.cause })
    )

/** The store over the Redis connection in force, and the file operations the Redis queue needs besides. */
export const makeRedisJobStore = (dataDir: string) =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const records = redisKey(prefix, "jobs", "records")
    const files = jobFiles(dataDir)
    const read = (jobId: JobId) =>
      redis.send<string | null>("HGET", records, jobId).pipe(
        redisStep("read", jobId),
        Effect.flatMap((text) =>
          text === null ? Effect.succeed(undefined) : fileStep("read", jobId, () => decodeJob(text))
        )
      )
    const sweepFiles = sweepOrphanFiles(files, (jobId) =>
      redis.send<number>("HEXISTS", records, jobId).pipe(
        redisStep("list", jobId),
        Effect.map((exists) => exists === 1)
      )
    )
    const store = JobStore.of({
      stage: () => fileStep("stage", undefined, files.stage),
      discard: (upload) => Effect.sync(() => files.discard(upload)).pipe(Effect.ignore),
      create: (job, upload) =>
        Effect.andThen(
          fileStep("create", job.jobId, () => files.adopt(job.jobId, upload)),
          redis.send("HSET", records, job.jobId, encode(job)).pipe(redisStep("create", job.jobId))
        ),
      open: (jobId, file) => fileStep("open", jobId, () => files.open(jobId, file)),
      read,
      write: (job) =>
        Effect.asVoid(redis.send("HSET", records, job.jobId, encode(job)).pipe(redisStep("write", job.jobId))),
      list: () =>
        redis.send("HGETALL", records).pipe(
          redisStep("list"),
          Effect.flatMap((reply) => readableJobs(hashEntries(reply), decodeJob))
        ),
      remove: (jobId) =>
        Effect.andThen(
          redis.send("HDEL", records, jobId).pipe(redisStep("remove", jobId)),
          fileStep("remove", jobId, () => files.remove(jobId))
        )
    })
    return { store, files, sweepFiles }
  })

/** The store alone (records in Redis, bytes under `dataDir`). */
export const layerRedis = (dataDir: string): Layer.Layer<JobStore, never, RedisConnection> =>
  Layer.effect(
    JobStore,
    Effect.map(makeRedisJobStore(dataDir), ({ store }) => store)
  )
