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

/** The version key and channel under a prefix. */
export const configVersionKeys = (prefix: string) => ({
  version: redisKey(prefix, CONFIG_VERSION),
  channel: redisKey(prefix, CONFIG_CHANNEL)
})

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

/** The configuration's version now (absent before the first change). */
export const readConfigVersion: Effect.Effect<string | undefined, Redis.RedisError, Redis.Redis> = Effect.flatMap(
  RedisKeyPrefix,
  (prefix) =>
    Effect.flatMap(Redis.Redis, (redis) =>
      Effect.map(redis.send<string | null>("GET", configVersionKeys(prefix).version), (version) => version ?? undefined)
    )
)

/** Calls `onChange` (one at a time) whenever another writer changed the configuration's stores. */
export const watchConfigVersion = (
  onChange: Effect.Effect<void, unknown>
): Effect.Effect<void, never, Redis.Redis | Scope.Scope> =>
  Effect.flatMap(RedisKeyPrefix, (prefix) => watchVersion(configVersionKeys(prefix), onChange))
