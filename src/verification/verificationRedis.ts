/**
 * The verification store's Redis adapter: records as JSON in one hash
 * (`<prefix>verifications`, id → record) and, per keyed address hash, the
 * set of its records' ids (`<prefix>verifications:address:<hash>`). A
 * replacement is a compare-and-set script: it writes only over the version
 * the change was computed from, so of two daemons changing one
 * verification at once exactly one wins, as in one process. Redis
 * acknowledges a write once it is in its append-only file (see docs/operations.md,
 * "Redis settings", for the persistence settings that keep that promise).
 *
 * Limits: each unit a record holds (`domain/verificationLimits.ts`, computed
 * here, never in the script) is a member `<id>#<n>` of a sorted set per
 * limit key (`<prefix>verifications:units:<key>`, scored by its time), and
 * the record's members are listed in `<prefix>verifications:units` (id →
 * JSON). The same script that writes a record first counts, per check, the
 * units in the window as they would be after the write, and refuses it when
 * one check would break: one atomic step across every daemon.
 *
 * The port's reads have no failure of their own; here a read that cannot
 * reach Redis is a defect carrying the `RedisError`, which the server
 * answers as 503 (`server/http.ts`), like every request that needs the
 * shared store while it is down.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { VerificationRecord } from "../domain/Verification.ts"
import { type LimitCheck, unitsOf } from "../domain/verificationLimits.ts"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import {
  LimitExceeded,
  VerificationStore,
  VerificationStoreError,
  type VerificationStoreService
} from "./VerificationStore.ts"

/**
 * KEYS: records, address set, units list, then the sorted set of every
 * limit key the record's units and the checks name.
 * ARGV: operation (insert, replace, remove, or units: list the units of a
 * record stored before they were kept), id, record JSON, version the
 * change was computed from,
 * the record's units as JSON ([[key index, at], ...], key index into KEYS),
 * the checks as JSON ([[key index, max, since], ...]).
 * Answers {1} written, {0} not (the version moved, or the record is gone),
 * {2, check index (0-based), oldest unit in its window} refused.
 */
const change = Redis.script((...args: ReadonlyArray<string>) => args, {
  numberOfKeys: (...args: ReadonlyArray<string>) => args.length - 6,
  lua: `
local op, id = ARGV[1], ARGV[2]
if op ~= 'insert' then
  local current = redis.call('HGET', KEYS[1], id)
  if not current then return {0} end
  if op == 'replace' and cjson.decode(current).version ~= tonumber(ARGV[4]) then return {0} end
end
-- The record's units before the write: [[key name, at, member], ...].
local old = {}
local listed = redis.call('HGET', KEYS[3], id)
if listed then
  if op == 'units' then return {1} end
  old = cjson.decode(listed)
end
local new = {}
if op ~= 'remove' then
  for n, unit in ipairs(cjson.decode(ARGV[5])) do
    new[n] = { KEYS[unit[1]], unit[2], id .. '#' .. n }
  end
end
for i, check in ipairs(cjson.decode(ARGV[6])) do
  local key, max, since = KEYS[check[1]], check[2], check[3]
  local count = redis.call('ZCOUNT', key, since, '+inf')
  local oldest = nil
  for _, unit in ipairs(old) do
    if unit[1] == key and unit[2] >= since then count = count - 1 end
  end
  for _, unit in ipairs(new) do
    if unit[1] == key and unit[2] >= since then
      count = count + 1
      if oldest == nil or unit[2] < oldest then oldest = unit[2] end
    end
  end
  if count > max then
    local first = redis.call('ZRANGEBYSCORE', key, since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if first[2] and (oldest == nil or tonumber(first[2]) < oldest) then oldest = tonumber(first[2]) end
    return {2, i - 1, tostring(oldest or since)}
  end
end
for _, unit in ipairs(old) do redis.call('ZREM', unit[1], unit[3]) end
for _, unit in ipairs(new) do redis.call('ZADD', unit[1], unit[2], unit[3]) end
if op == 'remove' then
  redis.call('HDEL', KEYS[1], id)
  redis.call('SREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  return {1}
end
if op ~= 'units' then
  redis.call('HSET', KEYS[1], id, ARGV[3])
  redis.call('SADD', KEYS[2], id)
end
if #new == 0 then redis.call('HDEL', KEYS[3], id) else redis.call('HSET', KEYS[3], id, cjson.encode(new)) end
return {1}`
}).withReturnType<[number, number?, string?]>()

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
    const unitLists = redisKey(prefix, "verifications", "units")
    const addressKey = (hash: string) => redisKey(prefix, "verifications", "address", hash)
    const unitKey = (key: string) => redisKey(prefix, "verifications", "units", key)
    const runChange = redis.eval(change)
    const runOfAddress = redis.eval(ofAddress)
    const failed = (operation: VerificationStoreError["operation"]) => (error: Redis.RedisError) =>
      new VerificationStoreError({ operation, cause: error })
    const read = <A>(effect: Effect.Effect<A, Redis.RedisError>) =>
      Effect.orDie(Effect.mapError(effect, failed("load")))
    const decoded = (texts: ReadonlyArray<string | null>) =>
      texts.flatMap((text) => (text === null ? [] : [decode(text)]))

    /** Runs the script for `record`: its units and `checks` name their sorted sets by index into KEYS. */
    const write = (
      operation: "insert" | "replace" | "remove" | "units",
      record: VerificationRecord,
      checks: ReadonlyArray<LimitCheck>
    ) => {
      const keys = [records, addressKey(record.addressHash), unitLists]
      const indexOf = (key: string) => {
        const full = unitKey(key)
        const at = keys.indexOf(full)
        return at >= 0 ? at + 1 : keys.push(full)
      }
      const units = operation === "remove" ? [] : unitsOf(record).map((unit) => [indexOf(unit.key), unit.at])
      const limits = checks.map((check) => [indexOf(check.key), check.max, check.since])
      return Effect.flatMap(
        runChange(
          ...keys,
          operation,
          record.id,
          operation === "insert" || operation === "replace" ? encode(record) : "",
          String(record.version - 1),
          JSON.stringify(units),
          JSON.stringify(limits)
        ),
        ([outcome, broken, oldest]): Effect.Effect<boolean, LimitExceeded> =>
          outcome === 2
            ? Effect.fail(new LimitExceeded({ check: checks[broken!]!, oldest: Number(oldest) }))
            : Effect.succeed(outcome === 1)
      )
    }

    // Records written before units were kept get theirs once, so the limits count them too.
    const listed = new Set(yield* read(redis.send<Array<string>>("HKEYS", unitLists)))
    for (const record of decoded(yield* read(redis.send<Array<string>>("HVALS", records)))) {
      if (!listed.has(record.id) && unitsOf(record).length > 0) yield* Effect.orDie(write("units", record, []))
    }

    return {
      shared: true,
      insert: (record, limits = []) =>
        write("insert", record, limits).pipe(Effect.asVoid, Effect.mapError(orStoreError("insert"))),
      replace: (record, limits = []) => write("replace", record, limits).pipe(Effect.mapError(orStoreError("replace"))),
      insertAll: (all) =>
        Effect.gen(function* () {
          if (all.length === 0) return 0
          const held = yield* redis.send<Array<string | null>>("HMGET", records, ...all.map((record) => record.id))
          const fresh = all.filter((_, i) => held[i] === null)
          // Many scripts in flight: the connection pipelines them.
          // No checks: nothing can be refused.
          yield* Effect.forEach(
            fresh,
            (record) => write("insert", record, []).pipe(Effect.catchTag("LimitExceeded", Effect.die)),
            { concurrency: 64, discard: true }
          )
          return fresh.length
        }).pipe(Effect.mapError(failed("insert"))),
      get: (id) =>
        read(redis.send<string | null>("HGET", records, id)).pipe(
          Effect.map((text) => (text === null ? undefined : decode(text)))
        ),
      byAddress: (addressHash) => read(runOfAddress(records, addressKey(addressHash))).pipe(Effect.map(decoded)),
      list: () => read(redis.send<Array<string>>("HVALS", records)).pipe(Effect.map(decoded)),
      // HSCAN may answer a field twice (the hash grown meanwhile): the ids seen are kept, the records not.
      eachPage: (size, use) =>
        Effect.gen(function* () {
          const seen = new Set<string>()
          let cursor = "0"
          do {
            const [next, flat] = yield* read(
              redis.send<[string, Array<string>]>("HSCAN", records, cursor, "COUNT", String(size))
            )
            // COUNT is a hint: a reply may hold more than a page.
            let page: Array<VerificationRecord> = []
            for (let i = 0; i + 1 < flat.length; i += 2) {
              if (seen.has(flat[i]!)) continue
              seen.add(flat[i]!)
              page.push(decode(flat[i + 1]!))
              if (page.length === size) {
                yield* use(page)
                page = []
              }
            }
            if (page.length > 0) yield* use(page)
            cursor = next
          } while (cursor !== "0")
        }),
      remove: (id) =>
        Effect.gen(function* () {
          const text = yield* redis.send<string | null>("HGET", records, id)
          if (text === null) return
          // No checks: nothing can be refused.
          yield* write("remove", decode(text), []).pipe(Effect.catchTag("LimitExceeded", Effect.die))
        }).pipe(Effect.mapError(failed("remove")))
    }

    function orStoreError(operation: VerificationStoreError["operation"]) {
      return <E>(error: E | Redis.RedisError): E | VerificationStoreError =>
        error instanceof Redis.RedisError ? failed(operation)(error) : error
    }
  }
)

/** Records on the shared Redis server, replaced by compare-and-set. */
export const layerRedis: Layer.Layer<VerificationStore, never, RedisConnection> = Layer.effect(
  VerificationStore,
  Effect.suspend(() => makeRedisVerificationStore)
)
