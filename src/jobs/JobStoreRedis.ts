/**
 * The job store's Redis adapter: records in Redis (`<prefix>jobs:records`,
 * job id → record as JSON), so every daemon reads the same state, and each
 * job's input and results in Redis too: one hash per job
 * (`<prefix>jobs:bytes:<jobId>`), a field per chunk of at most
 * `CHUNK_BYTES` (`input:<n>`, `results:<n>`) beside each file's `length`
 * and `generation`, worked on through a copy in this daemon's data
 * directory (`jobBytesShared.ts`). Daemons need no shared volume. The bytes
 * cost Redis memory as they are (`npm run bench:jobs:store` measures a
 * 1M-email job), for as long as the job's retention.
 *
 * `create` puts the whole input in Redis before the record exists, so a
 * job that has a record has its whole input. `<prefix>jobs:bytes-written`
 * (id → when its bytes were first written) finds the bytes of a job whose
 * record never came, swept once old enough with local copies and uploads
 * left behind. A write fenced by a lease (the runner's) checks the lease
 * token in the same script.
 */
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { RESP_TYPES } from "redis"
import { hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { Job, type JobId } from "./Job.ts"
import { JobStore, JobStoreError } from "./JobStore.ts"
import { type Chunk, type ChunkBackend, type FileState, makeSharedBytes } from "./jobBytesShared.ts"
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

/**
 * One write to a job file: refused (0) unless the token is '' or holds the
 * job's lease; deletes the chunks from `dropFrom` on, sets the chunks, then
 * the file's length and generation.
 */
const WRITE = `
if ARGV[2] ~= '' and redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
local file = ARGV[3]
if ARGV[4] ~= '' then
  local n = tonumber(ARGV[4])
  while redis.call('HDEL', KEYS[1], file .. ':' .. n) == 1 do n = n + 1 end
end
for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[1], file .. ':' .. ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], file .. ':length', ARGV[5], file .. ':generation', ARGV[6])
redis.call('ZADD', KEYS[3], 'NX', ARGV[7], ARGV[1])
return 1`

const bufferReplies = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } } as const

/** The job bytes in the Redis connection in force. */
const chunkBackend = (
  redis: Redis.Redis["Service"],
  node: NodeRedis.NodeRedis["Service"],
  prefix: string
): ChunkBackend => {
  const bytesKey = (jobId: string) => redisKey(prefix, "jobs", "bytes", jobId)
  const written = redisKey(prefix, "jobs", "bytes-written")
  const records = redisKey(prefix, "jobs", "records")
  const leases = redisKey(prefix, "jobs", "leases")
  const state = (length: string | null, generation: string | null): FileState | undefined =>
    length === null ? undefined : { length: Number(length), generation: Number(generation ?? 0) }
  return {
    states: (jobId) =>
      Effect.map(
        redis.send<Array<string | null>>(
          "HMGET",
          bytesKey(jobId),
          "input:length",
          "input:generation",
          "results:length",
          "results:generation"
        ),
        ([inputLength, inputGeneration, resultsLength, resultsGeneration]) => {
          const input = state(inputLength ?? null, inputGeneration ?? null)
          const results = state(resultsLength ?? null, resultsGeneration ?? null)
          return { ...(input === undefined ? {} : { input }), ...(results === undefined ? {} : { results }) }
        }
      ),
    read: (jobId, file, from, count) =>
      Effect.map(
        node.use(
          (client) =>
            client.sendCommand(
              ["HMGET", bytesKey(jobId), ...Array.from({ length: count }, (_, i) => `${file}:${from + i}`)],
              bufferReplies
            ) as Promise<Array<Buffer | null>>
        ),
        (replies) => {
          const chunks: Array<Chunk> = []
          for (const [i, bytes] of replies.entries()) {
            if (bytes === null) break
            chunks.push({ index: from + i, bytes })
          }
          return chunks
        }
      ),
    write: (jobId, file, token, write) =>
      Effect.map(
        node.use((client) =>
          client.sendCommand([
            "EVAL",
            WRITE,
            "3",
            bytesKey(jobId),
            leases,
            written,
            jobId,
            token ?? "",
            file,
            write.dropFrom === undefined ? "" : String(write.dropFrom),
            String(write.state.length),
            String(write.state.generation),
            String(Date.now()),
            ...write.chunks.flatMap((chunk) => [
              String(chunk.index),
              Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength)
            ])
          ])
        ),
        (reply) => Number(reply) === 1
      ),
    remove: (jobId) =>
      Effect.andThen(redis.send("DEL", bytesKey(jobId)), Effect.asVoid(redis.send("ZREM", written, jobId))),
    orphans: (before) =>
      Effect.gen(function* () {
        const ids = yield* redis.send<Array<string>>("ZRANGEBYSCORE", written, "-inf", String(before))
        const orphans: Array<string> = []
        for (const jobId of ids) if ((yield* redis.send<number>("HEXISTS", records, jobId)) === 0) orphans.push(jobId)
        return orphans
      }),
    hasRecord: (jobId) => Effect.map(redis.send<number>("HEXISTS", records, jobId), (exists) => exists === 1)
  }
}

/** The store over the Redis connection in force, and its shared bytes (the queue opens them under a lease). */
export const makeRedisJobStore = (dataDir: string) =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const records = redisKey(prefix, "jobs", "records")
    const bytes = yield* makeSharedBytes(dataDir, chunkBackend(redis, yield* NodeRedis.NodeRedis, prefix))
    const read = (jobId: JobId) =>
      redis.send<string | null>("HGET", records, jobId).pipe(
        redisStep("read", jobId),
        Effect.flatMap((text) =>
          text === null ? Effect.succeed(undefined) : fileStep("read", jobId, () => decodeJob(text))
        )
      )
    const store = JobStore.of({
      stage: bytes.stage,
      discard: bytes.discard,
      create: (job, upload) =>
        Effect.andThen(
          bytes.adopt(job.jobId, upload),
          redis.send("HSET", records, job.jobId, encode(job)).pipe(
            redisStep("create", job.jobId),
            Effect.tapError(() => Effect.ignore(bytes.remove(job.jobId)))
          )
        ),
      open: (jobId, file) => bytes.open(jobId, file),
      read,
      write: (job) =>
        Effect.asVoid(redis.send("HSET", records, job.jobId, encode(job)).pipe(redisStep("write", job.jobId))),
      list: () =>
        redis.send("HGETALL", records).pipe(
          redisStep("list"),
          Effect.flatMap((reply) => readableJobs(hashEntries(reply), decodeJob))
        ),
      remove: (jobId) =>
        Effect.andThen(redis.send("HDEL", records, jobId).pipe(redisStep("remove", jobId)), bytes.remove(jobId))
    })
    return { store, bytes }
  })

/** The store alone (records and bytes in Redis, a copy of the bytes under `dataDir`). */
export const layerRedis = (dataDir: string): Layer.Layer<JobStore, never, RedisConnection> =>
  Layer.effect(
    JobStore,
    Effect.map(makeRedisJobStore(dataDir), ({ store }) => store)
  )
