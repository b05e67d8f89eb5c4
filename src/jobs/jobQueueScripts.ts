/**
 * The Lua scripts of the Redis job queue (`JobQueueRedis.ts`), each one
 * atomic step on these keys (under the deployment's prefix):
 * - `jobs:records` hash, id → record (`JobStoreRedis.ts`);
 * - `jobs:waiting` sorted set, id → submission time (resumed jobs score 0,
 *   so they go first);
 * - `jobs:running` sorted set, id → lease deadline (Redis's clock, ms), and
 *   `jobs:leases` hash, id → the token of the claim that holds it;
 * - `jobs:cancel` set: cancellations asked of a job another daemon runs;
 * - `jobs:expiring` sorted set, id → end of retention (finished jobs);
 * - `jobs:idempotency` hash, team + Idempotency-Key → id;
 * - `jobs:callbacks` sorted set, id → when to try its callback again if the
 *   daemon delivering it is gone.
 * A record is written by the holder of the job's lease only (a fenced
 * write), so a daemon that lost its claim can never overwrite the progress
 * of the one that took the job over.
 */
import * as Redis from "effect/persistence/Redis"

/** Redis's clock in milliseconds, for lease deadlines every daemon agrees on. */
const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)`

/**
 * A new job: refused when its Idempotency-Key is taken (answering the
 * holder) or `maxQueued` wait. It waits scored by its creation (epoch ms),
 * but after every job already waiting: jobs submitted within one
 * millisecond, or by a daemon whose clock is behind, still run in the order
 * their submits reached Redis.
 */
export const submitScript = Redis.script(
  (
    ...args: [
      records: string,
      waiting: string,
      idempotency: string,
      id: string,
      record: string,
      score: number,
      maxQueued: number,
      idempotencyField: string,
      channel: string
    ]
  ) => args,
  {
    numberOfKeys: 3,
    lua: `
local id, field = ARGV[1], ARGV[5]
if field ~= '' then
  local earlier = redis.call('HGET', KEYS[3], field)
  if earlier then return {'existing', earlier} end
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {'full', ''} end
redis.call('HSET', KEYS[1], id, ARGV[2])
local score = tonumber(ARGV[3])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if #last == 2 and tonumber(last[2]) >= score then score = tonumber(last[2]) + 1 end
redis.call('ZADD', KEYS[2], string.format('%.0f', score), id)
if field ~= '' then redis.call('HSET', KEYS[3], field, id) end
redis.call('PUBLISH', ARGV[6], id)
return {'created', id}`
  }
).withReturnType<[string, string]>()

/** Puts jobs whose lease lapsed back at the front, then takes the next waiting job under a new lease. */
export const claimScript = Redis.script(
  (...args: [waiting: string, running: string, leases: string, token: string, leaseMs: number]) => args,
  {
    numberOfKeys: 3,
    lua: `${NOW}
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 16)
for _, id in ipairs(lapsed) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZADD', KEYS[1], 0, id)
end
local taken = redis.call('ZPOPMIN', KEYS[1])
if #taken == 0 then return {'', redis.call('ZCARD', KEYS[1])} end
local id = taken[1]
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
redis.call('HSET', KEYS[3], id, ARGV[1])
return {id, redis.call('ZCARD', KEYS[1])}`
  }
).withReturnType<[string, number]>()

/** Extends a lease held with `token`: -1 when it is held no more, else whether a cancellation was asked. */
export const renewScript = Redis.script(
  (...args: [running: string, leases: string, cancel: string, id: string, token: string, leaseMs: number]) => args,
  {
    numberOfKeys: 3,
    lua: `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return -1 end${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
return redis.call('SISMEMBER', KEYS[3], ARGV[1])`
  }
).withReturnType<number>()

/** Writes the record only while `token` holds the lease (0 when not). */
export const fencedWriteScript = Redis.script(
  (...args: [records: string, leases: string, id: string, token: string, record: string]) => args,
  {
    numberOfKeys: 2,
    lua: `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`
  }
).withReturnType<number>()

/** A job's final record, its end of retention (epoch ms) and when its callback is due ('' when none is pending). */
type FinalRecord = [record: string, expiresAt: number, callbackAt: string]

/**
 * How a job `id` ends, in Lua, whichever script ends it: its final record
 * stored, its retention's end set, its callback (if any) due; the
 * `FinalRecord` arguments start at `ARGV[first]`.
 */
const endLua = (keys: { records: string; expiring: string; callbacks: string }, first: number) => `
redis.call('HSET', ${keys.records}, id, ARGV[${first}])
redis.call('ZADD', ${keys.expiring}, ARGV[${first + 1}], id)
if ARGV[${first + 2}] ~= '' then redis.call('ZADD', ${keys.callbacks}, ARGV[${first + 2}], id) end`

/**
 * The final record of a job, written by the lease holder (or, token '',
 * by whoever took it from the waiting set): out of the running set, into
 * expiring, and into the callbacks when it has one to deliver.
 */
export const finishScript = Redis.script(
  (
    ...args: [
      records: string,
      leases: string,
      running: string,
      expiring: string,
      cancel: string,
      callbacks: string,
      id: string,
      token: string,
      ...FinalRecord
    ]
  ) => args,
  {
    numberOfKeys: 6,
    lua: `
local id = ARGV[1]
if ARGV[2] ~= '' and redis.call('HGET', KEYS[2], id) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[3], id)
redis.call('HDEL', KEYS[2], id)
redis.call('SREM', KEYS[5], id)${endLua({ records: "KEYS[1]", expiring: "KEYS[4]", callbacks: "KEYS[6]" }, 3)}
return 1`
  }
).withReturnType<number>()

/**
 * Cancels a job: still waiting, it is taken out and ends with `record`
 * (answers 1); running somewhere, its cancellation is asked of the lease
 * holder (2); else it has finished (0).
 */
export const cancelScript = Redis.script(
  (
    ...args: [
      waiting: string,
      records: string,
      expiring: string,
      running: string,
      cancel: string,
      callbacks: string,
      id: string,
      ...FinalRecord
    ]
  ) => args,
  {
    numberOfKeys: 6,
    lua: `
local id = ARGV[1]
if redis.call('ZREM', KEYS[1], id) == 1 then${endLua({ records: "KEYS[2]", expiring: "KEYS[3]", callbacks: "KEYS[6]" }, 2)}
  return 1
end
if redis.call('ZSCORE', KEYS[4], id) then
  redis.call('SADD', KEYS[5], id)
  return 2
end
return 0`
  }
).withReturnType<number>()

/** Takes up to 64 members scored at or before `now` (expired jobs, callbacks to retry), rescoring them to `next` (or removing them when `next` is ''). */
export const takeDueScript = Redis.script((...args: [set: string, now: number, next: string]) => args, {
  numberOfKeys: 1,
  lua: `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 64)
for _, id in ipairs(due) do
  if ARGV[2] == '' then redis.call('ZREM', KEYS[1], id) else redis.call('ZADD', KEYS[1], ARGV[2], id) end
end
return due`
}).withReturnType<Array<string>>()

/** Forgets a finished job: its record, its expiry and its Idempotency-Key (when that still names it). */
export const dropScript = Redis.script(
  (...args: [records: string, expiring: string, idempotency: string, callbacks: string, id: string, field: string]) =>
    args,
  {
    numberOfKeys: 4,
    lua: `
local id, field = ARGV[1], ARGV[2]
redis.call('HDEL', KEYS[1], id)
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[4], id)
if field ~= '' and redis.call('HGET', KEYS[3], field) == id then redis.call('HDEL', KEYS[3], field) end
return 1`
  }
)

/** Writes a finished job's record (its callback state) unless the job is gone. */
export const updateFinishedScript = Redis.script((...args: [records: string, id: string, record: string]) => args, {
  numberOfKeys: 1,
  lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`
})
