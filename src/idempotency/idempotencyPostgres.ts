/**
 * The idempotency store's PostgreSQL adapter, shared by every daemon: a row
 * per key, the record as JSON and the time it holds until. A claim is one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` the held row has lapsed, so of
 * concurrent claims exactly one wins, and a daemon that dies mid-request
 * leaves a claim that lapses by itself; an answer replaces it, kept for its
 * day; a release deletes the claim only while it is the releasing
 * request's. Rows past their time hold nothing and are swept as claims go.
 * A write whose reply was lost (the connection dropped as it committed) is
 * settled by asking whether the row is as it wrote it
 * (`store/postgresLostReply.ts`): a claim the server kept is this
 * request's, not a running one that refuses its retry for minutes.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { settlingLostReply } from "../store/postgresLostReply.ts"
import {
  IdempotencyRecord,
  IdempotencyStore,
  IdempotencyStoreError,
  type IdempotencyStoreService,
  liveRecord
} from "./IdempotencyStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "idempotency-1",
    statements: [
      `create table campusgate_idempotency (
        key text primary key,
        record jsonb not null,
        holds_until bigint not null
      )`,
      "create index campusgate_idempotency_holds_until on campusgate_idempotency (holds_until)"
    ]
  }
]

const decodeRecord = Schema.decodeUnknownSync(IdempotencyRecord)
const encodeRecord = Schema.encodeSync(IdempotencyRecord)

/** One claim in this many also sweeps the rows past their time. */
const SWEEP_EVERY = 500
/** A claim that met a row committed after its statement began asks again; never more than this. */
const CLAIM_ATTEMPTS = 3

const makePostgresIdempotencyStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const failed = (operation: IdempotencyStoreError["operation"]) => (cause: unknown) =>
    new IdempotencyStoreError({ operation, cause })
  let claims = 0
  const sweep = (now: number) =>
    ++claims % SWEEP_EVERY === 0
      ? Effect.ignore(bounded(sql`delete from campusgate_idempotency where holds_until <= ${now}`))
      : Effect.void
  /** Whether `key`'s row holds `record` (JSON) as written: a write of it whose reply was lost was committed. */
  const holds = (key: string, record: string) =>
    sql<{ readonly ours: boolean }>`
      select record = ${record}::jsonb as ours from campusgate_idempotency where key = ${key}`.pipe(
      Effect.map(([row]) => row?.ours === true)
    )
  const attempt = (key: string, claim: string, now: number, until: number) =>
    settlingLostReply(
      bounded(
        sql<{ readonly claimed: boolean; readonly held: unknown }>`
        with claimed as (
          insert into campusgate_idempotency (key, record, holds_until)
          values (${key}, ${claim}::jsonb, ${until})
          on conflict (key) do update set record = excluded.record, holds_until = excluded.holds_until
            where campusgate_idempotency.holds_until <= ${now}
          returning 1
        )
        select exists (select 1 from claimed) as claimed,
          (select record from campusgate_idempotency where key = ${key}) as held`
      ),
      holds(key, claim),
      [{ claimed: true, held: null }]
    )
  const store: IdempotencyStoreService = {
    claim: (key, fingerprint, now, until) =>
      Effect.gen(function* () {
        yield* sweep(now)
        const claim = JSON.stringify(encodeRecord({ state: "running", fingerprint, until }))
        for (let tries = 1; ; tries++) {
          const [row] = yield* attempt(key, claim, now, until)
          if (row?.claimed) return undefined
          // The row that held the key was committed after this statement's snapshot: read it again.
          const held = row?.held === null || row?.held === undefined ? undefined : decodeRecord(row.held)
          if (held !== undefined || tries >= CLAIM_ATTEMPTS) return liveRecord(held, now)
        }
      }).pipe(Effect.mapError(failed("claim"))),
    answer: (key, fingerprint, answer, expiresAt) => {
      const record = JSON.stringify(encodeRecord({ state: "answered", fingerprint, expiresAt, answer }))
      return settlingLostReply(
        bounded(
          sql`insert into campusgate_idempotency (key, record, holds_until) values (${key}, ${record}::jsonb, ${expiresAt})
            on conflict (key) do update set record = excluded.record, holds_until = excluded.holds_until`
        ).pipe(Effect.asVoid),
        holds(key, record),
        undefined
      ).pipe(Effect.mapError(failed("answer")))
    },
    release: (key, fingerprint, until) => {
      const claim = JSON.stringify(encodeRecord({ state: "running", fingerprint, until }))
      return settlingLostReply(
        bounded(sql`delete from campusgate_idempotency where key = ${key} and record = ${claim}::jsonb`).pipe(
          Effect.asVoid
        ),
        Effect.map(holds(key, claim), (held) => !held),
        undefined
      ).pipe(Effect.mapError(failed("release")))
    }
  }
  return store
})

/** The store in the shared PostgreSQL database. */
export const layerPostgres: Layer.Layer<IdempotencyStore, never, PostgresConnection> = Layer.effect(
  IdempotencyStore,
  makePostgresIdempotencyStore
)
