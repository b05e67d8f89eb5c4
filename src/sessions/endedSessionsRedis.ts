import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { announceLua, watchVersion } from "../store/redisConfigVersion.ts"
import { type EndedMap, EndedSessions, type EndedSessionsService, makeSharedEndedSessions } from "./EndedSessions.ts"

/** KEYS: the set, the version; ARGV: the channel, the nonce, its end, now (epoch ms). */
const endSession = Redis.script(
  (set: string, version: string, channel: string, nonce: string, until: number, now: number) => [
    set,
    version,
    channel,
    nonce,
    String(until),
    String(now)
  ],
  {
    numberOfKeys: 2,
    lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[4])
local current = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]) or '0')
if tonumber(ARGV[3]) > current then redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2]) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
${announceLua.replaceAll("KEYS[1]", "KEYS[2]")}
return 1`
  }
)

/** A `WITHSCORES` reply as nonces and ends: pairs (RESP3, as the client speaks) or a flat list (RESP2). */
const scoredMembers = (reply: ReadonlyArray<unknown>): EndedMap => {
  const ended = new Map<string, number>()
  if (reply.every(Array.isArray))
    for (const [nonce, until] of reply as Array<[unknown, unknown]>) ended.set(String(nonce), Number(until))
  else for (let i = 0; i + 1 < reply.length; i += 2) ended.set(String(reply[i]), Number(reply[i + 1]))
  return ended
}

/** The adapter over the connection in force, its view kept current until the scope closes. */
const makeRedisEndedSessions: Effect.Effect<EndedSessionsService, Redis.RedisError, Redis.Redis | Scope.Scope> =
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const keys = {
      set: redisKey(prefix, "console", "ended"),
      version: redisKey(prefix, "console", "ended-version"),
      channel: redisKey(prefix, "console", "ended-changed")
    }
    const run = redis.eval(endSession)
    const read = (now: number) =>
      Effect.map(
        redis.send<ReadonlyArray<unknown>>("ZRANGEBYSCORE", keys.set, `(${now}`, "+inf", "WITHSCORES"),
        scoredMembers
      )
    return yield* makeSharedEndedSessions({
      store: ({ nonce, until }, now) => run(keys.set, keys.version, keys.channel, nonce, until, now),
      read,
      watch: (refresh) => watchVersion(keys, refresh)
    })
  })

/** A sorted set shared by every daemon, each daemon's view kept current while the layer lives. */
export const layerRedis: Layer.Layer<EndedSessions, Redis.RedisError, RedisConnection> = Layer.effect(
  EndedSessions,
  makeRedisEndedSessions
)
