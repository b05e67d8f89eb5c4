/**
 * Budgets leased from a shared rate-limit store (`rateLimitLease.ts`), run
 * as several daemons would: three deciders, each with its own leases, over
 * one store — Effect's memory store, and the real Redis and PostgreSQL
 * stores the daemon counts in — taking requests concurrently. Small budgets
 * stay exact; a large one is never over-admitted, loses at most a slice per
 * daemon, and asks the store once per slice, not once per request.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type { RateLimitBucketName } from "../../src/api/rateLimits.ts"
import { rateLimiterStoreRedis } from "../../src/deployment/redisStores.ts"
import { makeRateLimitDecider, rateLimiterLayer } from "../../src/server/rateLimit.ts"
import { LeasedBudgets, leaseSize } from "../../src/server/rateLimitLease.ts"
import * as RateLimiterPostgres from "../../src/store/rateLimiterPostgres.ts"
import { liveClock } from "../liveClock.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, everywhere, type Suite, testRedisLayer } from "../redisTesting.ts"
import { configWith, type Limits } from "./rateLimitTesting.ts"

const limits = (validate: number, bulk: number): Limits => ({
  validate: { requests: validate, windowSeconds: 60 },
  bulk: { requests: bulk, windowSeconds: 60 },
  jobs: { requests: 10, windowSeconds: 60 },
  default: { requests: 1200, windowSeconds: 60 },
  verifications: { requests: 600, windowSeconds: 60 },
  signIn: { requests: 10, windowSeconds: 60 },
  hostedFlow: { requests: 30, windowSeconds: 60 }
})

const DAEMONS = 3

/** `DAEMONS` deciders over one store (each its own leases), and how many times the store was asked. */
const daemonsOver = (store: Layer.Layer<RateLimiter.RateLimiterStore>, given: Limits) =>
  Effect.gen(function* () {
    const inner = Context.get(yield* Layer.build(store), RateLimiter.RateLimiterStore)
    let storeCalls = 0
    const counted = Layer.succeed(
      RateLimiter.RateLimiterStore,
      RateLimiter.RateLimiterStore.of({
        ...inner,
        fixedWindow: (options) =>
          Effect.suspend(() => {
            storeCalls++
            return inner.fixedWindow(options)
          })
      })
    )
    const config = configWith(given)
    const deciders = []
    for (let i = 0; i < DAEMONS; i++)
      deciders.push(yield* Effect.provide(makeRateLimitDecider, Layer.merge(rateLimiterLayer(counted), config.layer)))
    return { deciders, storeCalls: () => storeCalls }
  })

/** `requests` decisions for one key, spread over the deciders and all in flight at once: how many were allowed. */
const admitted = (
  deciders: ReadonlyArray<Effect.Success<typeof makeRateLimitDecider>>,
  bucket: RateLimitBucketName,
  requests: number
) =>
  Effect.map(
    Effect.forEach(
      Array.from({ length: requests }, (_, i) => i),
      (i) => deciders[i % deciders.length]!.decide("key_a", bucket),
      { concurrency: "unbounded" }
    ),
    (decisions) => decisions.filter((decision) => decision.problem === undefined).length
  )

const contract = (name: string, store: () => Layer.Layer<RateLimiter.RateLimiterStore>, suite: Suite = everywhere) =>
  suite(`leased rate-limit budgets: ${name}`, () => {
    it.effect(
      "keeps a small budget exact across daemons under concurrent requests (the 11th bulk call is refused)",
      () =>
        Effect.gen(function* () {
          const { deciders } = yield* daemonsOver(store(), limits(1000, 10))
          expect(yield* admitted(deciders, "bulk", 30)).toBe(10)
          expect(yield* admitted(deciders, "bulk", 3)).toBe(0)
        }).pipe(Effect.scoped)
    )

    it.effect("never over-admits a large budget, loses at most a slice per daemon, and asks once per slice", () =>
      Effect.gen(function* () {
        const limit = 1000
        const slice = leaseSize(limit)
        const { deciders, storeCalls } = yield* daemonsOver(store(), limits(limit, 10))
        const allowed = yield* admitted(deciders, "validate", 1500)
        expect(allowed).toBeLessThanOrEqual(limit)
        expect(allowed).toBeGreaterThanOrEqual(limit - DAEMONS * (slice - 1))
        // A slice per lease, a second step when less than a slice was left, and one refusal per daemon after.
        expect(storeCalls()).toBeLessThanOrEqual(Math.ceil(limit / slice) + 3 * DAEMONS)
      }).pipe(Effect.scoped)
    )

    it.effect("answers synchronously from a lease once one is held", () =>
      Effect.gen(function* () {
        const { deciders, storeCalls } = yield* daemonsOver(store(), limits(100_000, 10))
        const [one] = deciders
        expect(one!.decideNow("key_a", "validate", Date.now())).toBeUndefined()
        expect((yield* one!.decide("key_a", "validate")).problem).toBeUndefined()
        const calls = storeCalls()
        for (let i = 0; i < leaseSize(100_000) - 1; i++) {
          const decision = one!.decideNow("key_a", "validate", Date.now())
          expect(decision?.problem).toBeUndefined()
          expect(decision?.headers.ratelimit).toMatch(/^"validate";r=\d+;t=\d+$/)
        }
        expect(storeCalls()).toBe(calls)
        expect(one!.decideNow("key_a", "validate", Date.now())).toBeUndefined()
      }).pipe(Effect.scoped)
    )

    it.effect("keeps a slice of a large limit for a share of the window, not a store step per millisecond", () =>
      Effect.gen(function* () {
        // A billion a minute: a slice of 1% lengthens the store's window by 600 ms.
        const { deciders, storeCalls } = yield* daemonsOver(store(), limits(1_000_000_000, 10))
        const [one] = deciders
        expect((yield* one!.decide("key_a", "validate")).problem).toBeUndefined()
        const calls = storeCalls()
        const later = one!.decideNow("key_a", "validate", Date.now() + 300)
        expect(later?.problem).toBeUndefined()
        expect(later?.headers.ratelimit).toMatch(/^"validate";r=\d+;t=1$/)
        expect(storeCalls()).toBe(calls)
      }).pipe(Effect.scoped)
    )
  })

contract("Effect's memory store", () => RateLimiter.layerStoreMemory)
contract(
  "Redis",
  () => rateLimiterStoreRedis.pipe(Layer.provide(testRedisLayer()), Layer.provide(liveClock)),
  describeRedis
)
contract(
  "PostgreSQL",
  () =>
    RateLimiterPostgres.layerPostgres.pipe(
      Layer.provide(testPostgresLayer(RateLimiterPostgres.migrations)),
      Layer.provide(liveClock)
    ),
  describePostgres
)

it("drops a lease whose window ended, and one taken under another limit", () => {
  const leases = new LeasedBudgets()
  leases.keep("validate:k", 2, 10, 1000, 100, 5000)
  expect(leases.take("validate:k", 100, 5500)).toEqual({ remaining: 91, resetAfterMillis: 500 })
  expect(leases.take("validate:k", 200, 5500)).toBeUndefined()
  expect(leases.take("validate:k", 100, 6000)).toBeUndefined()
  leases.keep("validate:k", 1, 10, 1000, 100, 7000)
  expect(leases.take("validate:k", 100, 7001)).toEqual({ remaining: 90, resetAfterMillis: 999 })
  expect(leases.take("validate:k", 100, 7002)).toBeUndefined()
})
