/**
 * The PostgreSQL store kind (`deployment/stores.ts` chooses it): every
 * port's PostgreSQL adapter, the schema (every slice's migrations), the
 * deployment's secrets kept in the database, and the connection opened
 * with the store's identity checked (with `cache: redis`, rate-limit
 * counters in Redis, whose module loads only then). Its own module,
 * imported by `stores.ts` only when campusgate.yaml names PostgreSQL, so a
 * deployment on files never loads the PostgreSQL client.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Secrets } from "../config/environment.ts"
import type { StoreSettings } from "../config/Settings.ts"
import * as IdempotencyPostgres from "../idempotency/idempotencyPostgres.ts"
import * as JobQueuePostgres from "../jobs/JobQueuePostgres.ts"
import * as JobStorePostgres from "../jobs/JobStorePostgres.ts"
import * as ApiKeyPostgres from "../keys/apiKeyPostgres.ts"
import * as OidcPostgres from "../oidc/oidcPostgres.ts"
import * as ResourcePostgres from "../resources/resourcePostgres.ts"
import * as ReviewPostgres from "../reviews/reviewPostgres.ts"
import * as EndedSessionsPostgres from "../sessions/endedSessionsPostgres.ts"
import { hashKeyFromSecret } from "../stats/hashKey.ts"
import * as UsagePostgres from "../stats/usagePostgres.ts"
import {
  type Migration,
  type PgClient,
  PostgresBreaker,
  type PostgresConnection,
  type PostgresOutage,
  postgresStoreLayer
} from "../store/postgres.ts"
import * as PostgresConfigVersion from "../store/postgresConfigVersion.ts"
import * as PostgresSecret from "../store/postgresSecret.ts"
import * as RateLimiterPostgres from "../store/rateLimiterPostgres.ts"
import type { TlsMaterial } from "../store/tlsMaterial.ts"
import * as SigningKeyPostgres from "../verification/signingKeyPostgres.ts"
import * as VerificationPostgres from "../verification/verificationPostgres.ts"
import { configuredValue, type DeploymentSecret, deploymentSecrets } from "./secrets.ts"
import { guardIdentity, postgresIdentity } from "./storeIdentity.ts"
import {
  type OpenedAdapters,
  type StoreAdapters,
  type StoreConnectionError,
  type StoreDirectories,
  watchOnlyOwnStore,
  withConnection
} from "./stores.ts"

/** The secret as daemons sharing PostgreSQL have it: the environment's, else the one in the database, created on first use. */
export const secretInPostgres = (
  secret: DeploymentSecret,
  secrets: Secrets
): Effect.Effect<string, PostgresOutage, PgClient.PgClient | PostgresBreaker> => {
  const configured = configuredValue(secret, secrets)
  return configured === undefined
    ? PostgresSecret.postgresSecret(secret.name, secret.generate)
    : Effect.succeed(configured)
}

/** The PostgreSQL schema: every slice's migrations (each slice's ids its own, so their order across slices is free). */
export const postgresMigrations: ReadonlyArray<Migration> = [
  ...PostgresConfigVersion.migrations,
  ...PostgresSecret.migrations,
  ...ResourcePostgres.migrations,
  ...ApiKeyPostgres.migrations,
  ...ReviewPostgres.migrations,
  ...UsagePostgres.migrations,
  ...JobQueuePostgres.migrations,
  ...VerificationPostgres.migrations,
  ...SigningKeyPostgres.migrations,
  ...IdempotencyPostgres.migrations,
  ...EndedSessionsPostgres.migrations,
  ...OidcPostgres.migrations,
  ...RateLimiterPostgres.migrations
]

/**
 * One PostgreSQL database shared by every daemon, rate-limit counters
 * included (`cache: redis` moves them to Redis, in `openPostgresAdapters`);
 * job inputs and results stay in `dataDir`, which they share.
 */
export const postgresAdapters = ({ configDir, dataDir }: StoreDirectories): StoreAdapters<PostgresConnection> => ({
  resources: ResourcePostgres.layerPostgres,
  keys: ApiKeyPostgres.layerPostgres(configDir),
  reviews: ReviewPostgres.layerPostgres,
  usage: UsagePostgres.layerPostgres,
  jobs: (options) => JobQueuePostgres.layerPostgres({ ...options, dataDir }),
  jobStore: JobStorePostgres.layerPostgres(dataDir),
  verifications: VerificationPostgres.layerPostgres,
  signingKeys: SigningKeyPostgres.layerPostgres,
  idempotency: IdempotencyPostgres.layerPostgres,
  endedSessions: EndedSessionsPostgres.layerPostgres,
  oidc: OidcPostgres.layerPostgres,
  rateLimits: RateLimiterPostgres.layerPostgres,
  secret: (which, secrets) => secretInPostgres(deploymentSecrets[which], secrets),
  statsKey: (secrets) => Effect.map(secretInPostgres(deploymentSecrets.statsHashKey, secrets), hashKeyFromSecret),
  watch: PostgresConfigVersion.watchConfigVersion,
  configVersion: PostgresConfigVersion.readConfigVersion,
  configChanges: PostgresConfigVersion.readConfigChanges
})

/** The PostgreSQL store `settings` name, its identity checked (and, with `watchIdentityOf`, watched), open for the scope. */
export const openPostgresAdapters = (
  settings: StoreSettings & { readonly url: string },
  directories: StoreDirectories,
  tls: TlsMaterial | undefined,
  watchIdentityOf: boolean
): Effect.Effect<OpenedAdapters, StoreConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* Layer.build(
      postgresStoreLayer({ url: settings.url, migrations: postgresMigrations, tls })
    )
    const isOwn = yield* guardIdentity(postgresIdentity(settings, directories.dataDir, connection), watchIdentityOf)
    const adapters = watchOnlyOwnStore(withConnection(postgresAdapters(directories), connection), isOwn)
    const { heldFor } = Context.get(connection, PostgresBreaker)
    if (settings.cache !== "redis" || settings.cacheUrl === undefined) return { kind: "postgres", adapters, heldFor }
    // What may be lost (rate-limit counters) in Redis, the records in PostgreSQL.
    const { redisRateLimits } = yield* Effect.promise(() => import("./redisStores.ts"))
    const rateLimits = yield* redisRateLimits(settings.cacheUrl, settings.keyPrefix, tls)
    return { kind: "postgres", adapters: { ...adapters, rateLimits }, heldFor }
  })
