/**
 * The ended-sessions store's PostgreSQL adapter, shared by every daemon: a
 * row per ended session (`campusgate_sessions_ended`: the nonce and its
 * token's end) and a version row (`campusgate_sessions_ended_version`). A
 * sign-out is one statement, so atomic: it drops what is over, adds the session
 * (`INSERT … ON CONFLICT` keeping the later end, so ending a session again
 * never shortens its record), bumps the version and announces it with
 * `pg_notify`. Each daemon keeps the rows in memory (so `hasEnded` is
 * synchronous): its own sign-outs at once, the others' when the
 * notification arrives or its poll sees the version move
 * (`store/postgresConfigVersion.ts` `watchVersion`, every
 * `VERSION_POLL_MS`). A failed sign-out is an `EndedSessionsError` (the
 * sign-out answers 503).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import {
  asNumber,
  bounded,
  type Migration,
  PgClient,
  type PostgresConnection,
  type PostgresOutage
} from "../store/postgres.ts"
import {
  announcing,
  type VersionChannel,
  versionTableStatements,
  watchVersion
} from "../store/postgresConfigVersion.ts"
import {
  type EndedMap,
  EndedSessions,
  EndedSessionsError,
  type EndedSessionsService,
  endedIn,
  stillRunning
} from "./EndedSessions.ts"

const endedVersion: VersionChannel = {
  table: "campusgate_sessions_ended_version",
  channel: "campusgate_sessions_ended_changed"
}

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "sessions-1",
    statements: [
      `create table campusgate_sessions_ended (
        nonce text primary key,
        until bigint not null
      )`,
      "create index campusgate_sessions_ended_until on campusgate_sessions_ended (until)",
      ...versionTableStatements(endedVersion.table)
    ]
  }
]

/** The adapter over the connection in force, its view kept current until the scope closes. */
const makePostgresEndedSessions: Effect.Effect<EndedSessionsService, PostgresOutage, PgClient.PgClient | Scope.Scope> =
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const read = (now: number) =>
      Effect.map(
        bounded(
          sql<{ readonly nonce: string; readonly until: unknown }>`
            select nonce, until from campusgate_sessions_ended where until > ${now}`
        ),
        (rows): EndedMap => new Map(rows.map((row) => [row.nonce, asNumber(row.until)]))
      )
    // The rows as last read, and this daemon's own sign-outs (a read that started before one may not hold it).
    let view: EndedMap = new Map()
    let own = new Map<string, number>()
    const refresh = Effect.flatMap(Clock.currentTimeMillis, read).pipe(
      Effect.flatMap((ended) =>
        Effect.sync(() => {
          view = ended
        })
      )
    )
    // Listening first: a sign-out after the version was read announces itself, so the read below misses nothing.
    yield* watchVersion(endedVersion, refresh)
    yield* refresh
    return {
      end: ({ nonce, until }) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* bounded(
            announcing(
              sql,
              endedVersion,
              sql`swept as (
                  delete from campusgate_sessions_ended where until <= ${now} and nonce <> ${nonce}
                ), ended as (
                  insert into campusgate_sessions_ended (nonce, until) values (${nonce}, ${until})
                  on conflict (nonce) do update set until = greatest(campusgate_sessions_ended.until, excluded.until)
                )`
            )
          )
          own = stillRunning(own, now)
          own.set(nonce, Math.max(until, own.get(nonce) ?? 0))
        }).pipe(Effect.mapError((cause) => new EndedSessionsError({ operation: "end", cause }))),
      hasEnded: (nonce, now) => endedIn(own, nonce, now) || endedIn(view, nonce, now),
      list: (now) =>
        read(now).pipe(
          Effect.map((ended) => Array.from(ended, ([nonce, until]) => ({ nonce, until }))),
          Effect.mapError((cause) => new EndedSessionsError({ operation: "list", cause }))
        )
    }
  })

/** Rows shared by every daemon, each daemon's view kept current while the layer lives. */
export const layerPostgres: Layer.Layer<EndedSessions, PostgresOutage, PostgresConnection> = Layer.effect(
  EndedSessions,
  makePostgresEndedSessions
)
