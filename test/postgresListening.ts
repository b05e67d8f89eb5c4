/**
 * For the suites of adapters that keep a view current through
 * `LISTEN`/`NOTIFY` (`store/postgresConfigVersion.ts`): ending the
 * connections that listen on a test database, as a server restart or a
 * network cut would, to show the poll and the listener's return still
 * carry changes; and waiting for a view to catch up.
 */
import * as Effect from "effect/Effect"
import { PgClient } from "../src/store/postgres.ts"
import { TestDatabase } from "./postgresTesting.ts"

/** Ends every connection listening on the test database; answers how many there were. */
export const dropListeners = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { name } = yield* TestDatabase
  const ended = yield* sql`select pg_terminate_backend(pid) from pg_stat_activity
    where datname = ${name} and pid <> pg_backend_pid() and query ilike 'listen %'`
  return ended.length
})

/** Milliseconds until `check` holds, polled every 5 ms; fails past `withinMs`. */
export const timeUntil = (check: () => boolean, withinMs: number) =>
  Effect.promise(async () => {
    const start = performance.now()
    while (!check()) {
      if (performance.now() - start > withinMs) return Number.POSITIVE_INFINITY
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return performance.now() - start
  })
