/**
 * A resource change whose configuration cannot be read back because a
 * store went away after the write, against the real PostgreSQL: the
 * resource store reached directly, the review store (which every reload
 * reads too) through the loopback fault proxy, partitioned off. The change
 * is undone and refused as the store's outage (503: try again), not as a
 * change the configuration rejects (500), and once the store answers the
 * same change is made.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Resources } from "../../src/app/Resources.ts"
import { LiveSnapshot, Snapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { ReviewStore } from "../../src/reviews/ReviewStore.ts"
import * as ReviewPostgres from "../../src/reviews/reviewPostgres.ts"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { makeDirs, validConfig } from "../config/configFiles.ts"
import { describePostgres, testDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { startFaultProxy } from "../support/faultProxy.ts"

const group = (id: string) =>
  ({ id: id as never, name: id, criteria: { domains: { allow: [`${id}.example`] } } }) as never

describePostgres("a resource change whose configuration cannot be read back (PostgreSQL away)", () => {
  it.live("is undone and refused as an outage, then made once the store answers", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const server = new URL(testPostgresUrl)
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) })),
        (proxy) => Effect.promise(() => proxy.close())
      )
      const migrations = [...ConfigVersion.migrations, ...ResourcePostgres.migrations, ...ReviewPostgres.migrations]
      const resources = yield* Layer.build(
        ResourcePostgres.layerPostgres.pipe(
          Layer.provide(postgresStoreLayer({ url: database.url, migrations })),
          Layer.orDie
        )
      )
      const reviews = yield* Layer.build(
        ReviewPostgres.layerPostgres.pipe(
          Layer.provide(postgresStoreLayer({ url: proxy.url(database.url), migrations })),
          Layer.orDie
        )
      )
      const resourceStore = Context.get(resources, ResourceStore)
      const reviewStore = Context.get(reviews, ReviewStore)
      const dirs = makeDirs(validConfig)
      const live = yield* LiveSnapshot.make(
        directorySource({ ...dirs, env: {} }, { resources: resourceStore, reviews: reviewStore })
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
})
