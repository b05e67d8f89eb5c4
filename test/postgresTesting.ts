/**
 * A real PostgreSQL server for the suites that need one:
 * `CAMPUSGATE_TEST_DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test`.
 * Each layer gets a database of its own (`cgtest_<random>`, created from
 * that URL's database, migrated, and dropped when released). Without a
 * server the suites are skipped and say so loudly; with
 * `CAMPUSGATE_REQUIRE_POSTGRES=1` (CI) they fail instead.
 */
import { randomBytes } from "node:crypto"
import { describe } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type Migration,
  PgClient,
  type PostgresConnection,
  postgresClientLayer,
  postgresStoreLayer
} from "../src/store/postgres.ts"
import { liveClock } from "./liveClock.ts"
import { type Suite, skippedForWantOfRedis } from "./redisTesting.ts"

export const testPostgresUrl = process.env.CAMPUSGATE_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"

const required = process.env.CAMPUSGATE_REQUIRE_POSTGRES === "1"

/** Whether the server answers a query at `url` within a few seconds. */
export const postgresAnswers = (url: string): Promise<boolean> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      yield* sql`select 1`
      return true
    }).pipe(
      Effect.provide(postgresClientLayer(url)),
      Effect.timeout("5 seconds"),
      Effect.orElseSucceed(() => false)
    )
  )

export const postgresAvailable = await postgresAnswers(testPostgresUrl)

const refusal = () =>
  new Error(
    `PostgreSQL is required (CAMPUSGATE_REQUIRE_POSTGRES=1) but does not answer at ${redacted(testPostgresUrl)}`
  )

/** `url` without its password. */
const redacted = (url: string): string => {
  const parsed = new URL(url)
  if (parsed.password !== "") parsed.password = "***"
  return parsed.toString()
}

/** `describe` when PostgreSQL answers; otherwise a loud skip (or, when PostgreSQL is required, a failure). */
export const describePostgres: Suite = (name, body) => {
  if (postgresAvailable) {
    describe(name, body)
    return
  }
  if (required) {
    describe(name, () => {
      throw refusal()
    })
    return
  }
  skippedForWantOfRedis(name, `no PostgreSQL server answers at ${redacted(testPostgresUrl)}`)
  describe.skip(name, body)
}

/** `entries` (a suite's PostgreSQL adapters) when PostgreSQL answers; otherwise none, said loudly (or a failure). */
export const whenPostgres = <A>(suite: string, entries: ReadonlyArray<A>): ReadonlyArray<A> => {
  if (postgresAvailable) return entries
  if (required) throw refusal()
  skippedForWantOfRedis(`${suite} (postgres)`, `no PostgreSQL server answers at ${redacted(testPostgresUrl)}`)
  return []
}

/** The URL of database `name` on the test server. */
export const databaseUrl = (name: string): string => {
  const url = new URL(testPostgresUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Runs `statement` on the test server's own database (creating and dropping databases). */
const onServer = (statement: string) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    yield* sql.unsafe(statement)
  }).pipe(Effect.provide(postgresClientLayer(testPostgresUrl)))

const createDatabase = Effect.gen(function* () {
  const name = `cgtest_${randomBytes(6).toString("hex")}`
  yield* onServer(`create database ${name}`)
  return { name, url: databaseUrl(name) }
})

const dropDatabase = (name: string) => Effect.ignore(onServer(`drop database if exists ${name} with (force)`))

/** A new, empty database on the test server, dropped (with its connections) when the scope closes. */
export const testDatabase = Effect.acquireRelease(createDatabase, ({ name }) => dropDatabase(name))

/** A new, empty database for daemons a test starts: its URL, and how to drop it (with its connections) after. */
export const makeTestDatabase = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const { name, url } = await Effect.runPromise(createDatabase)
  return { url, drop: () => Effect.runPromise(dropDatabase(name)) }
}

/** The database a `testPostgresLayer` made. */
export class TestDatabase extends Context.Service<TestDatabase, { readonly name: string; readonly url: string }>()(
  "campusgate/test/TestDatabase"
) {}

/** A connection to a database of its own with `migrations` applied, dropped when the layer is released. */
export const testPostgresLayer = (
  migrations: ReadonlyArray<Migration>
): Layer.Layer<PostgresConnection | TestDatabase> =>
  Layer.unwrap(
    Effect.map(testDatabase, (database) =>
      Layer.merge(postgresStoreLayer({ url: database.url, migrations }), Layer.succeed(TestDatabase, database))
    )
  ).pipe(
    // The pool's timeouts and idle connections run on real time, whatever clock the test runs on.
    Layer.provide(liveClock),
    Layer.orDie
  )

/** A store contract's PostgreSQL adapter entry, as `storeAdapters` lists the others (see `whenPostgres`). */
export const postgresAdapter = <S>(
  suite: string,
  layer: Layer.Layer<S, unknown, PostgresConnection>,
  migrations: ReadonlyArray<Migration>
): ReadonlyArray<readonly [string, () => Layer.Layer<S, unknown>]> =>
  whenPostgres(suite, [["postgres", () => layer.pipe(Layer.provide(testPostgresLayer(migrations)))] as const])
