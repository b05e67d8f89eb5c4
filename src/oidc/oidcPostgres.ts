/**
 * The OpenID Connect store's PostgreSQL adapter, shared by every daemon: a
 * row per entry (`campusgate_oidc_entries`: model, id, the JSON payload,
 * its grant and session uid for the lookups, the time it ends, and when it
 * was consumed). A consumption is one `UPDATE … WHERE consumed IS NULL`,
 * so of two daemons redeeming one code exactly one succeeds; the payload
 * is kept as written (`json`, not re-encoded) and `consumed` added on read.
 * Rows past their end are invisible to every read and swept as writes go.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { asNumber, type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { type OidcPayload, OidcStore, OidcStoreError, type OidcStoreService, SESSION_MODEL } from "./OidcStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "oidc-1",
    statements: [
      `create table campusgate_oidc_entries (
        model text not null,
        id text not null,
        payload text not null,
        grant_id text,
        session_uid text,
        expires_at bigint,
        consumed bigint,
        primary key (model, id)
      )`,
      "create index campusgate_oidc_entries_grant on campusgate_oidc_entries (grant_id) where grant_id is not null",
      "create index campusgate_oidc_entries_uid on campusgate_oidc_entries (session_uid) where session_uid is not null",
      "create index campusgate_oidc_entries_expires on campusgate_oidc_entries (expires_at) where expires_at is not null"
    ]
  }
]

/** One write in this many also sweeps the rows past their end. */
const SWEEP_EVERY = 200

interface Row {
  readonly payload: string
  readonly consumed: unknown
}

const makePostgresOidcStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const fail = (operation: OidcStoreError["operation"]) =>
    Effect.mapError((cause: unknown) => new OidcStoreError({ operation, cause }))
  const decoded = (row: Row | undefined): OidcPayload | undefined => {
    if (row === undefined) return undefined
    const payload = JSON.parse(row.payload) as Record<string, unknown>
    return row.consumed === null || row.consumed === undefined
      ? payload
      : { ...payload, consumed: asNumber(row.consumed) }
  }
  const live = (now: number) => sql`(expires_at is null or expires_at > ${now})`
  let writes = 0
  const sweep = (now: number) =>
    ++writes % SWEEP_EVERY === 0
      ? Effect.ignore(bounded(sql`delete from campusgate_oidc_entries where expires_at <= ${now}`))
      : Effect.void
  const store: OidcStoreService = {
    upsert: (model, id, payload, expiresInSeconds) =>
      Effect.gen(function* () {
        const now = Date.now()
        yield* sweep(now)
        const expiresAt = expiresInSeconds === undefined ? null : now + Math.max(1, Math.ceil(expiresInSeconds * 1000))
        const grantId = typeof payload.grantId === "string" ? payload.grantId : null
        const uid = model === SESSION_MODEL && typeof payload.uid === "string" ? payload.uid : null
        yield* bounded(
          sql`insert into campusgate_oidc_entries (model, id, payload, grant_id, session_uid, expires_at, consumed)
            values (${model}, ${id}, ${JSON.stringify(payload)}, ${grantId}, ${uid}, ${expiresAt}, null)
            on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id,
              session_uid = excluded.session_uid, expires_at = excluded.expires_at, consumed = null`
        )
      }).pipe(fail("upsert")),
    find: (model, id) =>
      bounded(
        sql<Row>`select payload, consumed from campusgate_oidc_entries
          where model = ${model} and id = ${id} and ${live(Date.now())}`
      ).pipe(
        Effect.map(([row]) => decoded(row)),
        fail("find")
      ),
    findSessionByUid: (uid) =>
      bounded(
        sql<Row>`select payload, consumed from campusgate_oidc_entries
          where model = ${SESSION_MODEL} and session_uid = ${uid} and ${live(Date.now())}
          order by expires_at desc nulls first limit 1`
      ).pipe(
        Effect.map(([row]) => decoded(row)),
        fail("find")
      ),
    consume: (model, id) => {
      const now = Date.now()
      return bounded(
        sql`update campusgate_oidc_entries set consumed = ${Math.floor(now / 1000)}
          where model = ${model} and id = ${id} and consumed is null and ${live(now)}
          returning 1 as taken`
      ).pipe(
        Effect.map((rows) => rows.length === 1),
        fail("consume")
      )
    },
    destroy: (model, id) =>
      bounded(sql`delete from campusgate_oidc_entries where model = ${model} and id = ${id}`).pipe(
        Effect.asVoid,
        fail("destroy")
      ),
    revokeByGrantId: (grantId) =>
      bounded(sql`delete from campusgate_oidc_entries where grant_id = ${grantId}`).pipe(Effect.asVoid, fail("revoke"))
  }
  return store
})

/** The store in the shared PostgreSQL database. */
export const layerPostgres: Layer.Layer<OidcStore, never, PostgresConnection> = Layer.effect(
  OidcStore,
  makePostgresOidcStore
)
