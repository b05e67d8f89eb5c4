/**
 * How daemons sharing one PostgreSQL database learn that what feeds their
 * configuration changed (an API-created resource, an API key), as
 * `redisConfigVersion.ts` does over Redis: every such write bumps a
 * version row (`campusgate_config_version`) and announces it with
 * `pg_notify` on a channel, in the same transaction as the write — so the
 * announcement and the new version are seen only once the write is
 * committed. Each daemon `LISTEN`s on the channel and reloads when a
 * notification arrives (milliseconds), and also reads the version every
 * `VERSION_POLL_MS`, so a notification lost while its listening connection
 * was down is caught within that time. `watchVersion` is the same watch
 * over another version table and channel (ended console sessions,
 * `sessions/endedSessionsPostgres.ts`).
 *
 * The change feed (issue 48): a write of one item (a target group, an
 * offer, an API key) also records `(version, item)` in
 * `campusgate_config_changes`, pruned to its last `CHANGE_LOG_LENGTH`
 * versions, in the same statement as the bump (`announce` with an item), so
 * a daemon reads which items changed since the version it holds
 * (`readConfigChanges`) and applies those alone. A bump with no row (a
 * review decision) or one pruned away is a gap: the daemon reloads in full.
 * Bumps take the version row's lock, so versions commit in order.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { asNumber, type Migration, PgClient, PostgresBreaker, type PostgresOutage } from "./postgres.ts"

/** How often the version is read besides the notifications. */
export const VERSION_POLL_MS = 500

/** A version row and the channel its bumps are announced on. */
export interface VersionChannel {
  /** A table of one row, made by `versionTableStatements`. */
  readonly table: string
  /** A `LISTEN` channel: a lowercase identifier. */
  readonly channel: string
  /** The change feed's table (`version`, `item`), when bumps record which item changed. */
  readonly changes?: string | undefined
}

/** How many item changes the feed keeps: a daemon further behind reloads in full. */
export const CHANGE_LOG_LENGTH = 1000

/** The statements that make a version table of one row, version 0. */
export const versionTableStatements = (table: string): ReadonlyArray<string> => [
  `create table ${table} (
    only_row boolean primary key default true check (only_row),
    version bigint not null default 0
  )`,
  `insert into ${table} default values`
]

/** The version of the configuration's stores (API-created resources and API keys), and its channel. */
export const configVersion: VersionChannel = {
  table: "campusgate_config_version",
  channel: "campusgate_config_changed",
  changes: "campusgate_config_changes"
}

export const migrations: ReadonlyArray<Migration> = [
  { id: "config-1", statements: versionTableStatements(configVersion.table) },
  {
    id: "config-2",
    statements: [`create table campusgate_config_changes (version bigint primary key, item text not null)`]
  }
]

/**
 * Bumps the version and announces it; run it in the writing transaction
 * (`sql.withTransaction`) so that both take effect when the write commits
 * (or write and announce in one statement: `announcing`). With `item`
 * (`targetGroup:<id>`), records it in the version's change feed too.
 */
export const announce = (
  sql: PgClient.PgClient,
  version: VersionChannel,
  item?: string | undefined
): Effect.Effect<void, SqlError> =>
  Effect.asVoid(
    item === undefined || version.changes === undefined
      ? sql`with bumped as (update ${sql(version.table)} set version = version + 1 returning version)
      select pg_notify(${version.channel}, version::text) from bumped`
      : sql`with bumped as (update ${sql(version.table)} set version = version + 1 returning version),
        logged as (insert into ${sql(version.changes)} (version, item) select version, ${item} from bumped),
        pruned as (delete from ${sql(version.changes)}
          where version <= (select version from bumped) - ${CHANGE_LOG_LENGTH})
      select pg_notify(${version.channel}, version::text) from bumped`
  )

/**
 * One statement that runs `changes` (data-modifying `name as (…)` clauses
 * of a `WITH`) and bumps and announces the version: atomic as a
 * transaction, in one round trip.
 */
export const announcing = (
  sql: PgClient.PgClient,
  version: VersionChannel,
  changes: Statement.Fragment
): Effect.Effect<void, SqlError> =>
  Effect.asVoid(
    sql`with ${changes}, bumped as (update ${sql(version.table)} set version = version + 1 returning version)
      select pg_notify(${version.channel}, version::text) from bumped`
  )

/** How long a listener waits before listening again after its connection failed. */
const RELISTEN_MS = VERSION_POLL_MS

/**
 * Calls `onChange` (one at a time) whenever a writer bumped `version` and
 * announced it: on each notification, and when the polled version moved.
 * Listens before answering, so a change made after it returned is never
 * missed; runs until the scope closes; PostgreSQL being down only delays it
 * (the listener listens again once the server answers).
 */
export const watchVersion = <E>(
  version: VersionChannel,
  onChange: Effect.Effect<void, E>
): Effect.Effect<void, never, PgClient.PgClient | PostgresBreaker | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    let seen: number | undefined
    const readVersion = Effect.map(
      bounded(sql<{ readonly version: unknown }>`select version from ${sql(version.table)}`),
      ([row]) => asNumber(row?.version)
    )
    // Handles one at a time; a change seen while one runs is picked up by the next look.
    const check = Effect.gen(function* () {
      const current = yield* readVersion
      if (seen === undefined) {
        seen = current
        return
      }
      if (current === seen) return
      // Seen once handled: a change whose handling failed is handled again at the next look.
      yield* onChange
      seen = current
    }).pipe(Effect.ignore)
    const wake = yield* Queue.sliding<void>(1)
    const listening = yield* Deferred.make<void>()
    const listen = Effect.scoped(
      Effect.gen(function* () {
        const notifications = yield* sql.listen(version.channel)
        yield* Deferred.succeed(listening, undefined)
        // A change announced while this listener was not listening: look once.
        yield* Queue.offer(wake, undefined)
        yield* Effect.forever(Effect.andThen(Queue.take(notifications), Queue.offer(wake, undefined)))
      })
    ).pipe(
      Effect.ignore,
      Effect.andThen(Deferred.succeed(listening, undefined)),
      Effect.andThen(Effect.sleep(`${RELISTEN_MS} millis`))
    )
    yield* Effect.forkScoped(Effect.forever(listen))
    yield* Deferred.await(listening)
    yield* Effect.ignore(Effect.map(readVersion, (current) => (seen = current)))
    yield* Effect.forkScoped(Effect.repeat(Queue.offer(wake, undefined), Schedule.spaced(`${VERSION_POLL_MS} millis`)))
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Queue.take(wake), check)))
  })

/** The configuration's version now. */
export const readConfigVersion: Effect.Effect<string | undefined, PostgresOutage, PgClient.PgClient | PostgresBreaker> =
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const [row] = yield* bounded(sql<{ readonly version: unknown }>`select version from ${sql(configVersion.table)}`)
    return row === undefined ? undefined : String(row.version)
  })

/**
 * The version now and the items changed after `since`, in order; `items`
 * undefined when the feed does not hold each of those versions (pruned, a
 * change of no one item).
 */
export const readConfigChanges = (
  since: string
): Effect.Effect<
  { readonly version: string; readonly items: ReadonlyArray<string> | undefined },
  PostgresOutage,
  PgClient.PgClient | PostgresBreaker
> =>
  Effect.flatMap(Effect.all([PgClient.PgClient, PostgresBreaker]), ([sql, { bounded }]) =>
    Effect.map(
      bounded(
        sql<{ readonly version: unknown; readonly at: unknown; readonly item: string | null }>`
          select v.version, c.version as at, c.item from ${sql(configVersion.table)} v
          left join campusgate_config_changes c on c.version > ${Number(since)} and c.version <= v.version
          order by c.version`
      ),
      (rows) => {
        const version = asNumber(rows[0]?.version)
        const entries = rows.filter((row) => row.item !== null)
        const behind = version - Number(since)
        const complete =
          entries.length === behind && entries.every((row, i) => asNumber(row.at) === Number(since) + i + 1)
        return {
          version: String(version),
          items: complete ? entries.map((row) => row.item as string) : undefined
        }
      }
    )
  )

/** Calls `onChange` (one at a time) whenever another writer changed the configuration's stores. */
export const watchConfigVersion = (
  onChange: Effect.Effect<void, unknown>
): Effect.Effect<void, never, PgClient.PgClient | PostgresBreaker | Scope.Scope> =>
  watchVersion(configVersion, onChange)
