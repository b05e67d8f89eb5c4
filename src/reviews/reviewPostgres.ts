/**
 * The review store's PostgreSQL adapter. A row per team and domain of the
 * queue (`campusgate_reviews_queue`, the entry as `jsonb`), the dropped
 * counts by team (`campusgate_reviews_dropped`) and a row per team and
 * domain decided (`campusgate_reviews_decisions`: approve or reject and its
 * JSON — one row, so a decision replaces the other by its key).
 *
 * A flush is one transaction for every team of the batch: it reads the
 * entries it adds to, merges them as the memory adapter does
 * (`queueEntries.ts` `mergeEntry`), writes them back, lets go of each
 * team's undecided entries past its bound (most met, then most likely, then
 * by name, kept) and adds them to its dropped count. A decision is one
 * transaction that upserts it and bumps the configuration version
 * (`store/postgresConfigVersion.ts`, whose `migrations` the schema needs
 * beside these), so every daemon reloads its approvals within a second.
 * Both hold one transaction-scoped advisory lock (`REVIEWS_LOCK`), so
 * daemons flushing together add up, and a domain decided while a flush
 * bounds its team's queue is never let go.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ReviewedInstitution, ReviewRejection } from "../domain/InstitutionReview.ts"
import { asNumber, type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { announce, configVersion } from "../store/postgresConfigVersion.ts"
import { mergeEntry, oldestDayKept, type QueueBatch, type QueueEntry, StoredEntry } from "./queueEntries.ts"
import { decisionKey, type RecordOptions, type ReviewDecision, ReviewStore, ReviewStoreError } from "./ReviewStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "reviews-1",
    statements: [
      `create table campusgate_reviews_queue (
        team text not null,
        domain text not null,
        entry jsonb not null,
        primary key (team, domain)
      )`,
      `create table campusgate_reviews_dropped (
        team text primary key,
        dropped bigint not null
      )`,
      `create table campusgate_reviews_decisions (
        team text not null,
        domain text not null,
        kind text not null check (kind in ('approve', 'reject')),
        decision text not null,
        primary key (team, domain)
      )`
    ]
  }
]

/** Any fixed number: the advisory lock flushes and decisions take, one at a time across daemons. */
const REVIEWS_LOCK = 0x63677276

const decodeEntry = Schema.decodeUnknownSync(StoredEntry)
const decodeApproval = Schema.decodeUnknownSync(Schema.fromJsonString(ReviewedInstitution))
const decodeRejection = Schema.decodeUnknownSync(Schema.fromJsonString(ReviewRejection))

/** An entry as read, its days its own to change. */
const entryOf = (stored: unknown): QueueEntry => {
  const entry = decodeEntry(stored)
  return { ...entry, days: { ...entry.days } }
}

/** The adapter's service over the connection in force. */
const makePostgresReviewStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const fail = (operation: ReviewStoreError["operation"]) => (cause: unknown) =>
    new ReviewStoreError({ operation, cause })
  const locked = <A, E>(change: Effect.Effect<A, E>) =>
    bounded(sql.withTransaction(Effect.andThen(sql`select pg_advisory_xact_lock(${REVIEWS_LOCK})`, change)))

  const record = (batch: QueueBatch, options: RecordOptions) =>
    Effect.gen(function* () {
      const oldest = oldestDayKept(options.now)
      const keys = [...batch].flatMap(([team, queue]) => [...queue.entries.keys()].map((domain) => ({ team, domain })))
      const held = yield* sql<{ readonly team: string; readonly domain: string; readonly entry: unknown }>`
        select q.team, q.domain, q.entry from campusgate_reviews_queue q
        join jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) as k(team text, domain text)
          on q.team = k.team and q.domain = k.domain`
      const current = new Map(held.map((row) => [decisionKey(row.team, row.domain), entryOf(row.entry)]))
      const merged = [...batch].flatMap(([team, queue]) =>
        [...queue.entries.values()].map((delta) => ({
          team,
          domain: delta.domain,
          entry: mergeEntry(current.get(decisionKey(team, delta.domain)), delta, oldest)
        }))
      )
      yield* sql`insert into campusgate_reviews_queue (team, domain, entry)
        select team, domain, entry from jsonb_to_recordset(${JSON.stringify(merged)}::jsonb)
          as m(team text, domain text, entry jsonb)
        on conflict (team, domain) do update set entry = excluded.entry`
      const teams = [...batch.keys()]
      const gone = yield* sql<{ readonly team: string; readonly gone: unknown }>`
        with ranked as (
          select q.team, q.domain, row_number() over (
            partition by q.team
            order by (q.entry->>'count')::numeric desc, (q.entry->'candidate'->>'score')::numeric desc,
              q.domain collate "C"
          ) as place
          from campusgate_reviews_queue q
          where q.team in (select jsonb_array_elements_text(${JSON.stringify(teams)}::jsonb))
            and not exists (
              select 1 from campusgate_reviews_decisions d where d.team = q.team and d.domain = q.domain
            )
        ), deleted as (
          delete from campusgate_reviews_queue q using ranked
          where q.team = ranked.team and q.domain = ranked.domain and ranked.place > ${options.maxPerTeam}
          returning q.team
        )
        select team, count(*) as gone from deleted group by team`
      const goneBy = new Map(gone.map((row) => [row.team, asNumber(row.gone)]))
      const dropped = [...batch]
        .map(([team, queue]) => ({ team, dropped: queue.dropped + (goneBy.get(team) ?? 0) }))
        .filter((row) => row.dropped > 0)
      if (dropped.length > 0)
        yield* sql`insert into campusgate_reviews_dropped (team, dropped)
          select team, dropped from jsonb_to_recordset(${JSON.stringify(dropped)}::jsonb) as d(team text, dropped bigint)
          on conflict (team) do update set dropped = campusgate_reviews_dropped.dropped + excluded.dropped`
    })

  return ReviewStore.of({
    record: (batch, options) =>
      batch.size === 0 ? Effect.void : locked(record(batch, options)).pipe(Effect.mapError(fail("record"))),
    teams: () =>
      bounded(
        sql<{ readonly team: string }>`select team from campusgate_reviews_queue
          union select team from campusgate_reviews_dropped`
      ).pipe(
        Effect.map((rows) => rows.map((row) => row.team)),
        Effect.mapError(fail("read"))
      ),
    queue: (team) =>
      bounded(
        Effect.all([
          sql<{ readonly entry: unknown }>`select entry from campusgate_reviews_queue where team = ${team}`,
          sql<{ readonly dropped: unknown }>`select dropped from campusgate_reviews_dropped where team = ${team}`
        ])
      ).pipe(
        Effect.flatMap(([entries, [dropped]]) =>
          Effect.try(() => ({
            entries: entries.map((row) => entryOf(row.entry)),
            dropped: dropped === undefined ? 0 : asNumber(dropped.dropped)
          }))
        ),
        Effect.mapError(fail("read"))
      ),
    entry: (team, domain) =>
      bounded(
        sql<{ readonly entry: unknown }>`
          select entry from campusgate_reviews_queue where team = ${team} and domain = ${domain}`
      ).pipe(
        Effect.flatMap(([row]) => Effect.try(() => (row === undefined ? undefined : entryOf(row.entry)))),
        Effect.mapError(fail("read"))
      ),
    decide: (decision: ReviewDecision) => {
      const made = decision.kind === "approve" ? decision.approval : decision.rejection
      return locked(
        Effect.andThen(
          sql`insert into campusgate_reviews_decisions (team, domain, kind, decision)
            values (${made.team}, ${made.domain}, ${decision.kind}, ${JSON.stringify(made)})
            on conflict (team, domain) do update set kind = excluded.kind, decision = excluded.decision`,
          announce(sql, configVersion)
        )
      ).pipe(Effect.mapError(fail("decide")))
    },
    decisions: (team) =>
      bounded(
        team === undefined
          ? sql<{ readonly kind: string; readonly decision: string }>`
              select kind, decision from campusgate_reviews_decisions`
          : sql<{ readonly kind: string; readonly decision: string }>`
              select kind, decision from campusgate_reviews_decisions where team = ${team}`
      ).pipe(
        Effect.flatMap((rows) =>
          Effect.try(() => {
            const byKey = <A extends { readonly team: string; readonly domain: string }>(decisions: Array<A>) =>
              decisions.sort((a, b) => (decisionKey(a.team, a.domain) < decisionKey(b.team, b.domain) ? -1 : 1))
            return {
              approvals: byKey(rows.filter((row) => row.kind === "approve").map((row) => decodeApproval(row.decision))),
              rejections: byKey(rows.filter((row) => row.kind === "reject").map((row) => decodeRejection(row.decision)))
            }
          })
        ),
        Effect.mapError(fail("read"))
      )
  })
})

/** Rows in the shared database; a decision makes every daemon reload. */
export const layerPostgres: Layer.Layer<ReviewStore, never, PostgresConnection> = Layer.effect(
  ReviewStore,
  makePostgresReviewStore
)
