import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import {
  asNumber,
  type Migration,
  PgClient,
  PostgresBreaker,
  type PostgresConnection,
  type PostgresOutage
} from "../store/postgres.ts"
import {
  announcing,
  type VersionChannel,
  versionTableStatements,
  watchVersion
} from "../store/postgresConfigVersion.ts"
import { type EndedMap, EndedSessions, type EndedSessionsService, makeSharedEndedSessions } from "./EndedSessions.ts"

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
const makePostgresEndedSessions: Effect.Effect<
  EndedSessionsService,
  PostgresOutage,
  PgClient.PgClient | PostgresBreaker | Scope.Scope
> = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const read = (now: number) =>
    Effect.map(
      bounded(
        sql<{ readonly nonce: string; readonly until: unknown }>`
            select nonce, until from campusgate_sessions_ended where until > ${now}`
      ),
      (rows): EndedMap => new Map(rows.map((row) => [row.nonce, asNumber(row.until)]))
    )
  return yield* makeSharedEndedSessions({
    store: ({ nonce, until }, now) =>
      bounded(
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
      ),
    read,
    watch: (refresh) => watchVersion(endedVersion, refresh)
  })
})

/** Rows shared by every daemon, each daemon's view kept current while the layer lives. */
export const layerPostgres: Layer.Layer<EndedSessions, PostgresOutage, PostgresConnection> = Layer.effect(
  EndedSessions,
  makePostgresEndedSessions
)
