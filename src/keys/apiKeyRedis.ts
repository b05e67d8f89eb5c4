/**
 * The API-key store's Redis adapter. Keys defined in the config directory
 * stay in its `api-keys.yaml` (kept in git, deployed to every daemon); keys
 * the daemon or `campusgate keys` make are held in Redis
 * (`<prefix>api-keys`, id → record as JSON, hashes only), as are
 * revocations: a config-directory key revoked through the store is
 * recorded in `<prefix>api-keys:revoked` and applied to that file's
 * document when it is handed to the config loader, so every daemon refuses
 * it without waiting for a deployment. Every change bumps the configuration
 * version and records the key in the change feed in the same script
 * (`store/redisConfigVersion.ts`), so every daemon applies it within a second.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type { ApiKeyId, ApiKeyRecord } from "../domain/ApiKey.ts"
import { hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { announceItemLua, configVersionKeys } from "../store/redisConfigVersion.ts"
import { ApiKeyStore, type ApiKeyStoreService, ApiKeyStoreUnavailable, ApiKeysError } from "./ApiKeyStore.ts"
import { ApiKeyAlreadyRevoked, ApiKeyNotFound, addApiKeyRecord, type KeyDirectories } from "./apiKeyFiles.ts"
import { asApiKeysError, byCreation, sharedKeyReads } from "./configKeyRevocations.ts"

/** KEYS: records, revoked, version, change feed; ARGV: channel, operation, id, value. */
const change = Redis.script(
  (
    ...args: [
      records: string,
      revoked: string,
      version: string,
      changes: string,
      channel: string,
      op: string,
      id: string,
      value: string
    ]
  ) => args,
  {
    numberOfKeys: 4,
    lua: `
local op, id, value = ARGV[2], ARGV[3], ARGV[4]
if op == 'add' then
  if redis.call('HSETNX', KEYS[1], id, value) == 0 then return 0 end
elseif op == 'add-first' then
  if redis.call('HLEN', KEYS[1]) > 0 then return 0 end
  redis.call('HSET', KEYS[1], id, value)
elseif op == 'revoke-config' then
  if redis.call('HSETNX', KEYS[2], id, value) == 0 then return 0 end
else
  redis.call('HSET', KEYS[1], id, value)
end
${announceItemLua({ version: "KEYS[3]", changes: "KEYS[4]", channel: "ARGV[1]", item: "'apiKey:' .. id" })}
return 1`
  }
).withReturnType<number>()

const unavailable = (error: { readonly cause: unknown }) =>
  new ApiKeysError({ reason: new ApiKeyStoreUnavailable({ cause: error.cause }) })

/** The adapter over `configDir`'s key file and the Redis connection in force. */
const makeRedisApiKeyStore = (
  configDir: string,
  isWritable?: (directory: string) => boolean
): Effect.Effect<ApiKeyStoreService, never, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const recordsKey = redisKey(prefix, "api-keys")
    const revokedKey = redisKey(prefix, "api-keys", "revoked")
    const { version, channel, changes } = configVersionKeys(prefix)
    const location = `redis:${recordsKey}`
    const _configOnly: KeyDirectories = { configDir: resolve(configDir), dataDir: resolve(configDir) }
    const run = redis.eval(change)
    const send = (op: string, id: string, value: string) =>
      run(recordsKey, revokedKey, version, changes, channel, op, id, value).pipe(Effect.mapError(unavailable))

    const stored = Effect.map(redis.send("HGETALL", recordsKey).pipe(Effect.mapError(unavailable)), (reply) =>
      [...hashEntries(reply).values()].map((json) => JSON.parse(json) as ApiKeyRecord).sort(byCreation)
    )
    const revocations = Effect.map(redis.send("HGETALL", revokedKey).pipe(Effect.mapError(unavailable)), (reply) =>
      hashEntries(reply)
    )

    const { configOnly, configRecords, documents, list } = sharedKeyReads({ configDir, location, stored, revocations })

    const addToRedis = (record: ApiKeyRecord, op: "add" | "add-first") =>
      Effect.map(send(op, record.id, JSON.stringify(record)), (added) => added === 1)

    return {
      documents,
      list,
      add: (record, preferConfig) =>
        Effect.gen(function* () {
          if (preferConfig && (isWritable ?? (() => true))(resolve(configDir))) {
            const written = yield* Effect.result(
              Effect.try({ try: () => addApiKeyRecord(configOnly, record, true, isWritable), catch: asApiKeysError })
            )
            if (written._tag === "Success") return written.success
          }
          if (!(yield* addToRedis(record, "add"))) {
            return yield* Effect.die(new Error(`an API key ${record.id} is already stored`))
          }
          return { location: "data" as const, file: location }
        }),
      addFirst: (record) =>
        Effect.gen(function* () {
          if ((yield* configRecords).length > 0) return false
          return yield* addToRedis(record, "add-first")
        }),
      revoke: (id, revokedAt) =>
        Effect.gen(function* () {
          const inConfig = (yield* configRecords).find((record) => record.id === id)
          const held = (yield* stored).find((record) => record.id === id)
          if (inConfig === undefined && held === undefined) return yield* asApiKeysError(new ApiKeyNotFound({ id }))
          const files: Array<string> = []
          if (held !== undefined && held.revokedAt === undefined) {
            yield* send("revoke", id, JSON.stringify({ ...held, revokedAt }))
            files.push(location)
          }
          if (inConfig !== undefined && inConfig.revokedAt === undefined) {
            if ((yield* send("revoke-config", id, revokedAt)) === 1) files.push(`${location}:revoked`)
          }
          if (files.length === 0) {
            const at = held?.revokedAt ?? inConfig?.revokedAt ?? (yield* revocations).get(id) ?? ""
            return yield* asApiKeysError(new ApiKeyAlreadyRevoked({ id, revokedAt: at }))
          }
          return { id: id as ApiKeyId, revokedAt, files }
        })
    }
  })

/** The config directory's `api-keys.yaml` (git) with keys and revocations held in Redis. */
export const layerRedis = (
  configDir: string,
  isWritable?: (directory: string) => boolean
): Layer.Layer<ApiKeyStore, never, RedisConnection> =>
  Layer.effect(
    ApiKeyStore,
    Effect.suspend(() => makeRedisApiKeyStore(configDir, isWritable))
  )
