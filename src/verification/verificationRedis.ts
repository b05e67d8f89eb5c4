/**
 * The verification store's Redis adapter: records as JSON in one hash
 * (`<prefix>verifications`, id → record) and, per keyed address hash, the
 * set of its records' ids (`<prefix>verifications:address:<hash>`). A
 * replacement is a compare-and-set script: it writes only over the version
 * the change was computed from, so of two daemons changing one
 * verification at once exactly one wins, as in one process. Redis
 * acknowledges a write once it is in its append-only file (see the README
 * for the persistence settings that keep that promise).
 *
 * The port's reads have no failure of their own; here a read that cannot
 * reach Redis is a defect carrying the `RedisError`, which the server
 * answers as 503 (`server/http.ts`), like every request that needs the
 * shared store while it is down.
 */
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { VerificationRecord } from "../domain/Verification.ts"
import { RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { VerificationStoreError, type VerificationStoreService } from "./VerificationStore.ts"

/** KEYS: records, address set; ARGV: operation, id, record JSON, version the change was computed from. */
const change = Redis.script(
  (...args: [records: string, address: string, op: string, id: string, json: string, previous: string]) => args,
  {
    numberOfKeys: 2,
    lua: `
local op, id = ARGV[1], ARGV[2]
if op == 'insert' then
  redis.call('HSET', KEYS[1], id, ARGV[3])
  redis.call('SADD', KEYS[2], id)
  return 1
end
local current = redis.call('HGET', KEYS[1], id)
if not current then return 0 end
if op == 'replace' then
  if cjson.decode(current).version ~= tonumber(ARGV[4]) then return 0 end
  redis.call('HSET', KEYS[1], id, ARGV[3])
  redis.call('SADD', KEYS[2], id)
  return 1
end
redis.call('HDEL', KEYS[1], id)
redis.call('SREM', KEYS[2], id)
return 1`
  }
).withReturnType<number>()

/** KEYS: records, address set: the records of the address, in one round trip. */
const ofAddress = Redis.script((...args: [records: string, address: string]) => args, {
  numberOfKeys: 2,
  lua: `
local ids = redis.call('SMEMBERS', KEYS[2])
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[1], unpack(ids))`
}).withReturnType<Array<string | null>>()

const encode = Schema.encodeSync(Schema.fromJsonString(VerificationRecord))
const decode = Schema.decodeUnknownSync(Schema.fromJsonString(VerificationRecord))

export const makeRedisVerificationStore: Effect.Effect<VerificationStoreService, never, Redis.Redis> = Effect.gen(
  function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const records = redisKey(prefix, "verifications")
    const addressKey = (hash: string) => redisKey(prefix, "verifications", "address", hash)
    const run = redis.eval(change)
    const runOfAddress = redis.eval(ofAddress)
    const failed = (operation: VerificationStoreError["operation"]) => (error: Redis.RedisError) =>
      new VerificationStoreError({ operation, cause: error })
    const read = <A>(effect: Effect.Effect<A, Redis.RedisError>) =>
      Effect.orDie(Effect.mapError(effect, failed("load")))
    const decoded = (texts: ReadonlyArray<string | null>) =>
      texts.flatMap((text) => (text === null ? [] : [decode(text)]))
    return {
      shared: true,
      insert: (record) =>
        Effect.asVoid(run(records, addressKey(record.addressHash), "insert", record.id, encode(record), "")).pipe(
          Effect.mapError(failed("insert"))
        ),
      replace: (record) =>
        Effect.map(
          run(
            records,
            addressKey(record.addressHash),
            "replace",
            record.id,
            encode(record),
            String(record.version - 1)
          ),
          (changed) => changed === 1
        ).pipe(Effect.mapError(failed("replace"))),
      get: (id) =>
        read(redis.send<string | null>("HGET", records, id)).pipe(
          Effect.map((text) => (text === null ? undefined : decode(text)))
        ),
      byAddress: (addressHash) => read(runOfAddress(records, addressKey(addressHash))).pipe(Effect.map(decoded)),
      list: () => read(redis.send<Array<string>>("HVALS", records)).pipe(Effect.map(decoded)),
      remove: (id) =>
        Effect.gen(function* () {
          const text = yield* redis.send<string | null>("HGET", records, id)
          if (text === null) return
          yield* run(records, addressKey(decode(text).addressHash), "remove", id, "", "")
        }).pipe(Effect.mapError(failed("remove")))
    }
  }
)
