/**
 * The rate-limit counters' contract, run against every store the daemon can
 * count in: Effect's memory store, and the daemon's own memory store whose
 * counters the fast path also reads synchronously (`rateLimitMemory.ts`). A
 * Redis store (`RateLimiter.layerStoreRedis`) is the next adapter to run it
 * against. There is deliberately no file adapter: a fixed window lives for
 * seconds, one process keeps it in memory, and several share it in Redis.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as TestClock from "effect/testing/TestClock"
import { rateLimiterLayerMemory } from "../../src/server/rateLimitMemory.ts"

const consume = (key: string, limit = 3) =>
  Effect.flatMap(Effect.service(RateLimiter.RateLimiter), (limiter) =>
    limiter.consume({ key, limit, window: "60 seconds", algorithm: "fixed-window", onExceeded: "fail" })
  )

const refusal = (key: string, limit = 3) => Effect.map(Effect.flip(consume(key, limit)), (error) => error.reason)

const contract = (name: string, layer: () => Layer.Layer<RateLimiter.RateLimiter>) =>
  describe(`rate-limit counters: ${name}`, () => {
    it.effect("counts down the window's budget, then refuses with the time until a token is back", () =>
      Effect.gen(function* () {
        expect((yield* consume("a")).remaining).toBe(2)
        expect((yield* consume("a")).remaining).toBe(1)
        expect((yield* consume("a")).remaining).toBe(0)
        const refused = yield* refusal("a")
        expect(refused._tag).toBe("RateLimitExceeded")
        if (refused._tag === "RateLimitExceeded") {
          const seconds = Duration.toMillis(refused.retryAfter) / 1000
          expect(seconds > 0 && seconds <= 60).toBe(true)
        }
      }).pipe(Effect.provide(layer()))
    )

    it.effect("keeps each key's budget apart", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 3; i++) yield* consume("a")
        expect((yield* refusal("a"))._tag).toBe("RateLimitExceeded")
        expect((yield* consume("b")).remaining).toBe(2)
      }).pipe(Effect.provide(layer()))
    )

    it.effect("gives the budget back as the window passes", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 3; i++) yield* consume("a")
        expect((yield* refusal("a"))._tag).toBe("RateLimitExceeded")
        yield* TestClock.adjust("61 seconds")
        expect((yield* consume("a")).remaining).toBe(2)
      }).pipe(Effect.provide(layer()))
    )
  })

contract("Effect's memory store", () => RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)))
contract("the daemon's memory store (read synchronously by the fast path)", () => rateLimiterLayerMemory)
