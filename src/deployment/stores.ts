/**
 * The one place that chooses the stores, for every transport (the daemon,
 * `campusgate keys`, `review`, `migrate`): from `store` in campusgate.yaml
 * (read before the configuration is loaded, since the configuration is
 * loaded from them), every port gets the adapter of one store kind — the
 * data directory's files (one daemon, the embedded default), one Redis
 * server shared by every daemon and worker, or one PostgreSQL database
 * shared likewise (with `cache: redis`, rate-limit counters in Redis).
 * Nothing else chooses.
 *
 * A kind is one function naming each port's adapter layer
 * (`StoreAdapters`: `fileAdapters` here, `redisAdapters` in
 * `redisStores.ts`, `postgresAdapters` in `postgresStores.ts`); its
 * connection, if it has one, is opened once in `openAdapters` and given to
 * every adapter. PostgreSQL's schema is every slice's migrations
 * (`postgresMigrations`), applied when the connection opens. The shared
 * kinds' modules are imported when `openAdapters` opens one of them, so a
 * deployment on files loads neither client nor their adapters.
 *
 * With Redis or PostgreSQL, besides every store's adapter: the secrets
 * (`deployment/secrets.ts`) are generated once into the store unless the
 * environment sets them, `watch` tells when another daemon changed
 * resources or keys, and `configFeed` which ones (`store/redisConfigVersion.ts`,
 * `store/postgresConfigVersion.ts`).
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import type * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import type { Secrets } from "../config/environment.ts"
import { type ItemRef, parseItem } from "../config/itemChanges.ts"
import { type ConfigLocation, resolveDataDir } from "../config/loadConfig.ts"
import type { StoreSettings } from "../config/Settings.ts"
import { loadSettings } from "../config/settingsFile.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import type { JobQueue, JobQueueOptions } from "../jobs/JobQueue.ts"
import * as JobQueueLocal from "../jobs/JobQueueLocal.ts"
import type { JobStore } from "../jobs/JobStore.ts"
import * as JobStoreFiles from "../jobs/JobStoreFiles.ts"
import { ApiKeyStore } from "../keys/ApiKeyStore.ts"
import { OidcStore } from "../oidc/OidcStore.ts"
import { ResourceStore } from "../resources/ResourceStore.ts"
import { ReviewStore, type ReviewStoreError } from "../reviews/ReviewStore.ts"
import { EndedSessions } from "../sessions/EndedSessions.ts"
import { hashKeyFromSecret } from "../stats/hashKey.ts"
import { UsageStore, UsageStoreError } from "../stats/UsageStore.ts"
import type { PostgresOutage, PostgresSchemaError } from "../store/postgres.ts"
import type { StoreLost } from "../store/storeIdentity.ts"
import type { TlsMaterial } from "../store/tlsMaterial.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { VerificationStore, type VerificationStoreError } from "../verification/VerificationStore.ts"
import { deploymentSecrets, secretInDataDir } from "./secrets.ts"

/** The directories a deployment's stores use: the config directory's key file, the data directory. */
export interface StoreDirectories {
  readonly configDir: string
  readonly dataDir: string
}

/** A `store.tls` file that cannot be read. */
export class StoreTlsError extends Schema.TaggedError<StoreTlsError>()("StoreTlsError", {
  setting: Schema.String,
  path: Schema.String,
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `${this.setting} names ${this.path}, which cannot be read: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/**
 * Why a shared store's connection failed: it cannot be reached, (PostgreSQL)
 * its schema is not this build's, or its TLS files cannot be read.
 */
export type StoreConnectionError =
  | Redis.RedisError
  | PostgresOutage
  | PostgresSchemaError
  | SqlError
  | StoreTlsError
  | StoreLost

/** Whether daemons of this kind share their state (Redis, PostgreSQL), rather than each its own data directory. */
export const isSharedKind = (kind: StoreSettings["kind"]): boolean => kind !== "files"

/** The name of a secret the deployment generates (`deployment/secrets.ts`). */
export type SecretName = keyof typeof deploymentSecrets

/**
 * Every port's adapter of one store kind, as a layer that needs `R` (the
 * kind's connection; nothing for files), with the secrets and the watch
 * that go with the kind.
 */
export interface StoreAdapters<R> {
  readonly resources: Layer.Layer<ResourceStore, never, R>
  readonly keys: Layer.Layer<ApiKeyStore, never, R>
  /** The institution review queue and its decisions. */
  readonly reviews: Layer.Layer<ReviewStore, ReviewStoreError, R>
  readonly usage: Layer.Layer<UsageStore, UsageStoreError, R>
  /** The job queue with its store (files: job inputs and results in the data directory; shared kinds: in the store, with copies in each daemon's data directory). */
  readonly jobs: (options: JobQueueOptions) => Layer.Layer<JobQueue | JobStore, never, R>
  /** The job store alone, without a queue running jobs (what `backup`, `restore` and `migrate` copy through). */
  readonly jobStore: Layer.Layer<JobStore, never, R>
  readonly verifications: Layer.Layer<VerificationStore, VerificationStoreError, R>
  readonly signingKeys: Layer.Layer<SigningKeyStore, never, R>
  /** The answers to requests sent with an Idempotency-Key. */
  readonly idempotency: Layer.Layer<IdempotencyStore, never, R>
  /** Console sessions ended by signing out. */
  readonly endedSessions: Layer.Layer<EndedSessions, StoreConnectionError, R>
  /** The OpenID Connect provider's sessions, grants, codes and tokens. */
  readonly oidc: Layer.Layer<OidcStore, never, R>
  /** Where rate-limit counters live; undefined: this process's memory. */
  readonly rateLimits: Layer.Layer<RateLimiter.RateLimiterStore, never, R> | undefined
  /** A generated secret: the environment's, else the kind's, made on first use. */
  readonly secret: (which: SecretName, secrets: Secrets) => Effect.Effect<string, StoreConnectionError, R>
  /** The key of the unique-email hash (made on first use: statistics may be off). */
  readonly statsKey: (secrets: Secrets) => Effect.Effect<HashKey, UsageStoreError | StoreConnectionError, R>
  /** Runs `reload` whenever another daemon changed what feeds the configuration (nothing with files). */
  readonly watch: (reload: Effect.Effect<void, unknown>) => Effect.Effect<void, never, R | Scope.Scope>
  /** The version of what feeds the configuration, which other daemons bump (undefined with files: no other writer). */
  readonly configVersion: Effect.Effect<string | undefined, StoreConnectionError, R> | undefined
  /** The change feed: the version now and the items (`targetGroup:<id>`) changed after a version; undefined items: a gap. */
  readonly configChanges:
    | ((
        since: string
      ) => Effect.Effect<
        { readonly version: string; readonly items: ReadonlyArray<string> | undefined },
        StoreConnectionError,
        R
      >)
    | undefined
}

/** The data directory's files: one daemon, the embedded default. */
export const fileAdapters = ({ configDir, dataDir }: StoreDirectories): StoreAdapters<never> => ({
  resources: ResourceStore.layerFiles(dataDir),
  keys: ApiKeyStore.layerFiles({ configDir, dataDir }),
  reviews: ReviewStore.layerFiles(dataDir),
  usage: UsageStore.layerFiles(dataDir),
  jobs: (options) => JobQueueLocal.layer(options).pipe(Layer.provideMerge(JobStoreFiles.layerFiles(dataDir))),
  jobStore: JobStoreFiles.layerFiles(dataDir),
  verifications: VerificationStore.layerFiles(dataDir),
  signingKeys: SigningKeyStore.layerFiles(dataDir),
  idempotency: IdempotencyStore.layerFiles(dataDir),
  endedSessions: EndedSessions.layerFiles(dataDir),
  oidc: OidcStore.layerFiles(dataDir),
  rateLimits: undefined,
  secret: (which, secrets) => Effect.sync(() => secretInDataDir(deploymentSecrets[which], dataDir, secrets)),
  statsKey: (secrets) =>
    Effect.try({
      try: () => hashKeyFromSecret(secretInDataDir(deploymentSecrets.statsHashKey, dataDir, secrets)),
      catch: (cause) => new UsageStoreError({ operation: "load", cause })
    }),
  watch: () => Effect.void,
  configVersion: undefined,
  configChanges: undefined
})

/** Every adapter of a kind with its connection given: layers that need nothing more. */
export const withConnection = <R>(adapters: StoreAdapters<R>, connection: Context.Context<R>): StoreAdapters<never> => {
  const given = Layer.provide(Layer.succeedContext(connection))
  const within = <A, E>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, connection)
  return {
    resources: given(adapters.resources),
    keys: given(adapters.keys),
    reviews: given(adapters.reviews),
    usage: given(adapters.usage),
    jobs: (options) => given(adapters.jobs(options)),
    jobStore: given(adapters.jobStore),
    verifications: given(adapters.verifications),
    signingKeys: given(adapters.signingKeys),
    idempotency: given(adapters.idempotency),
    endedSessions: given(adapters.endedSessions),
    oidc: given(adapters.oidc),
    rateLimits: adapters.rateLimits === undefined ? undefined : given(adapters.rateLimits),
    secret: (which, secrets) => within(adapters.secret(which, secrets)),
    statsKey: (secrets) => within(adapters.statsKey(secrets)),
    watch: (reload) => Effect.provide(adapters.watch(reload), connection),
    configVersion: adapters.configVersion === undefined ? undefined : within(adapters.configVersion),
    configChanges:
      adapters.configChanges === undefined
        ? undefined
        : (since) => within((adapters.configChanges as NonNullable<typeof adapters.configChanges>)(since))
  }
}

/** The `store` settings of a config directory (with CAMPUSGATE_REDIS_URL, CAMPUSGATE_DATABASE_URL), before the configuration is loaded. */
export const storeSettingsOf = (location: ConfigLocation): StoreSettings =>
  loadSettings(resolve(location.configDir), location.env ?? process.env, []).settings.store

/** `store.tls`'s files, read from the config directory; undefined when none is set. */
export const tlsMaterialOf = (
  tls: StoreSettings["tls"],
  configDir: string
): Effect.Effect<TlsMaterial | undefined, StoreTlsError> =>
  Effect.gen(function* () {
    if (tls === undefined) return undefined
    const read = (setting: string, file: string | undefined) =>
      file === undefined
        ? Effect.succeed(undefined)
        : Effect.try({
            try: () => readFileSync(resolve(configDir, file), "utf8"),
            catch: (cause) => new StoreTlsError({ setting: `store.tls.${setting}`, path: file, cause })
          })
    return {
      ca: yield* read("caFile", tls.caFile),
      cert: yield* read("certFile", tls.certFile),
      key: yield* read("keyFile", tls.keyFile)
    }
  })

/**
 * The adapters' watch, each change acted on only once the store is seen to
 * be this deployment's: a store emptied under the daemons bumps no
 * version, but a poll seeing its version gone must not reload a
 * configuration without the store's resources and keys.
 */
export const watchOnlyOwnStore = (
  adapters: StoreAdapters<never>,
  isOwn: Effect.Effect<boolean>
): StoreAdapters<never> => ({
  ...adapters,
  watch: (reload) => adapters.watch(Effect.flatMap(isOwn, (own) => (own ? reload : Effect.void)))
})

/** A store kind's adapters, given their connection and open. */
export interface OpenedAdapters {
  readonly kind: StoreSettings["kind"]
  readonly adapters: StoreAdapters<never>
  /** Why the shared store is held as lost (`store/storeIdentity.ts`); undefined while it is not, and with files. */
  readonly heldFor: () => string | undefined
}

/**
 * The store kind `location`'s settings name, its adapters given their
 * connection, open for the scope. A shared store's identity is checked
 * first (refused when lost), and, with `watchIdentity` (the daemon),
 * watched while the scope lasts.
 */
export const openAdapters = (
  location: ConfigLocation,
  watchIdentityOf = false
): Effect.Effect<OpenedAdapters, StoreConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = storeSettingsOf(location)
    const directories = { configDir: resolve(location.configDir), dataDir: resolveDataDir(location) }
    const tls = yield* tlsMaterialOf(settings.tls, directories.configDir)
    if (settings.kind === "redis" && settings.url !== undefined) {
      const { openRedisAdapters } = yield* Effect.promise(() => import("./redisStores.ts"))
      return yield* openRedisAdapters({ ...settings, url: settings.url }, directories, tls, watchIdentityOf)
    }
    if (settings.kind === "postgres" && settings.url !== undefined) {
      const { openPostgresAdapters } = yield* Effect.promise(() => import("./postgresStores.ts"))
      return yield* openPostgresAdapters({ ...settings, url: settings.url }, directories, tls, watchIdentityOf)
    }
    return { kind: "files", adapters: fileAdapters(directories), heldFor: () => undefined }
  })

/**
 * One port's store of the deployment, open for the scope: what a command
 * works on (`campusgate keys`, `review`), where every daemon reads it.
 */
export const openStore = <I, S, E>(
  location: ConfigLocation,
  port: Context.Key<I, S>,
  adapterOf: (adapters: StoreAdapters<never>) => Layer.Layer<I, E>
): Effect.Effect<{ readonly kind: StoreSettings["kind"]; readonly store: S }, E | StoreConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    const { kind, adapters } = yield* openAdapters(location)
    return { kind, store: Context.get(yield* Layer.build(adapterOf(adapters)), port) }
  })

/** The daemon's stores: the adapters, and the services and secrets it needs before its layers are built. */
export interface Stores {
  readonly kind: StoreSettings["kind"]
  readonly resources: ResourceStore["Service"]
  readonly keys: ApiKeyStore["Service"]
  /** The institution review queue and its decisions. */
  readonly reviews: ReviewStore["Service"]
  readonly usage: Layer.Layer<UsageStore, UsageStoreError>
  /** The key of the unique-email hash (made on first use: statistics may be off). */
  readonly statsKey: Effect.Effect<HashKey, UsageStoreError | StoreConnectionError>
  /** Where rate-limit counters live; undefined: this process's memory. */
  readonly rateLimits: Layer.Layer<RateLimiter.RateLimiterStore> | undefined
  readonly jobs: (options: JobQueueOptions) => Layer.Layer<JobQueue | JobStore>
  readonly verifications: Layer.Layer<VerificationStore, VerificationStoreError>
  readonly signingKeys: Layer.Layer<SigningKeyStore>
  /** The answers to requests sent with an Idempotency-Key. */
  readonly idempotency: Layer.Layer<IdempotencyStore>
  /** The OpenID Connect provider's state. */
  readonly oidc: Layer.Layer<OidcStore>
  readonly webhookSecret: string
  readonly verificationSecret: string
  /** The key of console sessions' signatures (`consoleSession.ts`). */
  readonly consoleSecret: string
  /** Console sessions ended by signing out. */
  readonly endedSessions: EndedSessions["Service"]
  /** Runs `reload` whenever another daemon changed what feeds the configuration (nothing with files). */
  readonly watch: (reload: Effect.Effect<void, unknown>) => Effect.Effect<void, never, Scope.Scope>
  /** The version of what feeds the configuration, which other daemons bump (undefined with files). */
  readonly configVersion: Effect.Effect<string | undefined, StoreConnectionError> | undefined
  /**
   * The change feed other daemons' writes fill (undefined with files): the
   * version now, and which items changed after a version, or undefined
   * items where the feed cannot tell (a gap: reload in full).
   */
  readonly configFeed:
    | {
        readonly version: Effect.Effect<string | undefined, StoreConnectionError>
        changesSince(
          since: string
        ): Effect.Effect<
          { readonly version: string; readonly items: ReadonlyArray<ItemRef> | undefined },
          StoreConnectionError
        >
      }
    | undefined
  /** Why the shared store is held as lost (`store/storeIdentity.ts`); undefined while it is not, and with files. */
  readonly heldFor: () => string | undefined
}

/** The stores `location`'s settings name, open for the scope, as the daemon runs on them. */
export const openStores = (
  location: ConfigLocation,
  secrets: Secrets
): Effect.Effect<Stores, StoreConnectionError | ReviewStoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const { kind, adapters, heldFor } = yield* openAdapters(location, true)
    // What the daemon reads before its layers are built: the configuration's stores and the sessions' check.
    const opened = yield* Layer.build(
      Layer.mergeAll(adapters.resources, adapters.keys, adapters.reviews, adapters.endedSessions)
    )
    return {
      kind,
      resources: Context.get(opened, ResourceStore),
      keys: Context.get(opened, ApiKeyStore),
      reviews: Context.get(opened, ReviewStore),
      usage: adapters.usage,
      statsKey: adapters.statsKey(secrets),
      rateLimits: adapters.rateLimits,
      jobs: adapters.jobs,
      verifications: adapters.verifications,
      signingKeys: adapters.signingKeys,
      idempotency: adapters.idempotency,
      oidc: adapters.oidc,
      webhookSecret: yield* adapters.secret("webhook", secrets),
      verificationSecret: yield* adapters.secret("verification", secrets),
      consoleSecret: yield* adapters.secret("console", secrets),
      endedSessions: Context.get(opened, EndedSessions),
      watch: adapters.watch,
      configVersion: adapters.configVersion,
      configFeed: feedOf(adapters),
      heldFor
    }
  })

/** The kind's change feed, its items read as items (one that is no item is a gap). */
const feedOf = (adapters: StoreAdapters<never>): Stores["configFeed"] => {
  const { configVersion, configChanges } = adapters
  if (configVersion === undefined || configChanges === undefined) return undefined
  return {
    version: configVersion,
    changesSince: (since) =>
      Effect.map(configChanges(since), ({ version, items }) => {
        const parsed = items?.map(parseItem)
        return {
          version,
          items: parsed?.every((item) => item !== undefined) === true ? (parsed as ReadonlyArray<ItemRef>) : undefined
        }
      })
  }
}
