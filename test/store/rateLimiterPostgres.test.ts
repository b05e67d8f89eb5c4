import { expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import * as RateLimiterPostgres from "../../src/store/rateLimiterPostgres.ts"
import { together } from "../childProcesses.ts"
import { holdingLock } from "../postgresLocks.ts"
import { describePostgres, testDatabase, testPostgresLayer } from "../postgresTesting.ts"

const limiterLayer = () =>
  RateLimiter.layer.pipe(
    Layer.provideMerge(RateLimiterPostgres.layerPostgres),
    Layer.provide(testPostgresLayer(RateLimiterPostgres.migrations))
  )

/** Outcomes (admitted, or refused by reason), counted. */
const counted = (outcomes: ReadonlyArray<string>) => {
  const counts: Record<string, number> = {}
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1
  return counts
}

const atOnce = (requests: number, algorithm: "fixed-window" | "token-bucket", key = "k") =>
  Effect.flatMap(Effect.service(RateLimiter.RateLimiter), (limiter) =>
    Effect.map(
      Effect.all(
        Array.from({ length: requests }, () =>
          Effect.match(limiter.consume({ key, limit: 10, window: "60 seconds", algorithm, onExceeded: "fail" }), {
            onSuccess: () => "admitted",
            onFailure: (error) => error.reason._tag
          })
        ),
        { concurrency: "unbounded" }
      ),
      counted
    )
  )

/** Two processes' requests at once (6 and 5), against one database, for one key: their answers. */
const twoProcesses = (algorithm: "fixed-window" | "token-bucket") =>
  Effect.gen(function* () {
    const database = yield* testDatabase
    // Migrated here; the children only connect.
    yield* Layer.build(postgresStoreLayer({ url: database.url, migrations: RateLimiterPostgres.migrations })).pipe(
      Effect.orDie
    )
    const answers = yield* Effect.promise(() =>
      together(new URL("rateLimitChild.ts", import.meta.url), [
        [database.url, "shared", "6", algorithm],
        [database.url, "shared", "5", algorithm]
      ])
    )
    const total: Record<string, number> = {}
    for (const answer of answers as Array<Record<string, number>>)
      for (const [outcome, n] of Object.entries(answer)) total[outcome] = (total[outcome] ?? 0) + n
    return total
  }).pipe(Effect.scoped)

describePostgres("the PostgreSQL rate-limit store", () => {
  it.live("of 11 requests at once against a limit of 10 (fixed window), exactly 10 are admitted", () =>
    Effect.gen(function* () {
      expect(yield* atOnce(11, "fixed-window")).toEqual({ admitted: 10, RateLimitExceeded: 1 })
    }).pipe(Effect.provide(limiterLayer()))
  )

  it.live("of 11 requests at once against a bucket of 10, exactly 10 are admitted; a token comes back each 6 s", () =>
    Effect.gen(function* () {
      expect(yield* atOnce(11, "token-bucket")).toEqual({ admitted: 10, RateLimitExceeded: 1 })
      const limiter = yield* RateLimiter.RateLimiter
      const refused = yield* Effect.flip(
        limiter.consume({ key: "k", limit: 10, window: "60 seconds", algorithm: "token-bucket", onExceeded: "fail" })
      )
      expect(refused.reason._tag).toBe("RateLimitExceeded")
      if (refused.reason._tag === "RateLimitExceeded") {
        const wait = Duration.toMillis(refused.reason.retryAfter)
        expect(wait > 5_000 && wait <= 6_000).toBe(true)
      }
      // "delay" takes the token anyway and says how long to wait.
      const delayed = yield* limiter.consume({
        key: "d",
        limit: 2,
        window: "10 seconds",
        algorithm: "token-bucket",
        onExceeded: "delay",
        tokens: 3
      })
      expect(delayed.remaining).toBe(-1)
      expect(Duration.toMillis(delayed.delay)).toBeGreaterThan(4_000)
    }).pipe(Effect.provide(limiterLayer()))
  )

  it.live("refills a bucket by whole intervals and empties a fixed window as its time passes", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter.RateLimiter
      const take = (algorithm: "fixed-window" | "token-bucket") =>
        limiter.consume({ key: algorithm, limit: 2, window: "400 millis", algorithm, onExceeded: "fail" })
      for (const algorithm of ["fixed-window", "token-bucket"] as const) {
        yield* take(algorithm)
        yield* take(algorithm)
        expect((yield* Effect.flip(take(algorithm))).reason._tag).toBe("RateLimitExceeded")
      }
      yield* Effect.sleep("450 millis")
      expect((yield* take("fixed-window")).remaining).toBe(1)
      expect((yield* take("token-bucket")).remaining).toBe(1)
    }).pipe(Effect.provide(limiterLayer()))
  )

  it.live("learns a server's limit from its 429 answers (adaptive)", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter.RateLimiter
      const consume = limiter.adaptiveConsume({
        key: "api",
        tokens: 1,
        fallbackLimit: 10,
        fallbackWindow: Duration.seconds(60)
      })
      expect(yield* consume).toMatchObject({ epoch: 0, phase: "inactive" })
      yield* limiter.adaptiveFeedback({
        key: "api",
        epoch: 0,
        tokens: 1,
        status: 429,
        retryAfter: Duration.millis(200)
      })
      const cooling = yield* consume
      expect(cooling.phase).toBe("cooldown")
      expect(Duration.toMillis(cooling.delay)).toBeGreaterThan(100)
      yield* Effect.sleep("250 millis")
      const learning = yield* consume
      expect(learning).toMatchObject({ epoch: 1, phase: "learning" })
      for (let i = 0; i < 3; i++) yield* consume
      // The fourth request was refused: three in the window are what the server takes.
      yield* limiter.adaptiveFeedback({
        key: "api",
        epoch: 1,
        tokens: 1,
        status: 429,
        retryAfter: Duration.seconds(1)
      })
      expect(yield* consume).toMatchObject({ epoch: 2, phase: "learned" })
      // Feedback of an epoch gone by changes nothing.
      yield* limiter.adaptiveFeedback({ key: "api", epoch: 1, tokens: 1, status: 429, retryAfter: Duration.seconds(9) })
      expect((yield* consume).phase).toBe("learned")
    }).pipe(Effect.provide(limiterLayer()))
  )

  it.live(
    "two processes sharing the database: of 11 requests at once (6 and 5) against 10, exactly 10 pass",
    () =>
      Effect.gen(function* () {
        for (const algorithm of ["fixed-window", "token-bucket"] as const) {
          expect(yield* twoProcesses(algorithm)).toEqual({ admitted: 10, RateLimitExceeded: 1 })
        }
      }),
    30_000
  )

  it.live("a take the database does not answer in time fails as the store's error, not a hang", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const context = yield* Layer.build(
        RateLimiter.layer.pipe(
          Layer.provide(RateLimiterPostgres.layerPostgres),
          Layer.provide(postgresStoreLayer({ url: database.url, migrations: RateLimiterPostgres.migrations })),
          Layer.orDie
        )
      )
      yield* holdingLock(database.url, "campusgate_rate_limit_windows")
      const error = yield* Effect.flip(
        Effect.flatMap(Effect.service(RateLimiter.RateLimiter), (limiter) =>
          limiter.consume({ key: "k", limit: 10, window: "60 seconds" })
        )
      ).pipe(Effect.provide(context))
      expect(error.reason._tag).toBe("RateLimitStoreError")
    }).pipe(Effect.scoped)
  )
})
