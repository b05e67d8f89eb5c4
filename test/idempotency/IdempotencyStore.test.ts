import { mkdtempSync, readdirSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { IdempotencyStore, idempotencyRecordKey, type StoredAnswer } from "../../src/idempotency/IdempotencyStore.ts"
import * as IdempotencyPostgres from "../../src/idempotency/idempotencyPostgres.ts"
import { layerRedis } from "../../src/idempotency/idempotencyRedis.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const answer: StoredAnswer = { status: 201, headers: { "content-type": "application/json" }, body: "e30=" }
const dataDir = () => mkdtempSync(join(tmpdir(), "campusgate-idempotency-"))

const contract = storeContract("IdempotencyStore", (layer: () => Layer.Layer<IdempotencyStore>) => {
  it.live("claims a key once, keeps the answer, and gives a released claim to the next request", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const key = idempotencyRecordKey("acme", "order-1")
      const now = Date.now()
      expect(yield* store.claim(key, "request-a", now, now + 60_000)).toBeUndefined()
      expect(yield* store.claim(key, "request-a", now, now + 60_000)).toMatchObject({
        state: "running",
        fingerprint: "request-a"
      })
      // Another request's release leaves the claim alone, as does one of an earlier claim of the same request; its own frees it.
      yield* store.release(key, "request-b", now + 60_000)
      expect(yield* store.claim(key, "request-b", now, now + 60_000)).toMatchObject({ fingerprint: "request-a" })
      yield* store.release(key, "request-a", now + 30_000)
      expect(yield* store.claim(key, "request-b", now, now + 60_000)).toMatchObject({ fingerprint: "request-a" })
      yield* store.release(key, "request-a", now + 60_000)
      expect(yield* store.claim(key, "request-a", now, now + 60_000)).toBeUndefined()
      yield* store.answer(key, "request-a", answer, now + 86_400_000)
      expect(yield* store.claim(key, "request-c", now, now + 60_000)).toEqual({
        state: "answered",
        fingerprint: "request-a",
        expiresAt: now + 86_400_000,
        answer
      })
      // Another team's key of the same name is another record.
      expect(yield* store.claim(idempotencyRecordKey("globex", "order-1"), "x", now, now + 60_000)).toBeUndefined()
    }).pipe(Effect.provide(layer()))
  )

  it.live("holds nothing once a claim has lapsed or an answer is past its day", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const now = Date.now()
      const lapsed = idempotencyRecordKey("acme", "lapsed")
      expect(yield* store.claim(lapsed, "a", now, now + 50)).toBeUndefined()
      yield* Effect.sleep("120 millis")
      expect(yield* store.claim(lapsed, "b", Date.now(), Date.now() + 60_000)).toBeUndefined()
      const expired = idempotencyRecordKey("acme", "expired")
      yield* store.claim(expired, "a", now, now + 60_000)
      yield* store.answer(expired, "a", answer, Date.now() + 50)
      yield* Effect.sleep("120 millis")
      expect(yield* store.claim(expired, "b", Date.now(), Date.now() + 60_000)).toBeUndefined()
    }).pipe(Effect.provide(layer()))
  )

  it.live("of 50 claims of one key at once, exactly one is granted", () =>
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const key = idempotencyRecordKey("acme", "raced")
      const now = Date.now()
      const claims = yield* Effect.all(
        Array.from({ length: 50 }, (_, i) => store.claim(key, `request-${i}`, now, now + 60_000)),
        { concurrency: "unbounded" }
      )
      expect(claims.filter((held) => held === undefined)).toHaveLength(1)
    }).pipe(Effect.provide(layer()))
  )
})

contract("memory", () => IdempotencyStore.layerMemory)
contract("files", () => IdempotencyStore.layerFiles(dataDir()))
contract("redis", () => layerRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () => IdempotencyPostgres.layerPostgres.pipe(Layer.provide(testPostgresLayer(IdempotencyPostgres.migrations))),
  describePostgres
)

describe("the file adapter", () => {
  it.live("keeps answers across a restart, private to the daemon's user, and sweeps those past their day", () =>
    Effect.gen(function* () {
      const dir = dataDir()
      const open = Effect.map(Layer.build(IdempotencyStore.layerFiles(dir)), Context.get(IdempotencyStore))
      const first = yield* open
      const now = Date.now()
      const kept = idempotencyRecordKey("acme", "kept")
      const old = idempotencyRecordKey("acme", "old")
      for (const key of [kept, old]) yield* first.claim(key, "a", now, now + 60_000)
      yield* first.answer(kept, "a", answer, now + 86_400_000)
      yield* first.answer(old, "a", answer, now + 50)
      const files = join(dir, "idempotency")
      expect(statSync(join(files, `${kept}.json`)).mode & 0o777).toBe(0o600)
      yield* Effect.sleep("120 millis")
      const restarted = yield* open
      expect(yield* restarted.claim(kept, "b", Date.now(), Date.now() + 60_000)).toMatchObject({ answer })
      expect(readdirSync(files)).toEqual([`${kept}.json`])
    }).pipe(Effect.scoped)
  )
})
