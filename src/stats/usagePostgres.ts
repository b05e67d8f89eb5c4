/**
 * The usage store's PostgreSQL adapter, shared by every daemon: per offer a
 * row of `campusgate_usage_offers` (first and last instants, the
 * HyperLogLog registers of unique emails as `bytea`), its counters as rows
 * of `campusgate_usage_counters` (offer, field as `usageCounters.ts` names
 * it, count) and the steps applied once per source in
 * `campusgate_usage_steps`.
 *
 * A delta is added in one transaction: for a step, an upsert of the
 * source's row that writes only a later step (else nothing is added, and
 * the row lock orders a retry behind the first); then the offer's row,
 * upserted with the instants widened and the registers merged by the
 * register-wise maximum in the statement (`campusgate_usage_merge_registers`,
 * a function of the migration), which locks the row, so the offer's
 * deltas are added one after another; then every counter with `INSERT … ON
 * CONFLICT DO UPDATE SET n = n + excluded.n`. So deltas from every daemon
 * add up exactly, and a checkpoint stored again by the daemon that took a
 * job over changes nothing. A read is one statement: the offer's row and
 * its counters from one snapshot.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { asNumber, type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { REGISTER_COUNT } from "./HyperLogLog.ts"
import type { UsageState } from "./UsageState.ts"
import { UsageStore, UsageStoreError } from "./UsageStore.ts"
import { counterIncrements, stateOfCounters } from "./usageCounters.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "usage-1",
    statements: [
      `create table campusgate_usage_offers (
        offer_id text primary key,
        first_at bigint,
        last_at bigint,
        registers bytea
      )`,
      `create table campusgate_usage_counters (
        offer_id text not null,
        field text not null,
        n bigint not null,
        primary key (offer_id, field)
      )`,
      `create table campusgate_usage_steps (
        offer_id text not null,
        source text not null,
        step bigint not null,
        primary key (offer_id, source)
      )`,
      // Both values are read whole once (a stored value comes compressed, and
      // reading a byte of it would decompress it each time); a register is
      // written only where the delta's is larger: ~2 ms a merge when few
      // change, ~15 ms when all 16,384 do (an offer's first delta).
      `create function campusgate_usage_merge_registers(stored bytea, delta bytea) returns bytea
      language plpgsql immutable as $$
      declare
        merged bytea;
        added bytea;
        value integer;
      begin
        if stored is null then return delta; end if;
        if delta is null then return stored; end if;
        merged := stored || '\\x'::bytea;
        added := delta || '\\x'::bytea;
        for i in 0 .. least(length(merged), length(added)) - 1 loop
          value := get_byte(added, i);
          if value > get_byte(merged, i) then merged := set_byte(merged, i, value); end if;
        end loop;
        return merged;
      end
      $$`
    ]
  }
]

interface OfferRow {
  readonly first_at: unknown
  readonly last_at: unknown
  readonly registers: Uint8Array | null
  readonly counters: Record<string, unknown> | null
}

const makePostgresUsageStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const failed = (operation: UsageStoreError["operation"], offerId?: string) => (cause: unknown) =>
    new UsageStoreError({ operation, ...(offerId === undefined ? {} : { offerId }), cause })

  const add = (
    offerId: string,
    once: { readonly source: string; readonly step: number } | undefined,
    delta: UsageState
  ) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          if (once !== undefined) {
            const taken = yield* sql`
              insert into campusgate_usage_steps (offer_id, source, step) values (${offerId}, ${once.source}, ${once.step})
              on conflict (offer_id, source) do update set step = excluded.step
                where campusgate_usage_steps.step < excluded.step
              returning 1`
            if (taken.length === 0) return
          }
          yield* sql`
            insert into campusgate_usage_offers as o (offer_id, first_at, last_at, registers)
            values (${offerId}, ${delta.firstAt}::bigint, ${delta.lastAt}::bigint, ${delta.registers}::bytea)
            on conflict (offer_id) do update set
              first_at = least(o.first_at, excluded.first_at),
              last_at = greatest(o.last_at, excluded.last_at),
              registers = campusgate_usage_merge_registers(o.registers, excluded.registers)`
          const increments = counterIncrements(delta).map(([field, n]) => ({ field, n }))
          if (increments.length === 0) return
          yield* sql`
            insert into campusgate_usage_counters as c (offer_id, field, n)
            select ${offerId}, i.field, i.n from jsonb_to_recordset(${JSON.stringify(increments)}::jsonb)
              as i(field text, n bigint)
            on conflict (offer_id, field) do update set n = c.n + excluded.n`
        })
      )
      .pipe(bounded, Effect.mapError(failed("apply", offerId)))

  return UsageStore.of({
    apply: (offerId, delta) => add(offerId, undefined, delta),
    applyOnce: (offerId, source, step, delta) => add(offerId, { source, step }, delta),
    forget: (offerId, source) =>
      bounded(sql`delete from campusgate_usage_steps where offer_id = ${offerId} and source = ${source}`).pipe(
        Effect.asVoid,
        Effect.mapError(failed("forget", offerId))
      ),
    get: (offerId) =>
      bounded(
        sql<OfferRow>`
          select o.first_at, o.last_at, o.registers,
            (select jsonb_object_agg(c.field, c.n) from campusgate_usage_counters c where c.offer_id = o.offer_id)
              as counters
          from campusgate_usage_offers o where o.offer_id = ${offerId}`
      ).pipe(
        Effect.mapError(failed("get", offerId)),
        Effect.flatMap(([row]) =>
          Effect.try({
            try: () => {
              if (row === undefined) return undefined
              const fields = Object.entries(row.counters ?? {}).map(([field, n]) => [field, asNumber(n)] as const)
              if (row.first_at !== null) fields.push(["firstAt", asNumber(row.first_at)])
              if (row.last_at !== null) fields.push(["lastAt", asNumber(row.last_at)])
              if (fields.length === 0 && row.registers === null) return undefined
              if (row.registers !== null && row.registers.length !== REGISTER_COUNT) {
                throw new Error(`expected ${REGISTER_COUNT} HyperLogLog registers, found ${row.registers.length}`)
              }
              return stateOfCounters(fields, row.registers === null ? null : new Uint8Array(row.registers))
            },
            catch: failed("get", offerId)
          })
        )
      ),
    offerIds: () =>
      bounded(sql<{ readonly offer_id: string }>`select offer_id from campusgate_usage_offers order by offer_id`).pipe(
        Effect.map((rows) => rows.map((row) => row.offer_id)),
        Effect.mapError(failed("get"))
      ),
    applied: (offerId) =>
      bounded(
        sql<{ readonly source: string; readonly step: unknown }>`
          select source, step from campusgate_usage_steps where offer_id = ${offerId}`
      ).pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.source, asNumber(row.step)] as const))),
        Effect.mapError(failed("get", offerId))
      )
  })
})

/** Counters, the registers of unique emails and the steps applied once, per offer, in the shared PostgreSQL database. */
export const layerPostgres: Layer.Layer<UsageStore, never, PostgresConnection> = Layer.effect(
  UsageStore,
  makePostgresUsageStore
)
