import { mkdtempSync, readdirSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { OidcStore } from "../../src/oidc/OidcStore.ts"
import * as OidcPostgres from "../../src/oidc/oidcPostgres.ts"
import { layerRedis } from "../../src/oidc/oidcRedis.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, testPrefix, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const dataDir = () => mkdtempSync(join(tmpdir(), "campusgate-oidc-"))

const contract = storeContract("OidcStore", (layer: () => Layer.Layer<OidcStore>) => {
  it.live("keeps an entry as written, replaces it, and removes it", () =>
    Effect.gen(function* () {
      const store = yield* OidcStore
      const payload = { jti: "code-1", grantId: "g1", scopes: [], claims: { a: [1, 2] }, empty: {} }
      yield* store.upsert("AuthorizationCode", "code-1", payload, 60)
      expect(yield* store.find("AuthorizationCode", "code-1")).toEqual(payload)
      expect(yield* store.find("AccessToken", "code-1")).toBeUndefined()
      yield* store.upsert("AuthorizationCode", "code-1", { ...payload, scopes: ["openid"] }, undefined)
      expect(yield* store.find("AuthorizationCode", "code-1")).toMatchObject({ scopes: ["openid"] })
      yield* store.destroy("AuthorizationCode", "code-1")
      expect(yield* store.find("AuthorizationCode", "code-1")).toBeUndefined()
    }).pipe(Effect.provide(layer()))
  )

  it.live("holds nothing once an entry's lifetime has passed", () =>
    Effect.gen(function* () {
      const store = yield* OidcStore
      yield* store.upsert("Interaction", "short", { uid: "short" }, 0.05)
      yield* store.upsert("Interaction", "long", { uid: "long" }, 60)
      yield* Effect.sleep("150 millis")
      expect(yield* store.find("Interaction", "short")).toBeUndefined()
      expect(yield* store.consume("Interaction", "short")).toBe(false)
      expect(yield* store.find("Interaction", "long")).toEqual({ uid: "long" })
    }).pipe(Effect.provide(layer()))
  )

  it.live("consumes an entry once: of 20 redemptions at once exactly one succeeds, and a replay sees it consumed", () =>
    Effect.gen(function* () {
      const store = yield* OidcStore
      yield* store.upsert("AuthorizationCode", "code-2", { jti: "code-2" }, 60)
      const taken = yield* Effect.all(
        Array.from({ length: 20 }, () => store.consume("AuthorizationCode", "code-2")),
        { concurrency: "unbounded" }
      )
      expect(taken.filter(Boolean)).toHaveLength(1)
      expect((yield* store.find("AuthorizationCode", "code-2"))?.consumed).toEqual(expect.any(Number))
      expect(yield* store.consume("AuthorizationCode", "missing")).toBe(false)
    }).pipe(Effect.provide(layer()))
  )

  it.live("finds a session by its uid, and revokes every entry of a grant", () =>
    Effect.gen(function* () {
      const store = yield* OidcStore
      yield* store.upsert("Session", "session-1", { uid: "uid-1", accountId: "a" }, 60)
      expect(yield* store.findSessionByUid("uid-1")).toEqual({ uid: "uid-1", accountId: "a" })
      expect(yield* store.findSessionByUid("uid-2")).toBeUndefined()
      yield* store.upsert("AuthorizationCode", "c", { grantId: "grant-1" }, 60)
      yield* store.upsert("AccessToken", "t", { grantId: "grant-1" }, 3600)
      yield* store.upsert("AccessToken", "other", { grantId: "grant-2" }, 3600)
      yield* store.consume("AuthorizationCode", "c")
      yield* store.revokeByGrantId("grant-1")
      expect(yield* store.find("AuthorizationCode", "c")).toBeUndefined()
      expect(yield* store.find("AccessToken", "t")).toBeUndefined()
      expect(yield* store.find("AccessToken", "other")).toEqual({ grantId: "grant-2" })
    }).pipe(Effect.provide(layer()))
  )
})

contract("memory", () => OidcStore.layerMemory)
contract("files", () => OidcStore.layerFiles(dataDir()))
contract("redis", () => layerRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () => OidcPostgres.layerPostgres.pipe(Layer.provide(testPostgresLayer(OidcPostgres.migrations))),
  describePostgres
)

describe("the file adapter", () => {
  it.live("keeps entries across a restart, private to the daemon's user, and sweeps those past their lifetime", () =>
    Effect.gen(function* () {
      const dir = dataDir()
      const open = Effect.map(Layer.build(OidcStore.layerFiles(dir)), Context.get(OidcStore))
      const first = yield* open
      yield* first.upsert("Grant", "kept", { accountId: "a" }, 60)
      yield* first.upsert("Grant", "old", { accountId: "b" }, 0.05)
      const files = readdirSync(join(dir, "oidc"))
      expect(files).toHaveLength(2)
      expect(statSync(join(dir, "oidc", files[0]!)).mode & 0o777).toBe(0o600)
      yield* Effect.sleep("120 millis")
      const restarted = yield* open
      expect(yield* restarted.find("Grant", "kept")).toEqual({ accountId: "a" })
      expect(readdirSync(join(dir, "oidc"))).toHaveLength(1)
    }).pipe(Effect.scoped)
  )
})

describeRedis("the Redis adapter", () => {
  it.live("two daemons on one Redis: a code one redeemed is consumed for the other", () =>
    Effect.gen(function* () {
      const prefix = testPrefix()
      const open = Effect.map(
        Layer.build(layerRedis.pipe(Layer.provide(testRedisLayer(prefix)))),
        Context.get(OidcStore)
      )
      const [one, two] = [yield* open, yield* open]
      yield* one.upsert("AuthorizationCode", "shared", { jti: "shared" }, 60)
      const taken = yield* Effect.all(
        [one.consume("AuthorizationCode", "shared"), two.consume("AuthorizationCode", "shared")],
        {
          concurrency: "unbounded"
        }
      )
      expect(taken.filter(Boolean)).toHaveLength(1)
      expect((yield* two.find("AuthorizationCode", "shared"))?.consumed).toEqual(expect.any(Number))
    }).pipe(Effect.scoped)
  )
})
