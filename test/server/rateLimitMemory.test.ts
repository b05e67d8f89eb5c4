import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as TestClock from "effect/testing/TestClock"
import type { RateLimitBucketName } from "../../src/api/rateLimits.ts"
import type { ConfigSnapshot } from "../../src/app/Snapshot.ts"
import { Snapshot } from "../../src/app/Snapshot.ts"
import type { RateLimit } from "../../src/config/Settings.ts"
import { makeRateLimitDecider, type RateLimitDecision, rateLimiterLayer } from "../../src/server/rateLimit.ts"
import { FixedWindowCounters } from "../../src/server/rateLimitMemory.ts"

type Limits = Record<RateLimitBucketName, RateLimit>

/** A config holder whose rate limits the test replaces, as a reload would. */
const configWith = (initial: Limits) => {
  let snapshot = { config: { settings: { rateLimits: initial } } } as unknown as ConfigSnapshot
  const layer = Layer.succeed(
    Snapshot,
    Snapshot.of({
      current: () => snapshot,
      status: () => ({}) as never,
      reload: () => ({}) as never,
      change: () => ({}) as never,
      catchUp: () => ({}) as never
    })
  )
  const reload = (limits: Limits) => {
    snapshot = { config: { settings: { rateLimits: limits } } } as unknown as ConfigSnapshot
  }
  return { layer, reload }
}

/** What a client sees of a decision. */
const seen = (decision: RateLimitDecision) => ({
  headers: decision.headers,
  problem:
    decision.problem === undefined
      ? undefined
      : {
          tag: decision.problem._tag,
          code: decision.problem.code,
          detail: decision.problem.detail,
          retryAfterSeconds: decision.problem.retryAfterSeconds,
          requestId: decision.problem.requestId
        }
})

/** A small deterministic generator, so a failing sequence can be replayed from its seed. */
const random = (seed: number) => {
  let state = seed >>> 0
  return (below: number): number => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state % below
  }
}

const limitsFrom = (next: (below: number) => number): Limits => ({
  // 7 per second gives a refill rate that is not a whole number of milliseconds.
  validate: next(2) === 0 ? { requests: 7, windowSeconds: 1 } : { requests: 1 + next(4), windowSeconds: 1 + next(3) },
  bulk: { requests: 1 + next(3), windowSeconds: 1 + next(2) },
  jobs: { requests: 1 + next(3), windowSeconds: 1 + next(2) },
  default: { requests: 1_000_000_000, windowSeconds: 60 },
  verifications: { requests: 1_000_000_000, windowSeconds: 60 },
  signIn: { requests: 1_000_000_000, windowSeconds: 60 },
  hostedFlow: { requests: 1_000_000_000, windowSeconds: 60 }
})

describe("the synchronous memory store", () => {
  it.effect("decides exactly as Effect's RateLimiter over its own memory store, whichever path asks", () =>
    Effect.gen(function* () {
      for (let seed = 1; seed <= 40; seed++) {
        const next = random(seed)
        const config = configWith(limitsFrom(next))
        const reference = yield* Effect.provide(
          makeRateLimitDecider,
          Layer.merge(rateLimiterLayer(RateLimiter.layerStoreMemory), config.layer)
        )
        const candidate = yield* Effect.provide(makeRateLimitDecider, Layer.merge(rateLimiterLayer(), config.layer))
        expect(reference.decideNow).toBeUndefined()
        const decideNow = candidate.decideNow!
        expect(decideNow).toBeDefined()
        for (let step = 0; step < 120; step++) {
          const action = next(20)
          if (action === 0) config.reload(limitsFrom(next))
          if (action < 6) yield* TestClock.adjust(next(3) === 0 ? next(2500) : next(40))
          const keyId = next(2) === 0 ? "key_a" : "key_b"
          const bucket: RateLimitBucketName = next(3) === 0 ? "bulk" : "validate"
          const expected = yield* reference.decide(keyId, bucket)
          // The fast path (synchronous) and the Effect pipeline share the counters.
          const actual =
            next(2) === 0
              ? decideNow(keyId, bucket, yield* Clock.currentTimeMillis)
              : yield* candidate.decide(keyId, bucket)
          expect([seed, step, seen(actual)]).toEqual([seed, step, seen(expected)])
        }
      }
    })
  )

  it("counts like RateLimiterStore.fixedWindow: a refused take is not counted, an expired counter restarts", () => {
    const counters = new FixedWindowCounters()
    expect([counters.take("k", 1, 500, 2, 1000), counters.ttl]).toEqual([1, 500])
    expect([counters.take("k", 1, 500, 2, 1100), counters.ttl]).toEqual([2, 900])
    expect([counters.take("k", 1, 500, 2, 1200), counters.ttl]).toEqual([3, 800])
    expect([counters.take("k", 1, 500, 2, 1300), counters.ttl]).toEqual([3, 700])
    expect([counters.take("other", 1, 500, 2, 1300), counters.ttl]).toEqual([1, 500])
    expect([counters.take("k", 1, 500, 2, 2000), counters.ttl]).toEqual([1, 500])
  })
})
