/**
 * The API-key store's PostgreSQL adapter. Keys defined in the config
 * directory stay in its `api-keys.yaml` (kept in git, deployed to every
 * daemon); keys the daemon or `campusgate keys` make are rows of
 * `campusgate_keys` (id → record as JSON, hashes only), and a
 * config-directory key revoked through the store is a row of
 * `campusgate_keys_revoked`, applied to that file's document when it is
 * handed to the config loader (`configKeyRevocations.ts`), so every daemon
 * refuses it without waiting for a deployment.
 *
 * Each change is one transaction that also bumps the configuration version
 * and announces it (`store/postgresConfigVersion.ts`, whose `migrations`
 * the schema needs beside these), so every daemon reloads its key index
 * within a second: an addition is `INSERT … ON CONFLICT DO NOTHING`; the
 * first key of an empty store is inserted under a table lock, so of daemons
 * starting together one stores it; a revocation reads the record `FOR
 * UPDATE` and records a config key's revocation with `ON CONFLICT DO
 * NOTHING`, so of two revocations at once one wins and the other is told
 * the key was already revoked.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ApiKeyId, ApiKeyRecord } from "../domain/ApiKey.ts"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { announce, configVersion } from "../store/postgresConfigVersion.ts"
import { ApiKeyStore, type ApiKeyStoreService, ApiKeyStoreUnavailable, ApiKeysError } from "./ApiKeyStore.ts"
import { ApiKeyAlreadyRevoked, ApiKeyNotFound, addApiKeyRecord, type KeyDirectories } from "./apiKeyFiles.ts"
import { asApiKeysError, byCreation, sharedKeyReads } from "./configKeyRevocations.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "keys-1",
    statements: [
      `create table campusgate_keys (
        id text primary key,
        record text not null
      )`,
      `create table campusgate_keys_revoked (
        id text primary key,
        revoked_at text not null
      )`
    ]
  }
]

const unavailable = (cause: unknown) => new ApiKeysError({ reason: new ApiKeyStoreUnavailable({ cause }) })

/** What a revocation's transaction found: the files it changed, or why it changed nothing. */
type Revocation =
  | { readonly _tag: "Revoked"; readonly files: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "AlreadyRevoked"; readonly revokedAt: string }

/** The adapter over `configDir`'s key file and the PostgreSQL connection in force. */
const makePostgresApiKeyStore = (
  configDir: string,
  isWritable?: (directory: string) => boolean
): Effect.Effect<ApiKeyStoreService, never, PgClient.PgClient | PostgresBreaker> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const location = "postgres:campusgate_keys"
    const revokedLocation = "postgres:campusgate_keys_revoked"
    const _configOnly: KeyDirectories = { configDir: resolve(configDir), dataDir: resolve(configDir) }

    const stored = bounded(sql<{ readonly record: string }>`select record from campusgate_keys`).pipe(
      Effect.map((rows) => rows.map((row) => JSON.parse(row.record) as ApiKeyRecord).sort(byCreation)),
      Effect.mapError(unavailable)
    )
    const revocations = bounded(
      sql<{ readonly id: string; readonly revoked_at: string }>`select id, revoked_at from campusgate_keys_revoked`
    ).pipe(
      Effect.map((rows): ReadonlyMap<string, string> => new Map(rows.map((row) => [row.id, row.revoked_at]))),
      Effect.mapError(unavailable)
    )
    /** `change` and the configuration's announcement, in one transaction; `change` answers whether to announce. */
    const announced = <A, E>(id: string, change: Effect.Effect<readonly [A, boolean], E>) =>
      bounded(
        sql.withTransaction(
          Effect.gen(function* () {
            const [result, changed] = yield* change
            if (changed) yield* announce(sql, configVersion, `apiKey:${id}`)
            return result
          })
        )
      ).pipe(Effect.mapError(unavailable))

    const { configOnly, configRecords, documents, list } = sharedKeyReads({ configDir, location, stored, revocations })

    const insert = (record: ApiKeyRecord) =>
      announced(
        record.id,
        Effect.map(
          sql`insert into campusgate_keys (id, record) values (${record.id}, ${JSON.stringify(record)})
            on conflict (id) do nothing returning 1`,
          (rows) => [rows.length > 0, rows.length > 0] as const
        )
      )

    const insertFirst = (record: ApiKeyRecord) =>
      announced(
        record.id,
        Effect.gen(function* () {
          // Conflicts with itself and with every insert: the emptiness seen below holds until this commits.
          yield* sql`lock table campusgate_keys in share row exclusive mode`
          const rows = yield* sql`insert into campusgate_keys (id, record)
            select ${record.id}, ${JSON.stringify(record)} where not exists (select 1 from campusgate_keys)
            returning 1`
          return [rows.length > 0, rows.length > 0] as const
        })
      )

    const revokeIn = (id: string, revokedAt: string, inConfig: ApiKeyRecord | undefined) =>
      announced(
        id,
        Effect.gen(function* () {
          const [row] = yield* sql<{ readonly record: string }>`
            select record from campusgate_keys where id = ${id} for update`
          const held = row === undefined ? undefined : (JSON.parse(row.record) as ApiKeyRecord)
          if (inConfig === undefined && held === undefined) return [{ _tag: "NotFound" } as Revocation, false] as const
          const files: Array<string> = []
          if (held !== undefined && held.revokedAt === undefined) {
            yield* sql`update campusgate_keys set record = ${JSON.stringify({ ...held, revokedAt })} where id = ${id}`
            files.push(location)
          }
          if (inConfig !== undefined && inConfig.revokedAt === undefined) {
            const recorded = yield* sql`insert into campusgate_keys_revoked (id, revoked_at)
              values (${id}, ${revokedAt}) on conflict (id) do nothing returning 1`
            if (recorded.length > 0) files.push(revokedLocation)
          }
          if (files.length > 0) return [{ _tag: "Revoked", files } as Revocation, true] as const
          const [earlier] = yield* sql<{ readonly revoked_at: string }>`
            select revoked_at from campusgate_keys_revoked where id = ${id}`
          const at = held?.revokedAt ?? inConfig?.revokedAt ?? earlier?.revoked_at ?? ""
          return [{ _tag: "AlreadyRevoked", revokedAt: at } as Revocation, false] as const
        })
      )

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
          if (!(yield* insert(record))) return yield* Effect.die(new Error(`an API key ${record.id} is already stored`))
          return { location: "data" as const, file: location }
        }),
      addFirst: (record) =>
        Effect.gen(function* () {
          if ((yield* configRecords).length > 0) return false
          return yield* insertFirst(record)
        }),
      revoke: (id, revokedAt) =>
        Effect.gen(function* () {
          const inConfig = (yield* configRecords).find((record) => record.id === id)
          const outcome = yield* revokeIn(id, revokedAt, inConfig)
          switch (outcome._tag) {
            case "Revoked":
              return { id: id as ApiKeyId, revokedAt, files: outcome.files }
            case "NotFound":
              return yield* asApiKeysError(new ApiKeyNotFound({ id }))
            case "AlreadyRevoked":
              return yield* asApiKeysError(new ApiKeyAlreadyRevoked({ id, revokedAt: outcome.revokedAt }))
          }
        })
    }
  })

/** The config directory's `api-keys.yaml` (git) with keys and revocations held in PostgreSQL. */
export const layerPostgres = (
  configDir: string,
  isWritable?: (directory: string) => boolean
): Layer.Layer<ApiKeyStore, never, PostgresConnection> =>
  Layer.effect(
    ApiKeyStore,
    Effect.suspend(() => makePostgresApiKeyStore(configDir, isWritable))
  )
