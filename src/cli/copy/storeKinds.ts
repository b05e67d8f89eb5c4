/**
 * A store of any kind opened for a copy (`campusgate migrate`, `backup`,
 * `restore`): its ports' adapters (`deployment/stores.ts`, the one place
 * that names them) with its connection given, and the few things a kind
 * does its own way — listing and setting every generated secret it holds
 * (not only the ones `deployment/secrets.ts` lists: a secret added later,
 * such as the store's identity, travels too), and putting jobs into its
 * shared queue. `where` names it for messages, its URL's password hidden.
 */
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { type ConfigLocation, resolveDataDir } from "../../config/loadConfig.ts"
import { postgresAdapters, postgresMigrations } from "../../deployment/postgresStores.ts"
import { redisAdapters } from "../../deployment/redisStores.ts"
import { deploymentSecrets } from "../../deployment/secrets.ts"
import {
  fileAdapters,
  type StoreAdapters,
  type StoreConnectionError,
  type StoreDirectories,
  storeSettingsOf,
  tlsMaterialOf,
  withConnection
} from "../../deployment/stores.ts"
import type { Job } from "../../jobs/Job.ts"
import * as JobQueuePostgres from "../../jobs/JobQueuePostgres.ts"
import { importJobs } from "../../jobs/jobQueueKeys.ts"
import { redactCredentials } from "../../observability/redact.ts"
import { writeFileAtomic } from "../../store/atomicWrite.ts"
import { PgClient, postgresStoreLayer } from "../../store/postgres.ts"
import { eachKeyPage, RedisKeyPrefix, redisKey, redisStoreLayer } from "../../store/redis.ts"
import { secretKey } from "../../store/redisSecret.ts"
import { readSecret } from "../../store/secretFile.ts"
import type { TlsMaterial } from "../../store/tlsMaterial.ts"

export type StoreKind = "files" | "redis" | "postgres"

/** Which store: the data directory's files, a Redis server under a key prefix, or a PostgreSQL database. */
export type StoreSpec =
  | { readonly kind: "files" }
  | { readonly kind: "redis"; readonly url: string; readonly keyPrefix: string; readonly tls?: TlsMaterial | undefined }
  | { readonly kind: "postgres"; readonly url: string; readonly tls?: TlsMaterial | undefined }

export interface OpenedStore {
  readonly kind: StoreKind
  /** The data directory, or the URL without its password (and Redis's key prefix). */
  readonly where: string
  readonly adapters: StoreAdapters<never>
  /** Every generated secret the store holds, by name. */
  readonly secrets: Effect.Effect<ReadonlyArray<readonly [string, string]>, unknown>
  /** Sets a generated secret, replacing the one the store holds. */
  readonly putSecret: (name: string, value: string) => Effect.Effect<void, unknown>
  /** Puts jobs the job store holds into the kind's shared queue as they are (nothing with files: the daemon lists them). */
  readonly queueJobs: (jobs: ReadonlyArray<Job>) => Effect.Effect<void, unknown>
}

/** A secret's file in a data directory: the listed ones where the daemon keeps them, any other by its name. */
const secretFileOf = (dataDir: string, name: string): string => {
  const listed = Object.values(deploymentSecrets).find((secret) => secret.name === name)
  if (listed !== undefined) return listed.file(dataDir)
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`a secret named ${JSON.stringify(name)} has no file name`)
  return join(dataDir, name)
}

/** `text` matched literally by SCAN's MATCH. */

/** Opens the store `spec` names for the scope (PostgreSQL's schema made first). */
export const openStoreOf = (
  spec: StoreSpec,
  directories: StoreDirectories
): Effect.Effect<OpenedStore, StoreConnectionError, Scope.Scope> =>
  Effect.gen(function* () {
    if (spec.kind === "files") {
      const { dataDir } = directories
      return {
        kind: "files",
        where: dataDir,
        adapters: fileAdapters(directories),
        secrets: Effect.try(() =>
          Object.values(deploymentSecrets).flatMap((secret) => {
            const value = readSecret(secret.file(dataDir))
            return value === undefined ? [] : [[secret.name, value] as const]
          })
        ),
        putSecret: (name, value) => Effect.try(() => writeFileAtomic(secretFileOf(dataDir, name), `${value}\n`)),
        queueJobs: () => Effect.void
      }
    }
    if (spec.kind === "redis") {
      const connection = yield* Layer.build(
        redisStoreLayer({ url: spec.url, keyPrefix: spec.keyPrefix, tls: spec.tls })
      )
      const within = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provide(effect, connection) as Effect.Effect<A, E>
      return {
        kind: "redis",
        where: `${redactCredentials(spec.url)} (prefix ${spec.keyPrefix})`,
        adapters: withConnection(redisAdapters(directories), connection),
        secrets: within(
          Effect.gen(function* () {
            const redis = yield* Redis.Redis
            const under = redisKey(spec.keyPrefix, "secrets", "")
            const found: Array<readonly [string, string]> = []
            yield* eachKeyPage(redis, under, (keys) =>
              Effect.forEach(keys, (key) =>
                Effect.map(redis.send<string | null>("GET", key), (value) => {
                  if (value !== null) found.push([key.slice(under.length), value])
                })
              )
            )
            return found
          })
        ),
        putSecret: (name, value) =>
          within(
            Effect.gen(function* () {
              const redis = yield* Redis.Redis
              yield* redis.send("SET", secretKey(yield* RedisKeyPrefix, name), value)
            })
          ),
        queueJobs: (jobs) => within(importJobs(jobs))
      }
    }
    const connection = yield* Layer.build(
      postgresStoreLayer({ url: spec.url, migrations: postgresMigrations, tls: spec.tls })
    )
    const within = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.provide(effect, connection) as Effect.Effect<A, E>
    return {
      kind: "postgres",
      where: redactCredentials(spec.url),
      adapters: withConnection(postgresAdapters(directories), connection),
      secrets: within(
        Effect.gen(function* () {
          const sql = yield* PgClient.PgClient
          const rows = yield* sql<{ readonly name: string; readonly value: string }>`
            select name, value from campusgate_secrets order by name`
          return rows.map((row) => [row.name, row.value] as const)
        })
      ),
      putSecret: (name, value) =>
        within(
          Effect.gen(function* () {
            const sql = yield* PgClient.PgClient
            yield* sql`insert into campusgate_secrets (name, value) values (${name}, ${value})
              on conflict (name) do update set value = excluded.value`
          })
        ),
      queueJobs: (jobs) => within(JobQueuePostgres.importJobs(jobs))
    }
  })

/** The deployment's directories, as every command resolves them. */
export const directoriesOf = (location: ConfigLocation): StoreDirectories => ({
  configDir: resolve(location.configDir),
  dataDir: resolveDataDir(location)
})

/**
 * The store campusgate.yaml (with CAMPUSGATE_REDIS_URL, CAMPUSGATE_DATABASE_URL)
 * names for `location`, as the daemons run on it; `store.tls` read from the
 * config directory.
 */
export const deploymentSpec = (location: ConfigLocation) =>
  Effect.gen(function* () {
    const settings = storeSettingsOf(location)
    const tls = yield* tlsMaterialOf(settings.tls, resolve(location.configDir))
    if (settings.kind === "redis" && settings.url !== undefined)
      return { kind: "redis", url: settings.url, keyPrefix: settings.keyPrefix, tls } satisfies StoreSpec
    if (settings.kind === "postgres" && settings.url !== undefined)
      return { kind: "postgres", url: settings.url, tls } satisfies StoreSpec
    return { kind: "files" } satisfies StoreSpec
  })

/** Whether two specs name the same store (a copy onto itself). */
export const sameStore = (
  a: StoreSpec,
  b: StoreSpec,
  aDirectories: StoreDirectories,
  bDirectories: StoreDirectories
) =>
  a.kind === "files"
    ? b.kind === "files" && resolve(aDirectories.dataDir) === resolve(bDirectories.dataDir)
    : a.kind === b.kind && a.url === b.url && (a.kind !== "redis" || a.keyPrefix === (b as typeof a).keyPrefix)
