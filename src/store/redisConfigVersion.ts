/**
 * How daemons sharing one Redis learn that what feeds their configuration
 * changed (an API-created resource, an API key): every such write bumps a
 * version key and publishes it on a channel, in the same script as the
 * write. Each daemon reloads when a message arrives (milliseconds) and also
 * reads the version every `VERSION_POLL_MS`, so a message lost while its
 * subscriber reconnected is caught within that time. `watchVersion` is the
 * same watch over another version and channel (ended console sessions,
 * `sessions/endedSessionsRedis.ts`).
 */
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { RedisKeyPrefix, redisKey } from "./redis.ts"

export const CONFIG_VERSION = "config:version"
export const CONFIG_CHANNEL = "config:changed"
export const CONFIG_CHANGES = "config:changes"
/** How many item changes the feed keeps: a daemon further behind reloads in full. */
export const CHANGE_LOG_LENGTH = 1000
/** How often the version is read besides the messages. */
export const VERSION_POLL_MS = 500

/**
 * Lua that bumps the version and announces it; append to a script whose
 * KEYS[1] is the version key and ARGV[1] the channel.
 */
export const announceLua = `
local version = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], tostring(version))
`

/**
 * `announceLua` that also records the changed item in the feed: the Lua
 * expressions of the version key, the feed's key, the channel and the
 * item's text (`targetGroup:<id>`).
 */
export const announceItemLua = (at: {
  readonly version: string
  readonly changes: string
  readonly channel: string
  readonly item: string
}) => `
local version = redis.call('INCR', ${at.version})
redis.call('RPUSH', ${at.changes}, version .. ' ' .. ${at.item})
redis.call('LTRIM', ${at.changes}, -${CHANGE_LOG_LENGTH}, -1)
redis.call('PUBLISH', ${at.channel}, tostring(version))
`

/** The version key, channel and change feed under a prefix. */
export const configVersionKeys = (prefix: string) => ({
  version: redisKey(prefix, CONFIG_VERSION),
  channel: redisKey(prefix, CONFIG_CHANNEL),
  changes: redisKey(prefix, CONFIG_CHANGES)
})

/** The version now and the feed's last entries after `ARGV[1]`, read together. */
const changesScript = Redis.script((version: string, changes: string, since: string) => [version, changes, since], {
  numberOfKeys: 2,
  lua: `
local version = tonumber(redis.call('GET', KEYS[1]) or '0')
local behind = version - tonumber(ARGV[1])
if behind <= 0 or behind > ${CHANGE_LOG_LENGTH} then return {tostring(version)} end
local result = redis.call('LRANGE', KEYS[2], -behind, -1)
table.insert(result, 1, tostring(version))
return result`
}).withReturnType<ReadonlyArray<string>>()

/**
 * The version now and the items changed after `since`, in order; `items`
 * undefined when the feed does not hold each of those versions (trimmed, a
 * change of no one item, a server that lost its data).
 */
export const readConfigChanges = (
  since: string
): Effect.Effect<
  { readonly version: string; readonly items: ReadonlyArray<string> | undefined },
  Redis.RedisError,
  Redis.Redis
> =>
  Effect.flatMap(RedisKeyPrefix, (prefix) =>
    Effect.flatMap(Redis.Redis, (redis) => {
      const keys = configVersionKeys(prefix)
      return Effect.map(
        redis.eval(changesScript)(keys.version, keys.changes, since),
        ([version = "0", ...entries]) => ({
          version,
          items: itemsAfter(Number(since), Number(version), entries)
        })
      )
    })
  )

/** The items of `entries` (`<version> <item>`) when they are exactly the versions after `since` up to `version`. */
export const itemsAfter = (
  since: number,
  version: number,
  entries: ReadonlyArray<string>
): ReadonlyArray<string> | undefined => {
  if (entries.length !== version - since) return undefined
  const items: Array<string> = []
  for (const [i, entry] of entries.entries()) {
    const space = entry.indexOf(" ")
    if (Number(entry.slice(0, space)) !== since + i + 1) return undefined
    items.push(entry.slice(space + 1))
  }
  return items
}

/**
 * Calls `onChange` (one at a time) whenever a writer bumped the version
 * `keys.version` and announced it on `keys.channel`: on each message, and
 * when the polled version moved. Runs until the scope closes; Redis being
 * down only delays it.
 */
export const watchVersion = <E>(
  keys: { readonly version: string; readonly channel: string },
  onChange: Effect.Effect<void, E>
): Effect.Effect<void, never, Redis.Redis | Scope.Scope> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    let seen: string | null | undefined
    const readVersion = redis.send<string | null>("GET", keys.version)
    // Handles one at a time; a change seen while one runs is picked up by the next look.
    const check = Effect.gen(function* () {
      const version = yield* readVersion
      if (seen === undefined) {
        seen = version
        return
      }
      if (version === seen) return
      // Seen once handled: a change whose handling failed is handled again at the next look.
      yield* onChange
      seen = version
    }).pipe(Effect.ignore)
    yield* Effect.ignore(Effect.map(readVersion, (version) => (seen = version)))
    const messages = yield* redis.subscribe(keys.channel)
    const wake = yield* Queue.sliding<void>(1)
    yield* Effect.forkScoped(
      Effect.forever(Effect.andThen(Queue.take(messages), Queue.offer(wake, undefined))).pipe(Effect.ignore)
    )
    yield* Effect.forkScoped(Effect.repeat(Queue.offer(wake, undefined), Schedule.spaced(`${VERSION_POLL_MS} millis`)))
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Queue.take(wake), check)))
  })

/** The configuration's version now ("0" before the first change). */
export const readConfigVersion: Effect.Effect<string | undefined, Redis.RedisError, Redis.Redis> = Effect.flatMap(
  RedisKeyPrefix,
  (prefix) =>
    Effect.flatMap(Redis.Redis, (redis) =>
      // Absent before the first change: version 0, which the change feed counts from.
      Effect.map(redis.send<string | null>("GET", configVersionKeys(prefix).version), (version) => version ?? "0")
    )
)

/** Calls `onChange` (one at a time) whenever another writer changed the configuration's stores. */
export const watchConfigVersion = (
  onChange: Effect.Effect<void, unknown>
): Effect.Effect<void, never, Redis.Redis | Scope.Scope> =>
  Effect.flatMap(RedisKeyPrefix, (prefix) => watchVersion(configVersionKeys(prefix), onChange))
