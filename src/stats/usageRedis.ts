/**
 * The usage store's Redis adapter: per offer a hash of counters
 * (`HINCRBY`, fields as `usageCounters.ts` names them), a native HyperLogLog of unique
 * emails (`redisHyperLogLog.ts`; a delta is merged with `PFMERGE`, so
 * operators can `PFCOUNT` it) and a hash of the steps applied once per
 * source. A delta is added by one Lua script — check the step, add the
 * counters, merge the registers — so it is atomic per offer and every
 * daemon adds into the same counts: a job's checkpoint stored again by
 * the daemon that took the job over changes nothing.
 *
 * Registers go over the wire as bytes (`NodeRedis`, `Buffer` arguments and
 * replies); everything else is text.
 */
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RESP_TYPES } from "redis"
import { hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { fromRedisHll, toRedisHll } from "./redisHyperLogLog.ts"
import type { UsageState } from "./UsageState.ts"
import { UsageStore, UsageStoreError } from "./UsageStore.ts"
import { counterIncrements, stateOfCounters } from "./usageCounters.ts"

const APPLY = `
local counters, hll, applied, scratch, offers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local source, step = ARGV[2], ARGV[3]
if source ~= '' then
  local stored = redis.call('HGET', applied, source)
  if stored and tonumber(stored) >= tonumber(step) then return 0 end
  redis.call('HSET', applied, source, step)
end
redis.call('SADD', offers, ARGV[1])
local n = tonumber(ARGV[4])
for i = 0, n - 1 do redis.call('HINCRBY', counters, ARGV[5 + 2 * i], ARGV[6 + 2 * i]) end
local at = 5 + 2 * n
if ARGV[at] ~= '' then
  local first = redis.call('HGET', counters, 'firstAt')
  if not first or tonumber(ARGV[at]) < tonumber(first) then redis.call('HSET', counters, 'firstAt', ARGV[at]) end
  local last = redis.call('HGET', counters, 'lastAt')
  if not last or tonumber(ARGV[at + 1]) > tonumber(last) then redis.call('HSET', counters, 'lastAt', ARGV[at + 1]) end
end
if ARGV[at + 2] ~= '' then
  redis.call('SET', scratch, ARGV[at + 2])
  redis.call('PFMERGE', hll, scratch)
  redis.call('DEL', scratch)
end
return 1`

/** The counters and the registers, read together. */
const READ = "return { redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2]) }"

const bufferReplies = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } } as const

/** The adapter's service over the connection in force. */
const makeRedisUsageStore = Effect.gen(function* () {
  const { use } = yield* NodeRedis.NodeRedis
  const prefix = yield* RedisKeyPrefix
  const offers = redisKey(prefix, "usage-offers")
  const keysOf = (offerId: string) => {
    const base = redisKey(prefix, "usage", offerId)
    return { counters: base, hll: `${base}:hll`, applied: `${base}:applied`, scratch: `${base}:scratch` }
  }
  const failed = (operation: UsageStoreError["operation"], offerId?: string) => (error: { readonly cause: unknown }) =>
    new UsageStoreError({ operation, ...(offerId === undefined ? {} : { offerId }), cause: error.cause })

  const add = (offerId: string, source: string, step: number, delta: UsageState) => {
    const keys = keysOf(offerId)
    const pairs = counterIncrements(delta).flatMap(([field, amount]) => [field, String(amount)])
    const args: Array<string | Buffer> = [
      "EVAL",
      APPLY,
      "5",
      keys.counters,
      keys.hll,
      keys.applied,
      keys.scratch,
      offers,
      offerId,
      source,
      String(step),
      String(pairs.length / 2),
      ...pairs,
      delta.firstAt === null ? "" : String(delta.firstAt),
      delta.lastAt === null ? "" : String(delta.lastAt),
      delta.registers === null ? "" : toRedisHll(delta.registers)
    ]
    return Effect.asVoid(use((client) => client.sendCommand(args))).pipe(Effect.mapError(failed("apply", offerId)))
  }

  return {
    apply: (offerId: string, delta: UsageState) => add(offerId, "", 0, delta),
    applyOnce: (offerId: string, source: string, step: number, delta: UsageState) => add(offerId, source, step, delta),
    forget: (offerId: string, source: string) =>
      Effect.asVoid(use((client) => client.sendCommand(["HDEL", keysOf(offerId).applied, source]))).pipe(
        Effect.mapError(failed("forget", offerId))
      ),
    get: (offerId: string) => {
      const keys = keysOf(offerId)
      return use(
        (client) =>
          client.sendCommand(["EVAL", READ, "2", keys.counters, keys.hll], bufferReplies) as Promise<
            [Array<Buffer>, Buffer | null]
          >
      ).pipe(
        Effect.mapError(failed("get", offerId)),
        Effect.flatMap(([counters, hll]) =>
          Effect.try({
            try: () => {
              const fields: Array<readonly [string, number]> = []
              for (let i = 0; i + 1 < counters.length; i += 2)
                fields.push([String(counters[i]), Number(counters[i + 1])])
              if (fields.length === 0 && hll === null) return undefined
              return stateOfCounters(fields, hll === null ? null : fromRedisHll(hll))
            },
            catch: (cause) => new UsageStoreError({ operation: "get", offerId, cause })
          })
        )
      )
    },
    offerIds: () =>
      use((client) => client.sendCommand(["SMEMBERS", offers]) as Promise<Array<string>>).pipe(
        Effect.mapError(failed("get"))
      ),
    applied: (offerId: string) =>
      use((client) => client.sendCommand(["HGETALL", keysOf(offerId).applied])).pipe(
        Effect.mapError(failed("get", offerId)),
        Effect.map((reply) => {
          const steps = new Map<string, number>()
          for (const [source, step] of hashEntries(reply)) if (source !== "") steps.set(source, Number(step))
          return steps
        })
      )
  } satisfies UsageStore["Service"]
})

/** Counters, a native HyperLogLog and the steps applied once, per offer, on the shared Redis server. */
export const layerRedis: Layer.Layer<UsageStore, never, RedisConnection> = Layer.effect(
  UsageStore,
  Effect.suspend(() => Effect.map(makeRedisUsageStore, UsageStore.of))
)
