/**
 * The usage store's Redis adapter: per offer a hash of counters
 * (`HINCRBY`: validations, eligible, ineligible, by reason `r:<code>`, by
 * target group `g:<id>`, daily buckets `d:<day>:v|e|i`, verification events
 * `v:<event>`, the hosted flow's steps `h:<step>` and by day
 * `d:<day>:h:<step>`, first and last instants), a native HyperLogLog of unique
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
import type { HostedFlowStep } from "../domain/OfferUsage.ts"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { fromRedisHll, toRedisHll } from "./redisHyperLogLog.ts"
import {
  addUsage,
  dayFlows,
  emptyDayCounts,
  emptyUsageState,
  HOSTED_FLOW_STEPS,
  type UsageState,
  VERIFICATION_EVENTS,
  type VerificationCounts
} from "./UsageState.ts"
import { UsageStore, UsageStoreError } from "./UsageStore.ts"

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

/** The counter increments of a delta, as field/amount pairs (zeros left out). */
const increments = (delta: UsageState): Array<string> => {
  const pairs: Array<string> = []
  const add = (field: string, amount: number) => {
    if (amount !== 0) pairs.push(field, String(amount))
  }
  add("validations", delta.validations)
  add("eligible", delta.eligible)
  add("ineligible", delta.ineligible)
  for (const [reason, n] of delta.ineligibleByReason) add(`r:${reason}`, n)
  for (const [group, n] of delta.matchesByTargetGroup) add(`g:${group}`, n)
  for (const [day, counts] of delta.daily) {
    add(`d:${day}:v`, counts.validations)
    add(`d:${day}:e`, counts.eligible)
    add(`d:${day}:i`, counts.ineligible)
    const flows = counts.hostedFlow
    if (flows !== undefined) for (const step of HOSTED_FLOW_STEPS) add(`d:${day}:h:${step}`, flows[step])
  }
  for (const event of VERIFICATION_EVENTS) add(`v:${event}`, delta.verifications[event])
  for (const step of HOSTED_FLOW_STEPS) add(`h:${step}`, delta.hostedFlow[step])
  return pairs
}

/** A stored counters hash (and registers) as a state. */
const stateOf = (fields: Map<string, string>, registers: Uint8Array | null): UsageState => {
  const state = emptyUsageState()
  for (const [field, text] of fields) {
    const value = Number(text)
    if (field === "validations") state.validations = value
    else if (field === "eligible") state.eligible = value
    else if (field === "ineligible") state.ineligible = value
    else if (field === "firstAt") state.firstAt = value
    else if (field === "lastAt") state.lastAt = value
    else if (field.startsWith("r:")) state.ineligibleByReason.set(field.slice(2), value)
    else if (field.startsWith("g:")) state.matchesByTargetGroup.set(field.slice(2), value)
    else if (field.startsWith("v:")) state.verifications[field.slice(2) as keyof VerificationCounts] = value
    else if (field.startsWith("h:")) state.hostedFlow[field.slice(2) as HostedFlowStep] = value
    else if (field.startsWith("d:")) {
      const [, day, kind, step] = field.split(":")
      const bucket = state.daily.get(Number(day)) ?? emptyDayCounts()
      if (kind === "h") dayFlows(bucket)[step as HostedFlowStep] = value
      else if (kind === "v") bucket.validations = value
      else if (kind === "e") bucket.eligible = value
      else bucket.ineligible = value
      state.daily.set(Number(day), bucket)
    }
  }
  state.registers = registers
  // Buckets older than the retention are dropped when read (adding prunes them).
  return addUsage(emptyUsageState(), state)
}

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
    const pairs = increments(delta)
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
              const fields = new Map<string, string>()
              for (let i = 0; i + 1 < counters.length; i += 2) fields.set(String(counters[i]), String(counters[i + 1]))
              if (fields.size === 0 && hll === null) return undefined
              return stateOf(fields, hll === null ? null : fromRedisHll(hll))
            },
            catch: (cause) => new UsageStoreError({ operation: "get", offerId, cause })
          })
        )
      )
    },
    offerIds: () =>
      use((client) => client.sendCommand(["SMEMBERS", offers]) as Promise<Array<string>>).pipe(
        Effect.mapError(failed("get"))
      )
  } satisfies UsageStore["Service"]
})

/** Counters, a native HyperLogLog and the steps applied once, per offer, on the shared Redis server. */
export const layerRedis: Layer.Layer<UsageStore, never, RedisConnection> = Layer.effect(
  UsageStore,
  Effect.suspend(() => Effect.map(makeRedisUsageStore, UsageStore.of))
)
