/**
 * A change — a resource, an API key — whose configuration cannot be read
 * back because a store went away after the write, against the real
 * PostgreSQL: the changed store written directly, and read back — the
 * changed item, else a full reload with the review store — through the
 * loopback fault proxy, partitioned off. The change is undone and refused as the store's outage (503: try
 * again), not as a change the configuration rejects (500), and once the
 * store answers the same change is made.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Keys } from "../../src/app/Keys.ts"
import { Resources } from "../../src/app/Resources.ts"
import { LiveSnapshot, Snapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import * as ApiKeyPostgres from "../../src/keys/apiKeyPostgres.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { ReviewStore } from "../../src/reviews/ReviewStore.ts"
import * as ReviewPostgres from "../../src/reviews/reviewPostgres.ts"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { makeDirs, validConfig } from "../config/configFiles.ts"
import { describePostgres, testDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { startFaultProxy } from "../support/faultProxy.ts"

/** A database of the test's own with every store's schema, and a fault proxy in front of it. */
const deployment = Effect.gen(function* () {
  const database = yield* testDatabase
  const server = new URL(testPostgresUrl)
  const proxy = yield* Effect.acquireRelease(
    Effect.promise(() => startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) })),
    (proxy) => Effect.promise(() => proxy.close())
  )
  const migrations = [
    ...ConfigVersion.migrations,
    ...ResourcePostgres.migrations,
    ...ReviewPostgres.migrations,
    ...ApiKeyPostgres.migrations
  ]
  const direct = postgresStoreLayer({ url: database.url, migrations })
  const proxied = postgresStoreLayer({ url: proxy.url(database.url), migrations })
  const reviews = yield* Layer.build(ReviewPostgres.layerPostgres.pipe(Layer.provide(proxied), Layer.orDie))
  // The resource store as the configuration reads it back, through the proxy (the writes go direct).
  const readBack = yield* Layer.build(ResourcePostgres.layerPostgres.pipe(Layer.provide(proxied), Layer.orDie))
  return {
    proxy,
    direct,
    reviewStore: Context.get(reviews, ReviewStore),
    readBackStore: Context.get(readBack, ResourceStore)
  }
})

const group = (id: string) =>
  ({ id: id as never, name: id, criteria: { domains: { allow: [`${id}.example`] } } }) as never

describePostgres("a change whose configuration cannot be read back (PostgreSQL away)", () => {
  it.live("is undone and refused as an outage, then made once the store answers", () =>
    Effect.gen(function* () {
      const { proxy, direct, reviewStore, readBackStore } = yield* deployment
      const resources = yield* Layer.build(ResourcePostgres.layerPostgres.pipe(Layer.provide(direct), Layer.orDie))
      const resourceStore = Context.get(resources, ResourceStore)
      const dirs = makeDirs(validConfig)
      // The change is read back (as one item, else by a full reload) through the partitioned connection.
      const live = yield* LiveSnapshot.make(
        directorySource({ ...dirs, env: {} }, { resources: readBackStore, reviews: reviewStore })
      )
      yield* Effect.gen(function* () {
        const service = yield* Resources
        proxy.partition()
        const refused = yield* Effect.flip(service.createTargetGroup("acme", group("staff")))
        expect(refused.reason._tag).toBe("ResourceStoreUnavailable")
        expect(yield* resourceStore.read("targetGroup", "staff")).toBeUndefined()
        proxy.heal()
        const created = yield* service.createTargetGroup("acme", group("staff"))
        expect(created.resource.team).toBe("acme")
      }).pipe(Effect.provide(Resources.layer.pipe(Layer.provideMerge(Snapshot.layer(live)))), Effect.provide(resources))
    }).pipe(Effect.scoped)
  )

  it.live("refuses an API key made as an outage, the key revoked again, then makes it once the store answers", () =>
    Effect.gen(function* () {
      const { proxy, direct, reviewStore } = yield* deployment
      const dirs = makeDirs(validConfig)
      const keysLayer = yield* Layer.build(
        ApiKeyPostgres.layerPostgres(dirs.configDir).pipe(Layer.provide(direct), Layer.orDie)
      )
      const keyStore = Context.get(keysLayer, ApiKeyStore)
      const live = yield* LiveSnapshot.make(
        directorySource({ ...dirs, env: {} }, { keys: keyStore, reviews: reviewStore })
      )
      const keys = Keys.make(keyStore, { reload: live.reload() })
      const caller = { keyId: "key_maker", team: "acme", scopes: new Set(["keys:write", "validate:offers"] as const) }
      proxy.partition()
      const refused = yield* Effect.flip(keys.createFor(caller as never, { scopes: ["validate:offers"] }))
      expect(refused.reason._tag).toBe("KeyStoreUnavailable")
      // Not made: the record stays, revoked.
      const listed = yield* keyStore.list
      const made = listed.filter(({ record }) => record.team === ("acme" as TeamId))
      expect(made.length).toBe(1)
      expect(made.every(({ record }) => record.revokedAt !== undefined)).toBe(true)
      proxy.heal()
      const again = yield* keys.createFor(caller as never, { scopes: ["validate:offers"] })
      expect(again.scopes).toEqual(["validate:offers"])
    }).pipe(Effect.scoped)
  )
})
