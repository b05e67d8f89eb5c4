/**
 * The PostgreSQL connection every PostgreSQL adapter shares: Effect's SQL
 * client over `@effect/sql-pg` (a pool of connections, `LISTEN`/`NOTIFY`),
 * and the schema the adapters' tables make up.
 *
 * The schema is a set of named migrations, each slice's beside its adapter
 * (`<slice>Postgres.ts` exports `migrations`), applied in order and
 * recorded by id in `campusgate_migrations`, under an advisory lock so that
 * daemons starting together apply each once. A database that records a
 * migration this build does not know was written by a newer build: the
 * daemon refuses to start on it (`PostgresSchemaError`), rather than
 * writing rows a newer schema does not expect.
 *
 * What the daemon promises when PostgreSQL goes away is set here, as for
 * Redis (`store/redis.ts`): a statement fails when the server has not
 * answered within `STATEMENT_TIMEOUT_MS`, and fails as a store outage
 * (`store/outage.ts`), so a request that needs shared state answers 503
 * instead of hanging; after one has timed out, every statement fails at
 * once until `select 1` is answered again (the connection's breaker,
 * `store/breaker.ts`, given as `PostgresBreaker`); the pool opens new
 * connections as the server comes back. The URL, which may carry a password, is never printed.
 */
import { PgClient } from "@effect/sql-pg"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { type Breaker, makeBreaker } from "./breaker.ts"
import { markOutage } from "./outage.ts"
import { type TlsMaterial, tlsOptions } from "./tlsMaterial.ts"

/** The longest a statement may take before it fails (the store then counts as down). */
export const STATEMENT_TIMEOUT_MS = 2000
const CONNECT_TIMEOUT_MS = 2000
const POOL_SIZE = 10

/** The connection a PostgreSQL adapter is given (its `layerPostgres` needs it). */
export type PostgresConnection = PgClient.PgClient | SqlClient.SqlClient | PostgresBreaker

export { PgClient } from "@effect/sql-pg"

/** A named change to the schema; once released, never edited (a later one changes it further). */
export interface Migration {
  /** Unique across the schema: `<slice>-<n>`, e.g. `idempotency-1`. */
  readonly id: string
  readonly statements: ReadonlyArray<string>
}

export interface PostgresOptions {
  readonly url: string
  /** A private CA or a client certificate (`store.tls`): the connection is then TLS, the server's certificate checked. */
  readonly tls?: TlsMaterial | undefined
  /** Every slice's migrations, in order. */
  readonly migrations: ReadonlyArray<Migration>
}

/** A statement PostgreSQL did not answer, or answered with an error: the store is down or failing, not a bug. */
export class PostgresOutage extends Schema.TaggedError<PostgresOutage>()("PostgresOutage", {
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `PostgreSQL failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(PostgresOutage)

/** The database and this build disagree about the schema. */
export class PostgresSchemaError extends Schema.TaggedError<PostgresSchemaError>()("PostgresSchemaError", {
  /** Migrations the database records that this build does not know. */
  unknown: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `The PostgreSQL database was migrated by a newer Campusgate (it records ${this.unknown.join(", ")}, which this version does not know); run the newer version, or restore a backup made for this one.`
  }
}

/**
 * `effect`'s failure as an outage; and a client's error raised as a defect
 * too: a transaction whose connection was lost cannot be rolled back, and
 * `withTransaction` dies with that rollback's error, which would otherwise
 * pass every handler of failures (a 500, a background fiber ended).
 */
const failingAsOutage = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, PostgresOutage, R> =>
  Effect.catchCause(effect, (cause) => {
    const failure = Cause.findErrorOption(cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      return Effect.fail(error instanceof PostgresOutage ? error : new PostgresOutage({ cause: error }))
    }
    const lost = cause.reasons.filter(Cause.isDieReason).find((reason) => isSqlError(reason.defect))
    return lost === undefined
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.fail(new PostgresOutage({ cause: lost.defect }))
  })

/**
 * The breaker of the PostgreSQL connection (`store/breaker.ts`), given
 * with it: an adapter takes `bounded` from it when it is made, and runs
 * every statement through it.
 */
export class PostgresBreaker extends Context.Service<PostgresBreaker, Breaker<PostgresOutage>>()(
  "campusgate/store/PostgresBreaker"
) {}

/** The breaker over a client: statements bounded by `STATEMENT_TIMEOUT_MS`, `select 1` its probe. */
const breakerLayer: Layer.Layer<PostgresBreaker, never, PgClient.PgClient> = Layer.effect(
  PostgresBreaker,
  Effect.flatMap(PgClient.PgClient, (sql) =>
    makeBreaker<PostgresOutage>({
      store: "PostgreSQL",
      timeoutMs: STATEMENT_TIMEOUT_MS,
      probe: sql`select 1`,
      outage: (cause) => new PostgresOutage({ cause }),
      asOutage: failingAsOutage
    })
  )
)

/** The connection's pool, bounded and named, with its breaker; building it connects, or fails. */
export const postgresClientLayer = (url: string, tls?: TlsMaterial): Layer.Layer<PostgresConnection, SqlError> =>
  Layer.provideMerge(breakerLayer, postgresPool(url, tls))

const postgresPool = (url: string, tls?: TlsMaterial) =>
  PgClient.layer({
    url: Redacted.make(url),
    ...(tls === undefined ? {} : { ssl: tlsOptions(tls) }),
    applicationName: "campusgate",
    connectTimeout: `${CONNECT_TIMEOUT_MS} millis`,
    maxConnections: POOL_SIZE,
    // The server's own bound: a statement stuck behind a lock ends there too.
    startupParameters: { statement_timeout: String(STATEMENT_TIMEOUT_MS * 5) }
  })

const MIGRATIONS_TABLE = `create table if not exists campusgate_migrations (
  id text primary key,
  applied_at timestamptz not null default now()
)`
/** Any fixed number: the advisory lock daemons take while they migrate. */
const MIGRATION_LOCK = 0x63676d67

/**
 * Applies the migrations the database lacks, in order, in one transaction
 * under an advisory lock; refuses a database that records one this build
 * does not know. Answers the ids applied.
 */
export const migrate = (
  migrations: ReadonlyArray<Migration>
): Effect.Effect<ReadonlyArray<string>, PostgresSchemaError | SqlError, PgClient.PgClient> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
        yield* sql.unsafe(MIGRATIONS_TABLE)
        const applied = new Set(
          (yield* sql<{ readonly id: string }>`select id from campusgate_migrations`).map((row) => row.id)
        )
        const known = new Set(migrations.map((migration) => migration.id))
        const unknown = [...applied].filter((id) => !known.has(id)).sort()
        if (unknown.length > 0) return yield* new PostgresSchemaError({ unknown })
        const pending = migrations.filter((migration) => !applied.has(migration.id))
        for (const migration of pending) {
          for (const statement of migration.statements) yield* sql.unsafe(statement)
          yield* sql`insert into campusgate_migrations (id) values (${migration.id})`
        }
        return pending.map((migration) => migration.id)
      })
    )
  })

/** The connection with the schema current (migrated on first use, refused when newer than this build). */
export const postgresStoreLayer = (
  options: PostgresOptions
): Layer.Layer<PostgresConnection, PostgresSchemaError | SqlError> =>
  Layer.effectDiscard(migrate(options.migrations)).pipe(
    Layer.provideMerge(postgresClientLayer(options.url, options.tls))
  )

/** Whether `error` is a unique violation: the row is already there. */
export const isUniqueViolation = (error: unknown): boolean =>
  isSqlError(error) && error.reason._tag === "UniqueViolation"

/** An `int8` column as a number: every count and time this project keeps fits in 2^53. */
export const asNumber = (value: unknown): number => Number(value)
