/**
 * The signing-key store's PostgreSQL adapter, shared by every daemon: the
 * keys in one row (`campusgate_verification_signing_keys`, the file
 * adapter's JSON as `jsonb`), made empty by the migration. A change is one transaction that
 * reads the row `FOR UPDATE`, applies the change and writes it back: a
 * daemon changing the keys meanwhile waits on the row lock and then reads
 * the changed keys, so concurrent rotations are all kept, without retries.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import {
  decodeSigningKeys,
  type SigningKey,
  SigningKeyStore,
  SigningKeyStoreError,
  type SigningKeyStoreService
} from "./SigningKeyStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "verification-signing-keys-1",
    statements: [
      `create table campusgate_verification_signing_keys (
        only_row boolean primary key default true check (only_row),
        document jsonb not null
      )`,
      `insert into campusgate_verification_signing_keys (document) values ('{"version": 1, "keys": []}')`
    ]
  }
]

const documentOf = (keys: ReadonlyArray<SigningKey>): string => JSON.stringify({ version: 1, keys })

const makePostgres: Effect.Effect<SigningKeyStoreService, never, PgClient.PgClient | PostgresBreaker> = Effect.gen(
  function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const failed = (operation: SigningKeyStoreError["operation"]) => (cause: unknown) =>
      new SigningKeyStoreError({ operation, cause })
    const keysOf = ([row]: ReadonlyArray<{ readonly document: string }>) =>
      Effect.try(() => (row === undefined ? [] : decodeSigningKeys(row.document).keys))
    return {
      list: () =>
        bounded(
          Effect.flatMap(
            sql<{
              readonly document: string
            }>`select document::text as document from campusgate_verification_signing_keys`,
            keysOf
          )
        ).pipe(Effect.mapError(failed("list"))),
      update: (change) =>
        bounded(
          sql.withTransaction(
            Effect.gen(function* () {
              const read = yield* sql<{ readonly document: string }>`
              select document::text as document from campusgate_verification_signing_keys for update`
              const current = yield* keysOf(read)
              const keys = yield* Effect.try(() => change(current))
              yield* sql`update campusgate_verification_signing_keys set document = ${documentOf(keys)}::jsonb`
              return keys
            })
          )
        ).pipe(Effect.mapError(failed("update")))
    }
  }
)

/** The keys in one row shared by every daemon; a change holds the row's lock from read to write. */
export const layerPostgres: Layer.Layer<SigningKeyStore, never, PostgresConnection> = Layer.effect(
  SigningKeyStore,
  makePostgres
)
