/**
 * The Redis store kind (`deployment/stores.ts` chooses it): every port's
 * Redis adapter, the deployment's secrets kept in Redis, and the
 * connection opened with the store's identity checked. Its own module,
 * imported by `stores.ts` only when campusgate.yaml names Redis (as a
 * store, or PostgreSQL's `cache`), so a deployment on files never loads
 * the Redis client (~80 ms of every start, `node --cpu-prof`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import type { Secrets } from "../config/environment.ts"
import type { StoreSettings } from "../config/Settings.ts"
import * as IdempotencyRedis from "../idempotency/idempotencyRedis.ts"
import * as JobQueueRedis from "../jobs/JobQueueRedis.ts"
import * as JobStoreRedis from "../jobs/JobStoreRedis.ts"
import * as ApiKeyRedis from "../keys/apiKeyRedis.ts"
import * as OidcRedis from "../oidc/oidcRedis.ts"
import * as ResourceRedis from "../resources/resourceRedis.ts"
import * as ReviewRedis from "../reviews/reviewRedis.ts"
import * as EndedSessionsRedis from "../sessions/endedSessionsRedis.ts"
import { hashKeyFromSecret } from "../stats/hashKey.ts"
import * as UsageRedis from "../stats/usageRedis.ts"
import { RedisBreaker, type RedisConnection, RedisKeyPrefix, redisStoreLayer } from "../store/redis.ts"
import { readConfigChanges, readConfigVersion, watchConfigVersion } from "../store/redisConfigVersion.ts"
import { redisSecret } from "../store/redisSecret.ts"
import type { StoreLost } from "../store/storeIdentity.ts"
import type { TlsMaterial } from "../store/tlsMaterial.ts"
import * as SigningKeyRedis from "../verification/signingKeyRedis.ts"
import * as VerificationRedis from "../verification/verificationRedis.ts"
import { configuredValue, type DeploymentSecret, deploymentSecrets } from "./secrets.ts"
import { guardIdentity, redisIdentity } from "./storeIdentity.ts"
import {
  type OpenedAdapters,
  type StoreAdapters,
  type StoreDirectories,
  watchOnlyOwnStore,
  withConnection
} from "./stores.ts"

/** The secret as daemons sharing Redis have it: the environment's, else the one in Redis, created on first use. */
export const secretInRedis = (
  secret: DeploymentSecret,
  secrets: Secrets
): Effect.Effect<string, Redis.RedisError, Redis.Redis> => {
  const configured = configuredValue(secret, secrets)
  return configured === undefined ? redisSecret(secret.name, secret.generate) : Effect.succeed(configured)
}

/** Effect's Redis store of rate-limit counters, under the deployment's prefix (`<prefix>ratelimit:<bucket>:<key id>`). */
export const rateLimiterStoreRedis: Layer.Layer<RateLimiter.RateLimiterStore, never, RedisConnection> = Layer.unwrap(
  Effect.map(Effect.service(RedisKeyPrefix), (prefix) => RateLimiter.layerStoreRedis({ prefix: `${prefix}ratelimit:` }))
)

/** One Redis server shared by every daemon; job inputs and results stay in `dataDir`, which they share. */
export const redisAdapters = ({ configDir, dataDir }: StoreDirectories): StoreAdapters<RedisConnection> => ({
  resources: ResourceRedis.layerRedis,
  keys: ApiKeyRedis.layerRedis(configDir),
  reviews: ReviewRedis.layerRedis,
  usage: UsageRedis.layerRedis,
  jobs: (options) => JobQueueRedis.layerRedis({ ...options, dataDir }),
  jobStore: JobStoreRedis.layerRedis(dataDir),
  verifications: VerificationRedis.layerRedis,
  signingKeys: SigningKeyRedis.layerRedis,
  idempotency: IdempotencyRedis.layerRedis,
  endedSessions: EndedSessionsRedis.layerRedis,
  oidc: OidcRedis.layerRedis,
  rateLimits: rateLimiterStoreRedis,
  secret: (which, secrets) => secretInRedis(deploymentSecrets[which], secrets),
  statsKey: (secrets) => Effect.map(secretInRedis(deploymentSecrets.statsHashKey, secrets), hashKeyFromSecret),
  watch: watchConfigVersion,
  configVersion: readConfigVersion,
  configChanges: readConfigChanges
})

/** The Redis store `settings` name, its identity checked (and, with `watchIdentityOf`, watched), open for the scope. */
export const openRedisAdapters = (
  settings: StoreSettings & { readonly url: string },
  directories: StoreDirectories,
  tls: TlsMaterial | undefined,
  watchIdentityOf: boolean
): Effect.Effect<OpenedAdapters, Redis.RedisError | StoreLost, Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* Layer.build(redisStoreLayer({ url: settings.url, keyPrefix: settings.keyPrefix, tls }))
    const isOwn = yield* guardIdentity(redisIdentity(settings, directories.dataDir, connection), watchIdentityOf)
    return {
      kind: "redis",
      adapters: watchOnlyOwnStore(withConnection(redisAdapters(directories), connection), isOwn),
      heldFor: Context.get(connection, RedisBreaker).heldFor
    }
  })

/** Rate-limit counters in the Redis server at `url` (PostgreSQL's `cache: redis`), its connection open for the scope. */
export const redisRateLimits = (
  url: string,
  keyPrefix: string,
  tls: TlsMaterial | undefined
): Effect.Effect<Layer.Layer<RateLimiter.RateLimiterStore>, Redis.RedisError, Scope.Scope> =>
  Effect.map(Layer.build(redisStoreLayer({ url, keyPrefix, tls })), (cache) =>
    rateLimiterStoreRedis.pipe(Layer.provide(Layer.succeedContext(cache)))
  )
