/**
 * A secret generated once per deployment and kept in Redis
 * (`<prefix>secrets:<name>`), what `secretFile` is for one data directory:
 * the first daemon to ask stores one (`SET NX`), and every daemon then
 * reads that one, so webhook signatures, verification hashes and the
 * unique-email key agree across daemons and restarts. The store's identity
 * (`store/storeIdentity.ts`) is kept the same way, beside them.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import { RedisKeyPrefix, redisKey } from "./redis.ts"

export const secretKey = (prefix: string, name: string): string => redisKey(prefix, "secrets", name)

/** The secret `name`, created from `generate()` when there is none yet. */
export const redisSecret = (
  name: string,
  generate: () => string = () => randomBytes(32).toString("base64url")
): Effect.Effect<string, Redis.RedisError, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const key = secretKey(yield* RedisKeyPrefix, name)
    yield* redis.send("SET", key, generate(), "NX")
    const stored = yield* redis.send<string | null>("GET", key)
    if (stored === null) return yield* new Redis.RedisError({ cause: new Error(`the secret ${key} vanished`) })
    return stored
  })

/** The secret `name` as stored; undefined when there is none (nothing is made). */
export const readRedisSecret = (name: string): Effect.Effect<string | undefined, Redis.RedisError, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const stored = yield* redis.send<string | null>("GET", secretKey(yield* RedisKeyPrefix, name))
    return stored ?? undefined
  })
