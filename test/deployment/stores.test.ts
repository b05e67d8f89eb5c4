/**
 * The choice of the stores (`deployment/stores.ts`): with no store settings,
 * the data directory's files and rate-limit counters in memory; with
 * PostgreSQL and Redis both named (`cache: redis`), the records in the
 * database and the counters in Redis, under the deployment's prefix — the
 * kinds' modules loaded as the settings name them.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as Redis from "effect/persistence/Redis"
import { openAdapters } from "../../src/deployment/stores.ts"
import { describePostgres, testDatabase } from "../postgresTesting.ts"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"

const directories = (keyPrefix?: string) => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-stores-"))
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  mkdirSync(configDir)
  if (keyPrefix !== undefined)
    writeFileSync(join(configDir, "campusgate.yaml"), `store:\n  keyPrefix: "${keyPrefix}"\n`)
  return { configDir, dataDir }
}

const consumeOnce = (store: Layer.Layer<RateLimiter.RateLimiterStore>) =>
  Effect.flatMap(Effect.service(RateLimiter.RateLimiter), (limiter) =>
    limiter.consume({ key: "key_1", limit: 5, window: "60 seconds", algorithm: "fixed-window", onExceeded: "fail" })
  ).pipe(Effect.provide(RateLimiter.layer.pipe(Layer.provide(store))))

describe("openAdapters", () => {
  it.effect("with no store settings: the data directory's files, rate-limit counters in this process", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const opened = yield* openAdapters({ ...directories(), env: {} })
        expect(opened.kind).toBe("files")
        expect(opened.adapters.rateLimits).toBeUndefined()
        expect(opened.heldFor()).toBeUndefined()
      })
    )
  )
})

describePostgres("openAdapters on PostgreSQL", () => {
  describeRedis("with cache: redis", () => {
    it.effect(
      "opens the PostgreSQL kind, its rate-limit counters in Redis under the prefix",
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const prefix = testPrefix()
            const { url } = yield* testDatabase
            const opened = yield* openAdapters({
              ...directories(prefix),
              env: { CAMPUSGATE_DATABASE_URL: url, CAMPUSGATE_REDIS_URL: testRedisUrl }
            })
            expect(opened.kind).toBe("postgres")
            expect((yield* consumeOnce(opened.adapters.rateLimits!)).remaining).toBe(4)
            const keys = yield* Effect.flatMap(Redis.Redis, (redis) =>
              redis.send<ReadonlyArray<string>>("KEYS", `${prefix}ratelimit:*`)
            ).pipe(Effect.provide(testRedisLayer(prefix)))
            expect(keys.length).toBeGreaterThan(0)
          })
        ),
      30_000
    )
  })
})
