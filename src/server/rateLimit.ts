/**
 * Rate limits per API key, one budget per bucket (`bulk`, `validate`,
 * `default`; see `api/rateLimits.ts`), counted by Effect's `RateLimiter`
 * (fixed window) over a `RateLimiterStore` layer: in memory for one
 * process, Redis (`rateLimiterStoreRedis`, chosen in `deployment/stores.ts`) when replicas must share
 * budgets. When a shared store cannot be reached, `rateLimits.whenStoreDown`
 * decides: `open` (the default) counts in this process meanwhile, so single
 * validations keep answering and a key gets at most one budget per daemon;
 * `closed` answers 503 with `Retry-After`. Limits are read from the config snapshot of each request, so a
 * reload changes them at once.
 *
 * Every answer to a request that got this far carries the IETF header fields
 * of draft-ietf-httpapi-ratelimit-headers (`RateLimit-Policy: "bulk";q=10;w=60`
 * and `RateLimit: "bulk";r=3;t=42`, `t` in seconds until the budget resets);
 * a request over budget is a 429 `RATE_LIMIT_EXCEEDED` with `Retry-After`.
 *
 * With the memory store the decision can also be taken synchronously
 * (`decideNow`, used by the fast path) from the same counters; it computes
 * exactly what `RateLimiter.consume` would (test/server/rateLimitMemory.test.ts).
 */
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { rateLimitExceeded, type ServiceUnavailable, storeUnavailable, type TooManyRequests } from "../api/problems.ts"
import { countsAcceptedOnly, type RateLimitBucketName, REPLAYED_HEADER, rateLimitBucketOf } from "../api/rateLimits.ts"
import { Snapshot } from "../app/Snapshot.ts"
import type { RateLimit } from "../config/Settings.ts"
import { FixedWindowCounters, rateLimiterLayerMemory, SyncRateLimitCounters } from "./rateLimitMemory.ts"

/** The limiter over a store; the default store is process-local memory (which the fast path reads synchronously). */
export const rateLimiterLayer = (
  store?: Layer.Layer<RateLimiter.RateLimiterStore>
): Layer.Layer<RateLimiter.RateLimiter> =>
  store === undefined ? rateLimiterLayerMemory : RateLimiter.layer.pipe(Layer.provide(store))

const wholeSeconds = (duration: Duration.Duration): number => Math.max(0, Math.ceil(Duration.toMillis(duration) / 1000))

/** The header fields of one decision, added to the response whatever it turns out to be. */
const withHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

/** A rate-limit decision: the header fields to send, and the problem to answer when the request may not go on. */
export interface RateLimitDecision {
  readonly headers: Record<string, string>
  readonly problem?: TooManyRequests | ServiceUnavailable
}

const allowed = (bucket: RateLimitBucketName, policy: RateLimit, remaining: number, resetAfter: Duration.Duration) => ({
  headers: {
    "ratelimit-policy": `"${bucket}";q=${policy.requests};w=${policy.windowSeconds}`,
    ratelimit: `"${bucket}";r=${remaining};t=${wholeSeconds(resetAfter)}`
  }
})

const exceeded = (
  bucket: RateLimitBucketName,
  policy: RateLimit,
  retryAfterDuration: Duration.Duration
): RateLimitDecision => {
  const retryAfter = Math.max(1, wholeSeconds(retryAfterDuration))
  return {
    headers: {
      "ratelimit-policy": `"${bucket}";q=${policy.requests};w=${policy.windowSeconds}`,
      ratelimit: `"${bucket}";r=0;t=${retryAfter}`,
      "retry-after": String(retryAfter)
    },
    problem: rateLimitExceeded(
      bucket === "signIn"
        ? `At most ${policy.requests} console sign-ins per ${policy.windowSeconds} seconds from one address; retry in ${retryAfter} seconds.`
        : bucket === "hostedFlow"
          ? `At most ${policy.requests} verification page submissions per ${policy.windowSeconds} seconds from one address; retry in ${retryAfter} seconds.`
          : `This API key may make ${policy.requests} ${bucket} requests per ${policy.windowSeconds} seconds; retry in ${retryAfter} seconds.`,
      retryAfter
    )
  }
}

const storeDownProblem = storeUnavailable("Rate limits cannot be checked right now; retry shortly.")
const storeDown = (): RateLimitDecision => ({
  headers: { "retry-after": String(storeDownProblem.retryAfterSeconds) },
  problem: storeDownProblem
})

/** A policy's window and refill rate as `RateLimiter.consume` derives them (a window of at least 1 ms). */
interface Window {
  readonly window: Duration.Duration
  readonly refillRateMillis: number
}

const windows = new WeakMap<RateLimit, Window>()
const windowOf = (policy: RateLimit): Window => {
  let known = windows.get(policy)
  if (known === undefined) {
    const window = Duration.max(Duration.seconds(policy.windowSeconds), Duration.millis(1))
    known = { window, refillRateMillis: Duration.toMillis(Duration.divideUnsafe(window, policy.requests)) }
    windows.set(policy, known)
  }
  return known
}

export interface RateLimitDecider {
  /** Consumes one request of the key's budget in the bucket (never fails: the decision says); `signIn` and `hostedFlow` count by client address. */
  decide(keyId: string, bucket: RateLimitBucketName): Effect.Effect<RateLimitDecision>
  /** Gives one request back to the key's budget in the bucket (a take undone: the count and its window both). */
  giveBack(keyId: string, bucket: RateLimitBucketName): Effect.Effect<void>
  /** The same, taken at `now` (epoch ms) without an effect: present only when the store is process memory. */
  readonly decideNow: ((keyId: string, bucket: RateLimitBucketName, now: number) => RateLimitDecision) | undefined
}

export const makeRateLimitDecider: Effect.Effect<RateLimitDecider, never, RateLimiter.RateLimiter | Snapshot> =
  Effect.gen(function* () {
    const limiter = yield* RateLimiter.RateLimiter
    const config = yield* Snapshot
    const counters = yield* SyncRateLimitCounters
    // `RateLimiter.consume` (fixed window, one token, failing when exceeded), over counters in this process.
    const decideIn = (
      local: FixedWindowCounters,
      keyId: string,
      bucket: RateLimitBucketName,
      now: number
    ): RateLimitDecision => {
      const policy = config.current().config.settings.rateLimits[bucket]
      const { window, refillRateMillis } = windowOf(policy)
      const limit = policy.requests
      if (1 > limit) return exceeded(bucket, policy, window)
      const count = local.take(`${bucket}:${keyId}`, 1, refillRateMillis, limit, now)
      const resetAfter = Duration.millis(local.ttl)
      return count > limit ? exceeded(bucket, policy, resetAfter) : allowed(bucket, policy, limit - count, resetAfter)
    }
    // While a shared store is down and limits fail open, each process counts on its own.
    const meanwhile = counters ?? new FixedWindowCounters()
    const whenDown = (keyId: string, bucket: RateLimitBucketName): RateLimitDecision =>
      config.current().config.settings.rateLimits.whenStoreDown === "open"
        ? decideIn(meanwhile, keyId, bucket, Date.now())
        : storeDown()
    /** Takes `tokens` from the key's budget in the bucket, as its policy in force says (a fixed window). */
    const take = (keyId: string, bucket: RateLimitBucketName, policy: RateLimit, tokens: number) =>
      limiter.consume({
        key: `${bucket}:${keyId}`,
        limit: policy.requests,
        window: Duration.seconds(policy.windowSeconds),
        algorithm: "fixed-window",
        onExceeded: "fail",
        tokens
      })
    const decide = (keyId: string, bucket: RateLimitBucketName): Effect.Effect<RateLimitDecision> => {
      const policy = config.current().config.settings.rateLimits[bucket]
      return take(keyId, bucket, policy, 1).pipe(
        Effect.match({
          onSuccess: (result): RateLimitDecision => allowed(bucket, policy, result.remaining, result.resetAfter),
          onFailure: (error): RateLimitDecision =>
            error.reason._tag === "RateLimitExceeded"
              ? exceeded(bucket, policy, error.reason.retryAfter)
              : whenDown(keyId, bucket)
        })
      )
    }
    // A take of -1 undoes one: both stores lower the count and shorten the window by one request's share.
    const giveBack = (keyId: string, bucket: RateLimitBucketName): Effect.Effect<void> =>
      Effect.ignore(take(keyId, bucket, config.current().config.settings.rateLimits[bucket], -1))
    const decideNow =
      counters === undefined
        ? undefined
        : (keyId: string, bucket: RateLimitBucketName, now: number): RateLimitDecision =>
            decideIn(counters, keyId, bucket, now)
    return { decide, giveBack, decideNow }
  })

/** Whether an answer accepted the request: not a client error (a 429 of the handler's own too), not a replay. */
const accepted = (response: HttpServerResponse.HttpServerResponse): boolean =>
  !(response.status >= 400 && response.status < 500) && response.headers[REPLAYED_HEADER] !== "true"

/**
 * The decision as middleware: sets the header fields on the response and
 * fails with the problem, if any; in a bucket that counts accepted requests
 * only, an answer that did not accept gives the unit back.
 */
export const makeRateLimitCheck = Effect.map(
  makeRateLimitDecider,
  ({ decide, giveBack }) =>
    (
      keyId: string,
      annotations: Context.Context<never>
    ): Effect.Effect<void, TooManyRequests | ServiceUnavailable, HttpServerRequest.HttpServerRequest> => {
      const bucket = rateLimitBucketOf(annotations)
      return Effect.flatMap(decide(keyId, bucket), (decision) => {
        if (decision.problem !== undefined)
          return Effect.andThen(withHeaders(decision.headers), Effect.fail(decision.problem))
        if (!countsAcceptedOnly(bucket)) return withHeaders(decision.headers)
        return HttpEffect.appendPreResponseHandler((_request, response) =>
          Effect.as(
            accepted(response) ? Effect.void : giveBack(keyId, bucket),
            HttpServerResponse.setHeaders(response, decision.headers)
          )
        )
      })
    }
)
