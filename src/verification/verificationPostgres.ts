/**
 * The verification store's PostgreSQL adapter, shared by every daemon:
 * records as JSON in `campusgate_verification_records` (id, the keyed
 * address hash, the version, the record), and the units each record holds
 * under its limits' keys (`domain/verificationLimits.ts`, computed here) in
 * `campusgate_verification_units` (record id, key, time).
 *
 * Every write is one transaction: it first takes a transaction-scoped
 * advisory lock per limit key it adds units under or checks (in the order
 * of the locks' numbers, so two writes never wait on each other in a
 * circle), then, for a replacement, locks the record's row and compares
 * its version with the one the change was computed from; then counts, per
 * check, the units in the window as they would be after the write (each
 * statement of a READ COMMITTED transaction sees what the previous lock
 * holder committed), and refuses the write when one check would break;
 * else it replaces the record's units and the record. So of concurrent
 * writes of one address across every daemon the limits pass exactly as
 * many as one after another would, and of two replacements of one version
 * exactly one wins, as the Redis script decides (`verificationRedis.ts`).
 * A write whose reply was lost (the connection dropped as it committed) is
 * answered as done when the record is found stored as written
 * (`store/postgresLostReply.ts`): a confirmation the server kept is not
 * answered 503, to be refused on its retry as no longer pending, uncounted.
 *
 * The port's reads have no failure of their own; here a read that cannot
 * reach PostgreSQL is a defect carrying the store's error, which the server
 * answers as 503, like every request that needs the shared store while it
 * is down.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { VerificationRecord } from "../domain/Verification.ts"
import { type LimitCheck, unitsOf } from "../domain/verificationLimits.ts"
import { asNumber, type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { settlingLostReply } from "../store/postgresLostReply.ts"
import {
  LimitExceeded,
  VerificationStore,
  VerificationStoreError,
  type VerificationStoreService
} from "./VerificationStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "verification-1",
    statements: [
      `create table campusgate_verification_records (
        id text primary key,
        address_hash text not null,
        version integer not null,
        record jsonb not null
      )`,
      "create index campusgate_verification_records_address on campusgate_verification_records (address_hash)",
      `create table campusgate_verification_units (
        record_id text not null,
        key text not null,
        at bigint not null
      )`,
      "create index campusgate_verification_units_record on campusgate_verification_units (record_id)",
      "create index campusgate_verification_units_key on campusgate_verification_units (key, at)"
    ]
  }
]

const encodeRecord = Schema.encodeSync(VerificationRecord)
const decodeRecord = Schema.decodeUnknownSync(VerificationRecord)

/** The advisory lock of a limit key: a 64-bit number from its SHA-256, as text (cast in the statement). */
const lockOf = (key: string): bigint => createHash("sha256").update(key).digest().readBigInt64BE(0)

interface CountRow {
  readonly i: number
  readonly count: unknown
  readonly oldest: unknown
}

const makePostgresVerificationStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const failed = (operation: VerificationStoreError["operation"]) => (cause: unknown) =>
    new VerificationStoreError({ operation, cause })
  const read = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(Effect.mapError(bounded(effect), failed("load")))
  const decoded = (rows: ReadonlyArray<{ readonly record: unknown }>) => rows.map((row) => decodeRecord(row.record))

  /** Takes the locks of `keys`, in the order of their numbers, until the transaction ends. */
  const lockKeys = (keys: ReadonlyArray<string>) => {
    const locks = [...new Set(keys.map(lockOf))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    if (locks.length === 0) return Effect.void
    // The select list is evaluated left to right: the locks are taken in this order.
    return sql
      .unsafe(`select ${locks.map((_, i) => `pg_advisory_xact_lock($${i + 1}::bigint)`).join(", ")}`, locks.map(String))
      .pipe(Effect.asVoid)
  }

  /** The first check the record's `units` would break with every other record's units, if any. */
  const breach = (id: string, units: ReturnType<typeof unitsOf>, checks: ReadonlyArray<LimitCheck>) =>
    Effect.gen(function* () {
      if (checks.length === 0) return undefined
      const rows = yield* sql<CountRow>`
        select c.i, count(u.at) as count, min(u.at) as oldest
        from jsonb_to_recordset(${JSON.stringify(checks.map((check, i) => ({ i, ...check })))}::jsonb)
          as c(i integer, key text, since bigint)
        left join campusgate_verification_units u
          on u.key = c.key and u.at >= c.since and u.record_id <> ${id}
        group by c.i`
      const byCheck = new Map(rows.map((row) => [Number(row.i), row]))
      for (const [i, check] of checks.entries()) {
        const row = byCheck.get(i)
        let count = row === undefined ? 0 : asNumber(row.count)
        let oldest = row?.oldest === null || row?.oldest === undefined ? Number.POSITIVE_INFINITY : asNumber(row.oldest)
        for (const unit of units) {
          if (unit.key !== check.key || unit.at < check.since) continue
          count++
          if (unit.at < oldest) oldest = unit.at
        }
        if (count > check.max) return new LimitExceeded({ check, oldest })
      }
      return undefined
    })

  /**
   * Inserts or (when `expected` is a version) replaces `record` over that
   * version: true written, false the version moved (or the record is
   * gone), the refusal when a check would break (nothing written).
   */
  const write = (record: VerificationRecord, checks: ReadonlyArray<LimitCheck>, expected: number | undefined) => {
    const units = unitsOf(record)
    return sql.withTransaction(
      Effect.gen(function* () {
        yield* lockKeys([...units.map((unit) => unit.key), ...checks.map((check) => check.key)])
        if (expected !== undefined) {
          const [current] = yield* sql<{ readonly version: number }>`
            select version from campusgate_verification_records where id = ${record.id} for update`
          if (current === undefined || Number(current.version) !== expected) return false
        }
        const refused = yield* breach(record.id, units, checks)
        if (refused !== undefined) return refused
        yield* sql`
          with gone as (delete from campusgate_verification_units where record_id = ${record.id}),
            added as (
              insert into campusgate_verification_units (record_id, key, at)
              select ${record.id}, u.key, u.at
              from jsonb_to_recordset(${JSON.stringify(units)}::jsonb) as u(key text, at bigint)
            )
          insert into campusgate_verification_records (id, address_hash, version, record)
          values (${record.id}, ${record.addressHash}, ${record.version},
            ${JSON.stringify(encodeRecord(record))}::jsonb)
          on conflict (id) do update set address_hash = excluded.address_hash, version = excluded.version,
            record = excluded.record`
        return true
      })
    )
  }

  /** Whether `record` is stored as it is: a write of it whose reply was lost may have been committed. */
  const isStored = (record: VerificationRecord) =>
    sql<{ readonly ours: boolean }>`
      select record = ${JSON.stringify(encodeRecord(record))}::jsonb as ours
      from campusgate_verification_records where id = ${record.id}`.pipe(Effect.map(([row]) => row?.ours === true))

  /**
   * The write of `record` bounded, failing with the refusal or as the
   * store's own error — unless the record is stored as written after all
   * (its reply lost: `store/postgresLostReply.ts`).
   */
  const writing = (
    record: VerificationRecord,
    effect: Effect.Effect<boolean | LimitExceeded, unknown>,
    operation: VerificationStoreError["operation"]
  ): Effect.Effect<boolean, VerificationStoreError | LimitExceeded> =>
    settlingLostReply(bounded(effect), isStored(record), true).pipe(
      Effect.mapError(failed(operation)),
      Effect.flatMap((outcome) => (typeof outcome === "boolean" ? Effect.succeed(outcome) : Effect.fail(outcome)))
    )

  const store: VerificationStoreService = {
    shared: true,
    insert: (record, limits = []) => writing(record, write(record, limits, undefined), "insert").pipe(Effect.asVoid),
    replace: (record, limits = []) => writing(record, write(record, limits, record.version - 1), "replace"),
    // One statement: the records not held yet, and their units.
    insertAll: (records) =>
      records.length === 0
        ? Effect.succeed(0)
        : bounded(
            sql<{ readonly stored: unknown }>`
              with input as (
                select * from jsonb_to_recordset(${JSON.stringify(
                  records.map((record) => ({
                    id: record.id,
                    address_hash: record.addressHash,
                    version: record.version,
                    record: encodeRecord(record),
                    units: unitsOf(record)
                  }))
                )}::jsonb) as r(id text, address_hash text, version integer, record jsonb, units jsonb)
              ),
              added as (
                insert into campusgate_verification_records (id, address_hash, version, record)
                select id, address_hash, version, record from input
                on conflict (id) do nothing
                returning id
              ),
              units as (
                insert into campusgate_verification_units (record_id, key, at)
                select i.id, u.key, u.at from input i join added a on a.id = i.id,
                  jsonb_to_recordset(i.units) as u(key text, at bigint)
              )
              select count(*) as stored from added`
          ).pipe(
            Effect.map(([row]) => asNumber(row?.stored ?? 0)),
            Effect.mapError(failed("insert"))
          ),
    get: (id) =>
      read(sql<{ readonly record: unknown }>`select record from campusgate_verification_records where id = ${id}`).pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : decodeRecord(rows[0].record)))
      ),
    byAddress: (addressHash) =>
      read(
        sql<{ readonly record: unknown }>`
          select record from campusgate_verification_records where address_hash = ${addressHash} order by id`
      ).pipe(Effect.map(decoded)),
    list: () =>
      read(sql<{ readonly record: unknown }>`select record from campusgate_verification_records order by id`).pipe(
        Effect.map(decoded)
      ),
    // Keyset pages in id order: each a short query, none holding the table.
    eachPage: (size, use) =>
      Effect.gen(function* () {
        let after = ""
        while (true) {
          const rows = yield* read(
            sql<{ readonly id: string; readonly record: unknown }>`select id, record
              from campusgate_verification_records where id > ${after} order by id limit ${size}`
          )
          if (rows.length > 0) yield* use(decoded(rows))
          if (rows.length < size) return
          after = rows[rows.length - 1]!.id
        }
      }),
    remove: (id) =>
      // The record's row first, as a replacement locks it: two writes of one record never wait on each other in a circle.
      settlingLostReply(
        bounded(
          sql.withTransaction(
            Effect.andThen(
              sql`delete from campusgate_verification_records where id = ${id}`,
              sql`delete from campusgate_verification_units where record_id = ${id}`
            )
          )
        ).pipe(Effect.asVoid),
        sql`select 1 from campusgate_verification_records where id = ${id}`.pipe(
          Effect.map((rows) => rows.length === 0)
        ),
        undefined
      ).pipe(Effect.mapError(failed("remove")))
  }
  return store
})

/** Records in the shared PostgreSQL database, replaced by compare-and-set, limits decided under advisory locks. */
export const layerPostgres: Layer.Layer<VerificationStore, never, PostgresConnection> = Layer.effect(
  VerificationStore,
  makePostgresVerificationStore
)
