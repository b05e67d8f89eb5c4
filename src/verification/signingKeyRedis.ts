/**
 * The signing-key store's Redis adapter, shared by every daemon: the keys
 * under one Redis key (`<prefix>signing-keys`, the file adapter's JSON),
 * changed by compare-and-set over what was read, tried again when another
 * daemon changed them in between.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import {
  decodeSigningKeys,
  type SigningKey,
  SigningKeyStore,
  SigningKeyStoreError,
  type SigningKeyStoreService
} from "./SigningKeyStore.ts"

/** KEYS: the keys; ARGV: the text read ('' for none), the new text. */
const compareAndSet = Redis.script((...args: [key: string, expected: string, next: string]) => args, {
  numberOfKeys: 1,
  lua: `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`
}).withReturnType<number>()

const makeRedis: Effect.Effect<SigningKeyStoreService, never, Redis.Redis> = Effect.gen(function* () {
  const redis = yield* Redis.Redis
  const key = redisKey(yield* RedisKeyPrefix, "signing-keys")
  const swap = redis.eval(compareAndSet)
  const decodeText = (text: string | null) => (text === null ? [] : decodeSigningKeys(text).keys)
  const read = redis.send<string | null>("GET", key)
  const failed = (operation: SigningKeyStoreError["operation"]) => (cause: unknown) =>
    new SigningKeyStoreError({ operation, cause })
  const attempt = (change: (keys: ReadonlyArray<SigningKey>) => ReadonlyArray<SigningKey>) =>
    Effect.gen(function* () {
      const text = yield* read
      const keys = change(decodeText(text))
      const swapped = yield* swap(key, text ?? "", `${JSON.stringify({ version: 1, keys })}\n`)
      return swapped === 1 ? keys : undefined
    })
  return {
    list: () =>
      Effect.flatMap(read, (text) => Effect.try(() => decodeText(text))).pipe(Effect.mapError(failed("list"))),
    update: (change) =>
      Effect.gen(function* () {
        for (let tries = 0; tries < 20; tries++) {
          const changed = yield* attempt(change)
          if (changed !== undefined) return changed
        }
        return yield* Effect.fail(new Error("the signing keys kept changing under this update"))
      }).pipe(Effect.mapError(failed("update")))
  }
})

/** The keys under one Redis key, shared by every daemon; a change is a compare-and-set over what was read. */
export const layerRedis: Layer.Layer<SigningKeyStore, never, RedisConnection> = Layer.effect(SigningKeyStore, makeRedis)
