/**
 * A transaction whose connection is lost mid-way, against the real server
 * through the loopback fault proxy: it fails as a store outage (which the
 * server answers 503, and a background writer retries), never as a defect
 * (a 500, or a background fiber ended for good); and the usage statistics
 * of a daemon whose connections drop mid-flush count every validation once.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import * as UsagePostgres from "../../src/stats/usagePostgres.ts"
import { isStoreOutage } from "../../src/store/outage.ts"
import {
  PgClient,
  PostgresBreaker,
  PostgresOutage,
  postgresClientLayer,
  postgresStoreLayer
} from "../../src/store/postgres.ts"
import { describePostgres, testDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { eligible } from "../stats/fixtures.ts"
import { startFaultProxy } from "../support/faultProxy.ts"

const upstream = () => {
  const server = new URL(testPostgresUrl)
  return { host: server.hostname, port: Number(server.port || 5432) }
}

describePostgres("a PostgreSQL connection lost mid-transaction", () => {
  it.live("fails the transaction as an outage, not a defect", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startFaultProxy(upstream())),
        (proxy) => Effect.promise(() => proxy.close())
      )
      const exit = yield* Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const { bounded } = yield* PostgresBreaker
        return yield* Effect.exit(
          bounded(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`select 1`
                proxy.drop()
                yield* sql`select 2`
              })
            )
          )
        )
      }).pipe(Effect.provide(postgresClientLayer(proxy.url(database.url))))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(exit.cause.reasons.map((reason) => reason._tag)).toEqual(["Fail"])
        const [reason] = exit.cause.reasons
        expect(reason?._tag === "Fail" ? reason.error : undefined).toBeInstanceOf(PostgresOutage)
        expect(isStoreOutage(reason?._tag === "Fail" ? reason.error : undefined)).toBe(true)
      }
    }).pipe(Effect.scoped)
  )

  it.live("counts every validation once when connections drop while usage is flushed", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startFaultProxy(upstream())),
        (proxy) => Effect.promise(() => proxy.close())
      )
      const store = postgresStoreLayer({ url: proxy.url(database.url), migrations: UsagePostgres.migrations })
      const statistics = UsageStatistics.layer({ flushIntervalMs: 20 }).pipe(
        Layer.provide(UsagePostgres.layerPostgres),
        Layer.provide(store),
        Layer.orDie
      )
      const total = yield* Effect.gen(function* () {
        const usage = yield* UsageStatistics
        for (let i = 0; i < 60; i++) {
          usage.record("offer", `u${i}@mit.edu`, eligible(`u${i}@mit.edu`))
          // Every third round the connections drop as a flush may be writing; every fifth a commit's reply is lost.
          if (i % 3 === 0) proxy.drop()
          if (i % 5 === 0) void proxy.loseReplies((chunk) => chunk.includes("COMMIT\0"))
          yield* Effect.sleep("15 millis")
        }
        // The background flush carries on after the faults: everything is stored, once.
        const stored = yield* Effect.gen(function* () {
          const sql = yield* PgClient.PgClient
          for (let tries = 0; tries < 100; tries++) {
            const [row] = yield* sql<{ n: string }>`
              select n from campusgate_usage_counters where offer_id = 'offer' and field = 'validations'`
            if (row !== undefined && Number(row.n) >= 60) break
            yield* Effect.sleep("50 millis")
          }
          yield* Effect.sleep("200 millis")
          const [row] = yield* sql<{ n: string }>`
            select n from campusgate_usage_counters where offer_id = 'offer' and field = 'validations'`
          return Number(row?.n ?? 0)
        }).pipe(Effect.provide(postgresClientLayer(database.url)))
        return stored
      }).pipe(Effect.provide(statistics))
      expect(total).toBe(60)
    }).pipe(Effect.scoped)
  )
})
