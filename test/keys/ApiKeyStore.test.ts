import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { parse } from "yaml"
import type { ApiKeyId, ApiKeyRecord } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import * as ApiKeyPostgres from "../../src/keys/apiKeyPostgres.ts"
import { layerRedis as apiKeyStoreRedis } from "../../src/keys/apiKeyRedis.ts"
import { hashApiKey } from "../../src/keys/apiKeys.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, type Suite, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const record = (id: string): ApiKeyRecord => ({
  id: id as ApiKeyId,
  team: "acme" as TeamId,
  scopes: ["offers:read"],
  hash: hashApiKey(`cgk_${id}`),
  createdAt: "2026-11-01T00:00:00.000Z"
})

const reasonOf = <A, R>(effect: Effect.Effect<A, { readonly reason: { readonly _tag: string } }, R>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason._tag)

/** The contract every adapter keeps. */
const contract = storeContract("ApiKeyStore", (makeLayer: () => Layer.Layer<ApiKeyStore>) => {
  it.effect("holds nothing at first", () =>
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      expect(yield* store.list).toEqual([])
      expect(yield* store.documents).toEqual([])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("keeps records where they were put, config first, and hands them out as key documents", () =>
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      expect((yield* store.add(record("key_dataaaaa"), false)).location).toBe("data")
      expect((yield* store.add(record("key_configgg"), true)).location).toBe("config")
      const listed = yield* store.list
      expect(listed.map((entry) => [entry.record.id, entry.location])).toEqual([
        ["key_configgg", "config"],
        ["key_dataaaaa", "data"]
      ])
      const documents = yield* store.documents
      expect(documents.map((document) => document.store)).toEqual(["config", "data"])
      const ids = documents.flatMap((document) =>
        (parse(document.text) as { keys: Array<{ id: string }> }).keys.map((key) => key.id)
      )
      expect(ids).toEqual(["key_configgg", "key_dataaaaa"])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("revokes a key once, and says why it cannot twice or for an unknown id", () =>
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      yield* store.add(record("key_aaaaaaaa"), false)
      yield* store.add(record("key_bbbbbbbb"), false)
      const revoked = yield* store.revoke("key_aaaaaaaa", "2026-11-02T00:00:00.000Z")
      expect(revoked).toMatchObject({ id: "key_aaaaaaaa", revokedAt: "2026-11-02T00:00:00.000Z" })
      const listed = yield* store.list
      expect(listed.find((entry) => entry.record.id === "key_aaaaaaaa")?.record.revokedAt).toBe(
        "2026-11-02T00:00:00.000Z"
      )
      expect(listed.find((entry) => entry.record.id === "key_bbbbbbbb")?.record.revokedAt).toBeUndefined()
      expect(yield* reasonOf(store.revoke("key_aaaaaaaa", "2026-11-03T00:00:00.000Z"))).toBe("ApiKeyAlreadyRevoked")
      expect(yield* reasonOf(store.revoke("key_nopenope", "2026-11-03T00:00:00.000Z"))).toBe("ApiKeyNotFound")
    }).pipe(Effect.provide(makeLayer()))
  )
})

contract("memory", () => ApiKeyStore.layerMemory)
contract("files", () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-keys-"))
  const configDir = join(root, "config")
  mkdirSync(configDir)
  return ApiKeyStore.layerFiles({ configDir, dataDir: join(root, "data") })
})
/** A shared store over a config directory of its own: Redis under a prefix, PostgreSQL in a database of its own. */
const redisStore = () =>
  apiKeyStoreRedis(mkdtempSync(join(tmpdir(), "campusgate-keys-"))).pipe(Layer.provide(testRedisLayer()))
const postgresStore = () =>
  ApiKeyPostgres.layerPostgres(mkdtempSync(join(tmpdir(), "campusgate-keys-"))).pipe(
    Layer.provide(testPostgresLayer([...ConfigVersion.migrations, ...ApiKeyPostgres.migrations]))
  )

contract("redis", redisStore, describeRedis)
contract("postgres", postgresStore, describePostgres)

/** What a store shared by daemons promises besides the contract. */
const shared = (name: string, makeLayer: () => Layer.Layer<ApiKeyStore>, suite: Suite) =>
  suite(name, () => {
    it.effect(
      "a key of the config directory revoked through the store is revoked in the document every daemon loads",
      () =>
        Effect.gen(function* () {
          const store = yield* ApiKeyStore
          yield* store.add(record("key_configgg"), true)
          yield* store.revoke("key_configgg", "2026-11-02T00:00:00.000Z")
          const [document] = yield* store.documents
          expect(document?.store).toBe("config")
          expect((parse(document!.text) as { keys: Array<ApiKeyRecord> }).keys[0]?.revokedAt).toBe(
            "2026-11-02T00:00:00.000Z"
          )
          expect(yield* reasonOf(store.revoke("key_configgg", "2026-11-03T00:00:00.000Z"))).toBe("ApiKeyAlreadyRevoked")
        }).pipe(Effect.provide(makeLayer()))
    )

    it.effect("of several daemons starting on an empty store, one stores the first key", () =>
      Effect.gen(function* () {
        const store = yield* ApiKeyStore
        const outcomes = yield* Effect.all(
          ["key_firstaaa", "key_firstbbb", "key_firstccc"].map((id) => store.addFirst!(record(id))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Boolean)).toHaveLength(1)
        expect(yield* store.list).toHaveLength(1)
      }).pipe(Effect.provide(makeLayer()))
    )
  })

shared("apiKeyStoreRedis", redisStore, describeRedis)
shared("apiKeyStorePostgres", postgresStore, describePostgres)

describePostgres("apiKeyStorePostgres", () => {
  it.effect("of revocations of one key at once, one revokes it and the others are told it was", () =>
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      yield* store.add(record("key_dataaaaa"), false)
      yield* store.add(record("key_configgg"), true)
      for (const id of ["key_dataaaaa", "key_configgg"]) {
        const outcomes = yield* Effect.all(
          Array.from({ length: 5 }, (_, i) => Effect.result(store.revoke(id, `2026-11-0${i + 2}T00:00:00.000Z`))),
          { concurrency: "unbounded" }
        )
        const won = outcomes.filter((outcome) => outcome._tag === "Success")
        expect(won).toHaveLength(1)
        const listed = (yield* store.list).find((entry) => entry.record.id === id)
        expect(listed?.record.revokedAt).toBe(won[0]!._tag === "Success" ? won[0]!.success.revokedAt : "")
      }
    }).pipe(Effect.provide(postgresStore()))
  )
})
