/**
 * The rate-limit counters' contract, run against every store the daemon can
 * count in: Effect's memory store, and the daemon's own memory store whose
 * counters the fast path also reads synchronously (`rateLimitMemory.ts`),
 * Effect's Redis store (`RateLimiter.layerStoreRedis`) on a real server, and
 * the PostgreSQL store (`store/rateLimiterPostgres.ts`). There is
 * deliberately no file adapter: a fixed window lives for seconds, one
 * process keeps it in memory, and several share it in Redis or PostgreSQL.
 * Those count windows on their server's clock, so their runs let a short
 * window pass in real time where the memory stores use `TestClock`.
 */
import { expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as TestClock from "effect/testing/TestClock"
import { rateLimiterStoreRedis } from "../../src/deployment/redisStores.ts"
import { rateLimiterLayerMemory } from "../../src/server/rateLimitMemory.ts"
import * as RateLimiterPostgres from "../../src/store/rateLimiterPostgres.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, everywhere, type Suite, testRedisLayer } from "../redisTesting.ts"

const consume = (key: string, limit = 3, window: Duration.Input = "60 seconds") =>
  Effect.flatMap(Effect.service(RateLimiter.RateLimiter), (limiter) =>
    limiter.consume({ key, limit, window, algorithm: "fixed-window", onExceeded: "fail" })
  )

const refusal = (key: string, limit = 3, window: Duration.Input = "60 seconds") =>
  Effect.map(Effect.flip(consume(key, limit, window)), (error) => error.reason)

/** How a store lets a window pass: the test clock, or (a store on its own clock) real time over a short window. */
interface Passing {
  readonly window: Duration.Input
  readonly pass: Effect.Effect<void>
  readonly run: typeof it.effect
}

const testClock: Passing = { window: "60 seconds", pass: TestClock.adjust("61 seconds"), run: it.effect }

const contract = (
  name: string,
  layer: () => Layer.Layer<RateLimiter.RateLimiter>,
  passing: Passing = testClock,
  suite: Suite = everywhere
) =>
  suite(`rate-limit counters: ${name}`, () => {
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

    passing.run("gives the budget back as the window passes", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 3; i++) yield* consume("a", 3, passing.window)
        expect((yield* refusal("a", 3, passing.window))._tag).toBe("RateLimitExceeded")
        yield* passing.pass
        expect((yield* consume("a", 3, passing.window)).remaining).toBe(2)
      }).pipe(Effect.provide(layer()))
    )
  })

contract("Effect's memory store", () => RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory)))
contract("the daemon's memory store (read synchronously by the fast path)", () => rateLimiterLayerMemory)
contract(
  "Effect's Redis store (shared by daemons)",
  () => RateLimiter.layer.pipe(Layer.provide(rateLimiterStoreRedis), Layer.provide(testRedisLayer())),
  { window: "1 second", pass: Effect.sleep("1100 millis"), run: it.live },
  describeRedis
)
contract(
  "the PostgreSQL store (shared by daemons)",
  () =>
    RateLimiter.layer.pipe(
      Layer.provide(RateLimiterPostgres.layerPostgres),
      Layer.provide(testPostgresLayer(RateLimiterPostgres.migrations))
    ),
  { window: "1 second", pass: Effect.sleep("1100 millis"), run: it.live },
  describePostgres
)
