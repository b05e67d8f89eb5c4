/**
 * A secret generated once per deployment and kept in PostgreSQL (a row of
 * `campusgate_secrets`), as `redisSecret.ts` keeps one in Redis: the first
 * daemon to ask stores one (`INSERT … ON CONFLICT DO NOTHING`), then every
 * daemon reads the stored one in a statement of its own — which, begun
 * after the insert settled, sees whichever daemon's row won — so webhook
 * signatures, verification hashes and the unique-email key agree across
 * daemons started together and across restarts. The store's identity
 * (`store/storeIdentity.ts`) is kept the same way, beside them.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { type Migration, PgClient, PostgresBreaker, PostgresOutage } from "./postgres.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "secrets-1",
    statements: [
      `create table campusgate_secrets (
        name text primary key,
        value text not null
      )`
    ]
  }
]

/** The secret `name`, created from `generate()` when there is none yet. */
export const postgresSecret = (
  name: string,
  generate: () => string = () => randomBytes(32).toString("base64url")
): Effect.Effect<string, PostgresOutage, PgClient.PgClient | PostgresBreaker> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    yield* bounded(sql`insert into campusgate_secrets (name, value) values (${name}, ${generate()})
      on conflict (name) do nothing`)
    const [stored] = yield* bounded(
      sql<{ readonly value: string }>`select value from campusgate_secrets where name = ${name}`
    )
    if (stored === undefined)
      return yield* new PostgresOutage({ cause: new Error(`the secret ${name} vanished from campusgate_secrets`) })
    return stored.value
  })

/**
 * The secret `name` as stored; undefined when there is none, or no table
 * of secrets at all (a database emptied under the daemons): nothing is made.
 */
export const readPostgresSecret = (
  name: string
): Effect.Effect<string | undefined, PostgresOutage, PgClient.PgClient | PostgresBreaker> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const [table] = yield* bounded(
      sql<{ readonly present: boolean }>`select to_regclass('campusgate_secrets') is not null as present`
    )
    if (table?.present !== true) return undefined
    const [stored] = yield* bounded(
      sql<{ readonly value: string }>`select value from campusgate_secrets where name = ${name}`
    )
    return stored?.value
  })
