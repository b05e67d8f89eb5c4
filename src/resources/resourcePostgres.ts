/**
 * The resource store's PostgreSQL adapter: a row per resource
 * (`campusgate_resources`: kind, id → YAML document), so every daemon
 * sharing the database reads the same documents. A write is one statement
 * that is its own comparison: an upsert when unconditional, `INSERT … ON
 * CONFLICT DO NOTHING` for a new id, `UPDATE … WHERE text = <expected>`
 * over a change (which, when another daemon's change commits first, finds
 * the text no longer expected and changes nothing). A write or removal that
 * changed something bumps the configuration version and announces it in
 * the same transaction (`store/postgresConfigVersion.ts`, whose
 * `migrations` the schema needs beside these), so the other daemons reload
 * within a second. A failure is a `ResourceStoreError` (503) and changed
 * nothing: a write whose reply was lost (the connection dropped as it
 * committed) is answered as done when the row holds what it wrote, a
 * removal when the row is gone (`store/postgresLostReply.ts`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { announce, configVersion } from "../store/postgresConfigVersion.ts"
import { settlingLostReply } from "../store/postgresLostReply.ts"
import type { ResourceDocument, ResourceKind } from "./ResourceDocument.ts"
import { ResourceStore, ResourceStoreError } from "./ResourceStore.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "resources-1",
    statements: [
      `create table campusgate_resources (
        kind text not null,
        id text not null,
        text text not null,
        primary key (kind, id)
      )`
    ]
  }
]

/** The adapter's service over the connection in force. */
const makePostgresResourceStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  const documentOf = (kind: ResourceKind, id: string, text: string): ResourceDocument => ({
    kind,
    id,
    location: `postgres:campusgate_resources/${kind}/${id}`,
    text
  })
  const fail = (operation: ResourceStoreError["operation"], id?: string) => (cause: unknown) =>
    new ResourceStoreError({ operation, ...(id === undefined ? {} : { id }), cause })
  /** Runs `change` (answering the rows it changed) and announces it when it changed any, in one transaction. */
  const announced = <E>(item: string, change: Effect.Effect<ReadonlyArray<unknown>, E>) =>
    bounded(
      sql.withTransaction(
        Effect.gen(function* () {
          const changed = (yield* change).length > 0
          if (changed) yield* announce(sql, configVersion, item)
          return changed
        })
      )
    )
  const writing = (kind: ResourceKind, id: string, text: string, expected: string | null | undefined) =>
    expected === undefined
      ? sql`insert into campusgate_resources (kind, id, text) values (${kind}, ${id}, ${text})
          on conflict (kind, id) do update set text = excluded.text returning 1`
      : expected === null
        ? sql`insert into campusgate_resources (kind, id, text) values (${kind}, ${id}, ${text})
            on conflict (kind, id) do nothing returning 1`
        : sql`update campusgate_resources set text = ${text}
            where kind = ${kind} and id = ${id} and text = ${expected} returning 1`
  return ResourceStore.of({
    list: (kind) =>
      bounded(
        sql<{ readonly id: string; readonly text: string }>`
          select id, text from campusgate_resources where kind = ${kind} order by id collate "C"`
      ).pipe(
        Effect.map((rows) => rows.map((row) => documentOf(kind, row.id, row.text))),
        Effect.mapError(fail("list"))
      ),
    read: (kind, id) =>
      bounded(
        sql<{ readonly text: string }>`select text from campusgate_resources where kind = ${kind} and id = ${id}`
      ).pipe(
        Effect.map(([row]) => (row === undefined ? undefined : documentOf(kind, id, row.text))),
        Effect.mapError(fail("read", id))
      ),
    write: (kind, id, text, expected) =>
      settlingLostReply(
        announced(`${kind}:${id}`, writing(kind, id, text, expected)),
        sql`select 1 from campusgate_resources where kind = ${kind} and id = ${id} and text = ${text}`.pipe(
          Effect.map((rows) => rows.length > 0)
        ),
        true
      ).pipe(Effect.mapError(fail("write", id))),
    remove: (kind, id) =>
      settlingLostReply(
        announced(
          `${kind}:${id}`,
          sql`delete from campusgate_resources where kind = ${kind} and id = ${id} returning 1`
        ),
        sql`select 1 from campusgate_resources where kind = ${kind} and id = ${id}`.pipe(
          Effect.map((rows) => rows.length === 0)
        ),
        true
      ).pipe(Effect.asVoid, Effect.mapError(fail("remove", id)))
  })
})

/** A row per resource in the shared database; a change makes every daemon reload. */
export const layerPostgres: Layer.Layer<ResourceStore, never, PostgresConnection> = Layer.effect(
  ResourceStore,
  makePostgresResourceStore
)
