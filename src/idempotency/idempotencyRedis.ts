/**
 * The idempotency store's Redis adapter, shared by every daemon: a record
 * per key (`<prefix>idempotency:<key>`, JSON). A claim is `SET NX` with
 * the claim's lifetime, so a daemon that dies mid-request leaves a claim
 * that lapses by itself; an answer replaces it, kept for its day; a release
 * deletes the claim only while it is the releasing request's.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import {
  IdempotencyRecord,
  IdempotencyStore,
  IdempotencyStoreError,
  type IdempotencyStoreService,
  liveRecord
} from "./IdempotencyStore.ts"

const decodeRecord = Schema.decodeUnknownSync(Schema.fromJsonString(IdempotencyRecord))
const encodeRecord = Schema.encodeSync(Schema.fromJsonString(IdempotencyRecord))

/** KEYS: the record; ARGV: the claim as JSON, its lifetime (ms): the record held, or nil when claimed. */
const claimScript = Redis.script((...args: [key: string, claim: string, ttlMs: string]) => args, {
  numberOfKeys: 1,
  lua: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])`
}).withReturnType<string | null>()

/** KEYS: the record; ARGV: the fingerprint: deletes a running claim of that request. */
const releaseScript = Redis.script((...args: [key: string, fingerprint: string, until: string]) => args, {
  numberOfKeys: 1,
  lua: `
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local record = cjson.decode(held)
if record.state == 'running' and record.fingerprint == ARGV[1] and record['until'] == tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`
}).withReturnType<number>()

const makeRedisIdempotencyStore: Effect.Effect<IdempotencyStoreService, never, Redis.Redis> = Effect.gen(function* () {
  const redis = yield* Redis.Redis
  const prefix = yield* RedisKeyPrefix
  const recordKey = (key: string) => redisKey(prefix, "idempotency", key)
  const claim = redis.eval(claimScript)
  const release = redis.eval(releaseScript)
  const failed = (operation: IdempotencyStoreError["operation"]) => (cause: unknown) =>
    new IdempotencyStoreError({ operation, cause })
  return {
    claim: (key, fingerprint, now, until) =>
      claim(
        recordKey(key),
        encodeRecord({ state: "running", fingerprint, until }),
        String(Math.max(1, Math.ceil(until - now)))
      ).pipe(
        Effect.map((held) => (held === null ? undefined : liveRecord(decodeRecord(held), now))),
        Effect.mapError(failed("claim"))
      ),
    answer: (key, fingerprint, answer, expiresAt) =>
      redis
        .send(
          "SET",
          recordKey(key),
          encodeRecord({ state: "answered", fingerprint, expiresAt, answer }),
          "PX",
          String(Math.max(1, Math.ceil(expiresAt - Date.now())))
        )
        .pipe(Effect.asVoid, Effect.mapError(failed("answer"))),
    release: (key, fingerprint, until) =>
      release(recordKey(key), fingerprint, String(until)).pipe(Effect.asVoid, Effect.mapError(failed("release")))
  }
})

/** The store on the shared Redis server. */
export const layerRedis: Layer.Layer<IdempotencyStore, never, RedisConnection> = Layer.effect(
  IdempotencyStore,
  makeRedisIdempotencyStore
)
