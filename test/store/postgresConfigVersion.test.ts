/**
 * The configuration version over PostgreSQL: a daemon watching it reloads
 * when another daemon (a pool of its own on the same database) changes an
 * API-created resource — within a second, also when its listening
 * connection was cut — and not when nothing changed.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { postgresClientLayer } from "../../src/store/postgres.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { dropListeners, timeUntil } from "../postgresListening.ts"
import { describePostgres, TestDatabase, testPostgresLayer } from "../postgresTesting.ts"

describePostgres("the configuration version in PostgreSQL", () => {
  it.live("makes a daemon reload within a second of another's change, and only then", () =>
    Effect.gen(function* () {
      const { url } = yield* TestDatabase
      let reloads = 0
      yield* ConfigVersion.watchConfigVersion(
        Effect.sync(() => {
          reloads++
        })
      )
      const other = Context.get(
        yield* Layer.build(ResourcePostgres.layerPostgres.pipe(Layer.provide(postgresClientLayer(url)))),
        ResourceStore
      )
      yield* other.write("offer", "spring", "version: 1\n")
      expect(yield* timeUntil(() => reloads === 1, 1000)).toBeLessThan(1000)
      // Reads, and a write that lost its comparison, change nothing: no reload.
      yield* other.list("offer")
      expect(yield* other.write("offer", "spring", "version: other\n", null)).toBe(false)
      yield* other.remove("offer", "autumn")
      yield* Effect.sleep(`${ConfigVersion.VERSION_POLL_MS * 2} millis`)
      expect(reloads).toBe(1)
      // A cut listening connection: the poll still carries the change within a second.
      expect(yield* dropListeners).toBe(1)
      yield* other.remove("offer", "spring")
      expect(yield* timeUntil(() => reloads === 2, 1000)).toBeLessThan(1000)
    }).pipe(
      Effect.scoped,
      Effect.provide(testPostgresLayer([...ConfigVersion.migrations, ...ResourcePostgres.migrations]))
    )
  )
})
