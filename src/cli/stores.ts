/**
 * The stores a command works on, as the daemon would open them
 * (`server/stores.ts`): the data directory's files, or the Redis server
 * campusgate.yaml (or CAMPUSGATE_REDIS_URL) names, so `campusgate keys`
 * creates and revokes keys (and `campusgate review` decides) where every
 * daemon reads them.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ApiKeyStore, type ApiKeyStoreService } from "../keys/ApiKeyStore.ts"
import type { KeyDirectories } from "../keys/apiKeyFiles.ts"
import { makeRedisApiKeyStore } from "../keys/apiKeyRedis.ts"
import { ReviewStore } from "../reviews/ReviewStore.ts"
import { makeRedisReviewStore } from "../reviews/reviewRedis.ts"
import { storeSettingsOf } from "../server/stores.ts"
import { redisStoreLayer } from "../store/redis.ts"
import { SigningKeyStore, type SigningKeyStoreService } from "../verification/SigningKeyStore.ts"

/** The Redis connection for the scope when the config directory's store is Redis; undefined with files. */
const redisFor = (configDir: string) =>
  Effect.gen(function* () {
    const settings = storeSettingsOf({ configDir })
    if (settings.kind !== "redis" || settings.url === undefined) return undefined
    return yield* Layer.build(redisStoreLayer({ url: settings.url, keyPrefix: settings.keyPrefix }))
  })

/** The API-key store of `directories`' deployment. */
export const keyStoreFor = (directories: KeyDirectories) =>
  Effect.gen(function* () {
    const redis = yield* redisFor(directories.configDir)
    if (redis === undefined) return ApiKeyStore.makeFiles(directories) as ApiKeyStoreService
    return yield* Effect.provide(makeRedisApiKeyStore(resolve(directories.configDir)), redis)
  })

/** The signing-key store of the deployment. */
export const signingKeyStoreFor = (
  configDir: string,
  dataDir: string
): Effect.Effect<SigningKeyStoreService, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const redis = yield* redisFor(configDir)
    if (redis === undefined) return SigningKeyStore.makeFiles(dataDir)
    return yield* Effect.provide(SigningKeyStore.makeRedis, redis)
  })

/** The review store of the deployment (the data directory's `reviews/`, or Redis). */
export const reviewStoreFor = (
  configDir: string,
  dataDir: string
): Effect.Effect<{ readonly store: ReviewStore["Service"]; readonly redis: boolean }, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const redis = yield* redisFor(configDir)
    if (redis === undefined) return { store: yield* ReviewStore.makeFiles(dataDir), redis: false }
    return { store: ReviewStore.of(yield* Effect.provide(makeRedisReviewStore, redis)), redis: true }
  })
