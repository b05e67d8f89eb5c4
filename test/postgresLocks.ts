/**
 * A PostgreSQL store that does not answer, for the adapters' outage tests:
 * `holdingLock` takes an exclusive lock on a table from a connection of its
 * own and keeps it until the scope closes, so every statement on that table
 * waits past the store's bound (`STATEMENT_TIMEOUT_MS`) and fails as an
 * outage, as it would while the server is unreachable.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PgClient, postgresClientLayer } from "../src/store/postgres.ts"

/** Holds an exclusive lock on `table` of the database at `url` until the scope closes. */
export const holdingLock = (url: string, table: string) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(postgresClientLayer(url).pipe(Layer.orDie))
    const sql = yield* Effect.provide(PgClient.PgClient, context)
    const taken = yield* Deferred.make<void>()
    yield* Effect.forkScoped(
      sql
        .withTransaction(
          Effect.andThen(
            sql.unsafe(`lock table ${table} in access exclusive mode`),
            Effect.andThen(Deferred.succeed(taken, undefined), Effect.never)
          )
        )
        .pipe(Effect.orDie)
    )
    yield* Deferred.await(taken)
  })
