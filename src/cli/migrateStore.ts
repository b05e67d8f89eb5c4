/**
 * `campusgate migrate --from files --to redis|postgres`: copies what a data
 * directory holds into the shared store the daemons will use — API-created
 * resources, the data directory's API keys, usage statistics (with the
 * job steps already counted), verifications, signing keys, every generated
 * secret (`deploymentSecrets.ts`: signatures, hashes, unique-email counts
 * and console sessions stay valid), the console sessions signed out and
 * jobs (records and queue state; their files stay in the data directory,
 * which becomes the volume the daemons share). Keys in the config directory
 * stay there (git). It refuses a store that already holds data (a Redis key
 * prefix with keys, a database with rows), so it cannot count statistics
 * twice; run it with the daemons stopped.
 *
 * The copy goes through the ports, one kind's adapters to the other's
 * (`deployment/stores.ts`); what a kind does its own way — telling that it
 * is empty, keeping a secret as it was, queueing the jobs — is its
 * `MigrationTarget`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { deploymentSecrets } from "../deployment/secrets.ts"
import {
  fileAdapters,
  postgresAdapters,
  redisAdapters,
  type StoreAdapters,
  type StoreDirectories
} from "../deployment/stores.ts"
import type { Job } from "../jobs/Job.ts"
import * as JobQueuePostgres from "../jobs/JobQueuePostgres.ts"
import { JobStore } from "../jobs/JobStore.ts"
import * as JobStoreFiles from "../jobs/JobStoreFiles.ts"
import { importJobs } from "../jobs/jobQueueKeys.ts"
import { ApiKeyStore } from "../keys/ApiKeyStore.ts"
import { ResourceStore } from "../resources/ResourceStore.ts"
import { EndedSessions } from "../sessions/EndedSessions.ts"
import { emptyUsageState } from "../stats/UsageState.ts"
import { UsageStore } from "../stats/UsageStore.ts"
import { readUsageFiles } from "../stats/usageFiles.ts"
import { PgClient, type PostgresConnection } from "../store/postgres.ts"
import { postgresSecret } from "../store/postgresSecret.ts"
import { type RedisConnection, RedisKeyPrefix } from "../store/redis.ts"
import { secretKey } from "../store/redisSecret.ts"
import { readSecret } from "../store/secretFile.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { VerificationStore } from "../verification/VerificationStore.ts"

export interface Migrated {
  readonly targetGroups: number
  readonly offers: number
  readonly apiKeys: number
  readonly offersWithStatistics: number
  readonly verifications: number
  readonly signingKeys: number
  readonly secrets: number
  readonly endedSessions: number
  readonly jobs: number
}

/** What `read` listed, once `write` has copied it. */
const copied = <A, E, R, E2, R2>(
  read: Effect.Effect<ReadonlyArray<A>, E, R>,
  write: (items: ReadonlyArray<A>) => Effect.Effect<unknown, E2, R2>
) => Effect.flatMap(read, (items) => Effect.as(write(items), items))

/** What a shared store kind does its own way when a data directory moves into it. */
export interface MigrationTarget<R> {
  readonly adapters: (directories: StoreDirectories) => StoreAdapters<R>
  /** Fails when the store already holds data: a second copy would count statistics twice. */
  readonly ensureEmpty: Effect.Effect<void, unknown, R>
  /** Keeps a generated secret as the data directory had it. */
  readonly keepSecret: (name: string, value: string) => Effect.Effect<void, unknown, R>
  /** Puts jobs into the shared queue as they are (their files stay on the shared volume). */
  readonly importJobs: (jobs: ReadonlyArray<Job>) => Effect.Effect<void, unknown, R>
}

/** Redis: an empty key prefix; secrets set if absent; jobs into the queue's keys. */
export const redisTarget: MigrationTarget<RedisConnection> = {
  adapters: redisAdapters,
  ensureEmpty: Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const [, existing] = yield* redis.send<[string, Array<string>]>(
      "SCAN",
      "0",
      "MATCH",
      `${prefix}*`,
      "COUNT",
      "10000"
    )
    if (existing.length > 0) {
      return yield* Effect.fail(
        new Error(
          `the Redis key prefix "${prefix}" already holds data; migrate into an empty prefix (store.keyPrefix), with the daemons stopped`
        )
      )
    }
  }),
  keepSecret: (name, value) =>
    Effect.gen(function* () {
      const redis = yield* Redis.Redis
      yield* redis.send("SET", secretKey(yield* RedisKeyPrefix, name), value, "NX")
    }),
  importJobs
}

/**
 * PostgreSQL: no rows in any table of the schema, its bookkeeping aside (the
 * migrations, and the one-row tables the schema makes with their first row:
 * versions, documents such as the signing keys'). A daemon that ever started
 * on the database left secrets there, so it is not empty.
 */
export const postgresTarget: MigrationTarget<PostgresConnection> = {
  adapters: postgresAdapters,
  ensureEmpty: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const tables = yield* sql<{ readonly name: string }>`select t.table_name as name from information_schema.tables t
      where t.table_schema = current_schema() and t.table_name like 'campusgate%'
        and t.table_name <> 'campusgate_migrations'
        and not exists (select 1 from information_schema.columns c where c.table_schema = t.table_schema
          and c.table_name = t.table_name and c.column_name = 'only_row')`
    for (const { name } of tables) {
      const [row] = yield* sql.unsafe<{ readonly held: boolean }>(`select exists (select 1 from ${name}) as held`)
      if (row?.held) {
        return yield* Effect.fail(
          new Error(
            `the PostgreSQL database already holds data (${name}); migrate into an empty database, with the daemons stopped`
          )
        )
      }
    }
  }),
  keepSecret: (name, value) => postgresSecret(name, () => value),
  importJobs: JobQueuePostgres.importJobs
}

/** Copies `dataDir` (and the keys `configDir`'s data location holds) into the shared store `target` is connected to. */
export const migrateInto = <R>(target: MigrationTarget<R>, configDir: string, dataDir: string) =>
  Effect.gen(function* () {
    yield* target.ensureEmpty

    const files = fileAdapters({ configDir, dataDir })
    const shared = target.adapters({ configDir, dataDir })
    /** Runs `move` with the port's store of each kind: the data directory's, and the shared one. */
    const between = <I, S, A, E, E1>(
      port: Context.Key<I, S>,
      adapterOf: (adapters: StoreAdapters<R>) => Layer.Layer<I, E1, R>,
      move: (from: S, to: S) => Effect.Effect<A, E, R>
    ) =>
      Effect.scoped(
        Effect.gen(function* () {
          const from = Context.get(yield* Layer.build(adapterOf(files)), port)
          const to = Context.get(yield* Layer.build(adapterOf(shared)), port)
          return yield* move(from, to)
        })
      )

    const [targetGroups, offers] = yield* between(
      ResourceStore,
      (adapters) => adapters.resources,
      (from, to) =>
        Effect.gen(function* () {
          const targetGroups = yield* from.list("targetGroup")
          const offers = yield* from.list("offer")
          for (const document of [...targetGroups, ...offers])
            yield* to.write(document.kind, document.id, document.text)
          return [targetGroups, offers] as const
        })
    )

    const dataKeys = yield* between(
      ApiKeyStore,
      (adapters) => adapters.keys,
      (from, to) =>
        Effect.gen(function* () {
          const dataKeys = (yield* from.list).filter((listed) => listed.location === "data")
          for (const { record } of dataKeys) yield* to.add(record, false)
          return dataKeys
        })
    )

    // Read from the files themselves: the store does not list the job steps already counted.
    const statistics = yield* Effect.try(() => readUsageFiles(dataDir))
    yield* Effect.provide(
      UsageStore.use((usage) =>
        Effect.forEach(
          statistics,
          ([offerId, stored]) =>
            Effect.gen(function* () {
              yield* usage.apply(offerId, stored.state)
              for (const [source, step] of stored.applied)
                yield* usage.applyOnce(offerId, source, step, emptyUsageState())
            }),
          { discard: true }
        )
      ),
      shared.usage
    )

    const verifications = yield* between(
      VerificationStore,
      (adapters) => adapters.verifications,
      (from, to) =>
        copied(from.list(), (records) => Effect.forEach(records, (record) => to.insert(record), { discard: true }))
    )

    const signing = yield* between(
      SigningKeyStore,
      (adapters) => adapters.signingKeys,
      (from, to) => copied(from.list(), (keys) => (keys.length > 0 ? to.update(() => keys) : Effect.void))
    )

    let secrets = 0
    for (const secret of Object.values(deploymentSecrets)) {
      const value = readSecret(secret.file(dataDir))
      if (value === undefined) continue
      yield* target.keepSecret(secret.name, value)
      secrets++
    }

    // Sessions signed out stay ended: the console secret moves, so their cookies would open again.
    const now = yield* Clock.currentTimeMillis
    const endedSessions = yield* between(
      EndedSessions,
      (adapters) => adapters.endedSessions,
      (from, to) =>
        Effect.gen(function* () {
          const ended = yield* from.list(now)
          yield* Effect.forEach(ended, to.end, { discard: true })
          return ended
        })
    )

    const jobs = yield* JobStore.use((store) => store.list()).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))
    yield* target.importJobs(jobs)

    return {
      targetGroups: targetGroups.length,
      offers: offers.length,
      apiKeys: dataKeys.length,
      offersWithStatistics: statistics.size,
      verifications: verifications.length,
      signingKeys: signing.length,
      secrets,
      endedSessions: endedSessions.length,
      jobs: jobs.length
    } satisfies Migrated
  })
