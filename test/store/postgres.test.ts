/**
 * The PostgreSQL connection's promises, against the real server: the schema
 * is migrated once however many daemons start together, a database migrated
 * by a newer build is refused, and a statement the server does not answer
 * in time fails as an outage instead of hanging, and opens the connection's
 * breaker until the server answers again.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { PROBE_INTERVAL_MS } from "../../src/store/breaker.ts"
import { isStoreOutage } from "../../src/store/outage.ts"
import {
  type Migration,
  migrate,
  PgClient,
  PostgresBreaker,
  PostgresSchemaError,
  postgresClientLayer,
  postgresStoreLayer,
  STATEMENT_TIMEOUT_MS
} from "../../src/store/postgres.ts"
import { describePostgres, testDatabase } from "../postgresTesting.ts"

const first: ReadonlyArray<Migration> = [
  { id: "things-1", statements: ["create table things (id text primary key)"] },
  { id: "things-2", statements: ["alter table things add column n int not null default 0"] }
]

describePostgres("the PostgreSQL store's schema and outages", () => {
  it.live("migrates once when five daemons start together, then applies only what is new", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const applied = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.provide(migrate(first), postgresClientLayer(database.url))),
        { concurrency: "unbounded" }
      )
      expect(applied.flat().sort()).toEqual(["things-1", "things-2"])
      const later = [...first, { id: "things-3", statements: ["create index things_n on things (n)"] }]
      expect(yield* Effect.provide(migrate(later), postgresClientLayer(database.url))).toEqual(["things-3"])
      const rows = yield* Effect.provide(
        Effect.flatMap(
          PgClient.PgClient,
          (sql) => sql<{ id: string }>`select id from campusgate_migrations order by id`
        ),
        postgresClientLayer(database.url)
      )
      expect(rows.map((row) => row.id)).toEqual(["things-1", "things-2", "things-3"])
    }).pipe(Effect.scoped)
  )

  it.live("refuses a database migrated by a newer build, naming what it does not know", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      yield* Effect.provide(migrate(first), postgresClientLayer(database.url))
      const exit = yield* Effect.exit(
        Layer.build(postgresStoreLayer({ url: database.url, migrations: first.slice(0, 1) }))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      expect(error?._tag === "Fail" ? error.error : undefined).toBeInstanceOf(PostgresSchemaError)
      expect(String(error?._tag === "Fail" ? error.error.message : "")).toContain("things-2")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a statement the server does not answer in time fails as an outage and opens the breaker until select 1 answers",
    () =>
      Effect.gen(function* () {
        const database = yield* testDatabase
        yield* Effect.gen(function* () {
          const sql = yield* PgClient.PgClient
          const { bounded } = yield* PostgresBreaker
          const started = Date.now()
          const exit = yield* Effect.exit(bounded(sql`select pg_sleep(${(STATEMENT_TIMEOUT_MS * 2) / 1000})`))
          expect(Exit.isFailure(exit)).toBe(true)
          expect(Date.now() - started).toBeLessThan(STATEMENT_TIMEOUT_MS * 2)
          const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
          expect(error?._tag === "Fail" && isStoreOutage(error.error)).toBe(true)
          // Open: the next statement fails at once, without reaching the server.
          const refusedAt = Date.now()
          const refused = yield* Effect.exit(bounded(sql`select 1`))
          expect(Exit.isFailure(refused)).toBe(true)
          expect(Date.now() - refusedAt).toBeLessThan(100)
          // The server answers `select 1` on another connection: the probe closes it within a few intervals.
          const closedAt = Date.now()
          yield* bounded(sql`select 1`).pipe(Effect.retry(Schedule.spaced("50 millis")))
          expect(Date.now() - closedAt).toBeLessThan(PROBE_INTERVAL_MS * 4)
        }).pipe(Effect.provide(postgresClientLayer(database.url)))
      }).pipe(Effect.scoped)
  )
})
