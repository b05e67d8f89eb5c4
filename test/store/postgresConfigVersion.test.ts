/**
 * The configuration version over PostgreSQL: a daemon watching it reloads
 * when another daemon (a pool of its own on the same database) changes an
 * API-created resource, an API key or a review decision — within a second, also when its
 * listening connection was cut — and not when nothing changed.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ApiKeyId, ApiKeyRecord } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import * as ApiKeyPostgres from "../../src/keys/apiKeyPostgres.ts"
import { hashApiKey } from "../../src/keys/apiKeys.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { ReviewStore } from "../../src/reviews/ReviewStore.ts"
import * as ReviewPostgres from "../../src/reviews/reviewPostgres.ts"
import { postgresClientLayer } from "../../src/store/postgres.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { universityApproval } from "../fixtures.ts"
import { dropListeners, timeUntil } from "../postgresListening.ts"
import { describePostgres, TestDatabase, testPostgresLayer } from "../postgresTesting.ts"

const schema = [
  ...ConfigVersion.migrations,
  ...ResourcePostgres.migrations,
  ...ApiKeyPostgres.migrations,
  ...ReviewPostgres.migrations
]

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
    }).pipe(Effect.scoped, Effect.provide(testPostgresLayer(schema)))
  )

  it.live("makes a daemon reload when another decides on a domain", () =>
    Effect.gen(function* () {
      const { url } = yield* TestDatabase
      let reloads = 0
      yield* ConfigVersion.watchConfigVersion(
        Effect.sync(() => {
          reloads++
        })
      )
      const reviews = Context.get(
        yield* Layer.build(ReviewPostgres.layerPostgres.pipe(Layer.provide(postgresClientLayer(url)))),
        ReviewStore
      )
      yield* reviews.decide({
        kind: "approve",
        approval: universityApproval("acme", "hfmt-hamburg.de", "HfMT Hamburg", new Date().toISOString())
      })
      expect(yield* timeUntil(() => reloads === 1, 1000)).toBeLessThan(1000)
    }).pipe(Effect.scoped, Effect.provide(testPostgresLayer(schema)))
  )

  it.live("makes a daemon reload when another adds or revokes an API key", () =>
    Effect.gen(function* () {
      const { url } = yield* TestDatabase
      let reloads = 0
      yield* ConfigVersion.watchConfigVersion(
        Effect.sync(() => {
          reloads++
        })
      )
      const keys = Context.get(
        yield* Layer.build(
          ApiKeyPostgres.layerPostgres(mkdtempSync(join(tmpdir(), "campusgate-keys-"))).pipe(
            Layer.provide(postgresClientLayer(url))
          )
        ),
        ApiKeyStore
      )
      const record: ApiKeyRecord = {
        id: "key_announce" as ApiKeyId,
        team: "acme" as TeamId,
        scopes: ["offers:read"],
        hash: hashApiKey("cgk_key_announce"),
        createdAt: "2026-11-01T00:00:00.000Z"
      }
      yield* keys.add(record, false)
      expect(yield* timeUntil(() => reloads === 1, 1000)).toBeLessThan(1000)
      yield* keys.revoke(record.id, "2026-11-02T00:00:00.000Z")
      expect(yield* timeUntil(() => reloads === 2, 1000)).toBeLessThan(1000)
    }).pipe(Effect.scoped, Effect.provide(testPostgresLayer(schema)))
  )
})
