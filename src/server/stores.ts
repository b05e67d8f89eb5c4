/**
 * Which stores the daemon runs on, from `store` in campusgate.yaml (read
 * before the configuration is loaded, since the configuration is loaded
 * from them): the data directory's files (one daemon, the embedded
 * default) or one Redis server shared by every daemon and worker. Every
 * other module asks this one for its store; nothing else chooses.
 *
 * With Redis, besides every store's Redis adapter: the secrets
 * (`server/deploymentSecrets.ts`) are generated once into Redis unless
 * the environment sets them, and `watch` reloads the configuration when
 * another daemon changed resources or keys (`store/redisConfigVersion.ts`).
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import type { Secrets } from "../config/environment.ts"
import { type ConfigLocation, resolveDataDir } from "../config/loadConfig.ts"
import type { StoreSettings } from "../config/Settings.ts"
import { loadSettings } from "../config/settingsFile.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { layerIdempotencyRedis } from "../idempotency/idempotencyRedis.ts"
import type { JobQueue, JobQueueOptions } from "../jobs/JobQueue.ts"
import * as JobQueueLocal from "../jobs/JobQueueLocal.ts"
import * as JobQueueRedis from "../jobs/JobQueueRedis.ts"
import type { JobStore } from "../jobs/JobStore.ts"
import * as JobStoreFiles from "../jobs/JobStoreFiles.ts"
import { ApiKeyStore, type ApiKeyStoreService } from "../keys/ApiKeyStore.ts"
import { makeRedisApiKeyStore } from "../keys/apiKeyRedis.ts"
import { makeFileResourceStore, ResourceStore } from "../resources/ResourceStore.ts"
import { makeRedisResourceStore } from "../resources/resourceRedis.ts"
import { ReviewStore, type ReviewStoreError } from "../reviews/ReviewStore.ts"
import { makeRedisReviewStore } from "../reviews/reviewRedis.ts"
import { EndedSessions, type EndedSessionsService } from "../sessions/EndedSessions.ts"
import { makeRedisEndedSessions } from "../sessions/endedSessionsRedis.ts"
import { hashKeyFromSecret } from "../stats/hashKey.ts"
import { UsageStore, UsageStoreError } from "../stats/UsageStore.ts"
import { layerRedis as usageStoreRedis } from "../stats/usageRedis.ts"
import { redisStoreLayer } from "../store/redis.ts"
import { watchConfigVersion } from "../store/redisConfigVersion.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { VerificationStore, type VerificationStoreError } from "../verification/VerificationStore.ts"
import { layerRedis as verificationStoreRedis } from "../verification/verificationRedis.ts"
import { deploymentSecrets, secretInDataDir, secretInRedis } from "./deploymentSecrets.ts"
import { rateLimiterStoreRedis } from "./rateLimit.ts"

export interface Stores {
  readonly kind: StoreSettings["kind"]
  readonly resources: ResourceStore["Service"]
  readonly keys: ApiKeyStoreService
  /** The institution review queue and its decisions. */
  readonly reviews: ReviewStore["Service"]
  readonly usage: Layer.Layer<UsageStore, UsageStoreError>
  /** The key of the unique-email hash (made on first use: statistics may be off). */
  readonly statsKey: Effect.Effect<HashKey, UsageStoreError | Redis.RedisError>
  /** Where rate-limit counters live; undefined: this process's memory. */
  readonly rateLimits: Layer.Layer<RateLimiter.RateLimiterStore> | undefined
  readonly jobs: (options: JobQueueOptions) => Layer.Layer<JobQueue | JobStore>
  readonly verifications: Layer.Layer<VerificationStore, VerificationStoreError>
  readonly signingKeys: Layer.Layer<SigningKeyStore>
  /** The answers to requests sent with an Idempotency-Key. */
  readonly idempotency: Layer.Layer<IdempotencyStore>
  readonly webhookSecret: string
  readonly verificationSecret: string
  /** The key of console sessions' signatures (`consoleSession.ts`). */
  readonly consoleSecret: string
  /** Console sessions ended by signing out. */
  readonly endedSessions: EndedSessionsService
  /** Runs `reload` whenever another daemon changed what feeds the configuration (nothing with files). */
  readonly watch: (reload: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

/** The `store` settings of a config directory (with CAMPUSGATE_REDIS_URL), before the configuration is loaded. */
export const storeSettingsOf = (location: ConfigLocation): StoreSettings =>
  loadSettings(resolve(location.configDir), location.env ?? process.env, []).settings.store

/** The data directory's files: one daemon. */
const fileStores = (
  configDir: string,
  dataDir: string,
  secrets: Secrets
): Effect.Effect<Stores, UsageStoreError | ReviewStoreError> =>
  Effect.gen(function* () {
    const statsKey = Effect.try({
      try: () => hashKeyFromSecret(secretInDataDir(deploymentSecrets.statsHashKey, dataDir, secrets)),
      catch: (cause) => new UsageStoreError({ operation: "load", cause })
    })
    return yield* Effect.succeed<Stores>({
      kind: "files",
      resources: makeFileResourceStore(dataDir),
      keys: ApiKeyStore.makeFiles({ configDir, dataDir }),
      reviews: yield* ReviewStore.makeFiles(dataDir),
      usage: UsageStore.layerFile(dataDir),
      statsKey,
      rateLimits: undefined,
      jobs: (options) => JobQueueLocal.layer(options).pipe(Layer.provideMerge(JobStoreFiles.layerFiles(dataDir))),
      verifications: VerificationStore.layerFiles(dataDir),
      signingKeys: SigningKeyStore.layerFiles(dataDir),
      idempotency: IdempotencyStore.layerFiles(dataDir),
      webhookSecret: secretInDataDir(deploymentSecrets.webhook, dataDir, secrets),
      verificationSecret: secretInDataDir(deploymentSecrets.verification, dataDir, secrets),
      consoleSecret: secretInDataDir(deploymentSecrets.console, dataDir, secrets),
      endedSessions: EndedSessions.makeFiles(dataDir),
      watch: () => Effect.void
    })
  })

/** One Redis server shared by every daemon; job inputs and results stay in `dataDir`, which they share. */
const redisStores = (
  configDir: string,
  dataDir: string,
  secrets: Secrets,
  settings: StoreSettings
): Effect.Effect<Stores, Redis.RedisError, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(redisStoreLayer({ url: settings.url!, keyPrefix: settings.keyPrefix }))
    const shared = Layer.succeedContext(context)
    const within = <A, E>(effect: Effect.Effect<A, E, Redis.Redis>) => Effect.provide(effect, context)
    const secret = (which: keyof typeof deploymentSecrets) => within(secretInRedis(deploymentSecrets[which], secrets))
    return {
      kind: "redis",
      resources: ResourceStore.of(yield* within(makeRedisResourceStore)),
      keys: yield* within(makeRedisApiKeyStore(configDir)),
      reviews: ReviewStore.of(yield* within(makeRedisReviewStore)),
      usage: usageStoreRedis.pipe(Layer.provide(shared)),
      statsKey: Effect.map(secret("statsHashKey"), hashKeyFromSecret),
      rateLimits: rateLimiterStoreRedis.pipe(Layer.provide(shared)),
      jobs: (options) => JobQueueRedis.layerRedis({ ...options, dataDir }).pipe(Layer.provide(shared)),
      verifications: verificationStoreRedis.pipe(Layer.provide(shared)),
      signingKeys: SigningKeyStore.layerRedis.pipe(Layer.provide(shared)),
      idempotency: layerIdempotencyRedis.pipe(Layer.provide(shared)),
      webhookSecret: yield* secret("webhook"),
      verificationSecret: yield* secret("verification"),
      consoleSecret: yield* secret("console"),
      endedSessions: yield* Effect.provide(makeRedisEndedSessions, context),
      watch: (reload) => Effect.provide(watchConfigVersion(reload), context)
    } satisfies Stores
  })

/** The stores `location`'s settings name, open for the scope. */
export const openStores = (
  location: ConfigLocation,
  secrets: Secrets
): Effect.Effect<Stores, Redis.RedisError | UsageStoreError | ReviewStoreError, Scope.Scope> => {
  const settings = storeSettingsOf(location)
  const configDir = resolve(location.configDir)
  const dataDir = resolveDataDir(location)
  return settings.kind === "redis" && settings.url !== undefined
    ? redisStores(configDir, dataDir, secrets, settings)
    : fileStores(configDir, dataDir, secrets)
}
