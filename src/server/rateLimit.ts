/**
 * Rate limits per API key, one budget per bucket (`bulk`, `validate`,
 * `default`; see `api/rateLimits.ts`), counted by Effect's `RateLimiter`
 * (fixed window) over a `RateLimiterStore` layer: in memory for one
 * process, Redis (`rateLimiterStoreRedis`, chosen in `deployment/redisStores.ts`) when replicas must share
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
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { rateLimitExceeded, type ServiceUnavailable, storeUnavailable, type TooManyRequests } from "../api/problems.ts"
import { countsAcceptedOnly, type RateLimitBucketName, REPLAYED_HEADER, rateLimitBucketOf } from "../api/rateLimits.ts"
import { Snapshot } from "../app/Snapshot.ts"
import type { RateLimit } from "../config/Settings.ts"
import { LeasedBudgets, leaseSize } from "./rateLimitLease.ts"
import { FixedWindowCounters, rateLimiterLayerMemory, SyncRateLimitCounters } from "./rateLimitMemory.ts"

/** The limiter over a store; the default store is process-local memory (which the fast path reads synchronously). */
export const rateLimiterLayer = (
  store?: Layer.Layer<RateLimiter.RateLimiterStore>
): Layer.Layer<RateLimiter.RateLimiter> =>
  store === undefined
    ? rateLimiterLayerMemory
    : Layer.merge(
        RateLimiter.layer,
        Layer.effect(SharedRateLimitStore, Effect.service(RateLimiter.RateLimiterStore))
      ).pipe(Layer.provide(store))

/** The shared store the limiter counts in, when it is not this process's memory: budgets are leased from it. */
export const SharedRateLimitStore = Context.Reference<RateLimiter.RateLimiterStore["Service"] | undefined>(
  "campusgate/server/SharedRateLimitStore",
  { defaultValue: () => undefined }
)

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
  /**
   * The same, taken at `now` (epoch ms) without an effect, when it can be:
   * always with process memory; with a shared store while this daemon holds
   * a lease of the budget (`rateLimitLease.ts`), else undefined (then `decide`).
   */
  decideNow(keyId: string, bucket: RateLimitBucketName, now: number): RateLimitDecision | undefined
}

export const makeRateLimitDecider: Effect.Effect<RateLimitDecider, never, RateLimiter.RateLimiter | Snapshot> =
  Effect.gen(function* () {
    const limiter = yield* RateLimiter.RateLimiter
    const config = yield* Snapshot
    const counters = yield* SyncRateLimitCounters
    const shared = yield* SharedRateLimitStore
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
    const decideByConsume = (keyId: string, bucket: RateLimitBucketName): Effect.Effect<RateLimitDecision> => {
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
    if (counters !== undefined)
      return {
        decide: decideByConsume,
        giveBack,
        decideNow: (keyId, bucket, now) => decideIn(counters, keyId, bucket, now)
      }
    if (shared === undefined) return { decide: decideByConsume, giveBack, decideNow: () => undefined }
    return { ...leasedDecider(shared, config, whenDown), giveBack }
  })

/** A decision from a lease this daemon holds, or undefined. */
const fromLease = (
  leases: LeasedBudgets,
  bucket: RateLimitBucketName,
  keyId: string,
  policy: RateLimit,
  now: number
): RateLimitDecision | undefined => {
  const key = `${bucket}:${keyId}`
  const taken = leases.take(key, policy.requests, now)
  if (taken !== undefined) return allowed(bucket, policy, taken.remaining, Duration.millis(taken.resetAfterMillis))
  const refused = leases.refusal(key, policy.requests, now)
  return refused === undefined ? undefined : exceeded(bucket, policy, Duration.millis(refused))
}

/**
 * Decisions over budgets leased from a shared store (`rateLimitLease.ts`):
 * from the lease while it lasts, else one store step leases the next slice
 * (what is left of the budget when a whole slice is not), one lease at a
 * time per key: requests arriving meanwhile wait for it and take from it.
 */
const leasedDecider = (
  store: RateLimiter.RateLimiterStore["Service"],
  config: Snapshot["Service"],
  whenDown: (keyId: string, bucket: RateLimitBucketName) => RateLimitDecision
): Pick<RateLimitDecider, "decide" | "decideNow"> => {
  const leases = new LeasedBudgets()
  // The lease being taken per counter key, and what it decided for the requests that waited for it.
  const leasing = new Map<string, Deferred.Deferred<RateLimitDecision | undefined>>()

  /** Takes `tokens` from the store's window: the count after the take (over the limit: refused, nothing taken) and its time left. */
  const storeTake = (key: string, policy: RateLimit, tokens: number) =>
    store.fixedWindow({
      key,
      tokens,
      refillRate: Duration.millis(windowOf(policy).refillRateMillis),
      limit: policy.requests
    })

  const lease = (keyId: string, bucket: RateLimitBucketName, policy: RateLimit): Effect.Effect<RateLimitDecision> => {
    const key = `${bucket}:${keyId}`
    const limit = policy.requests
    const kept = (tokens: number, count: number, ttl: number): RateLimitDecision => {
      leases.keep(key, tokens - 1, count, ttl, limit, Date.now())
      return allowed(bucket, policy, Math.max(0, limit - count) + tokens - 1, Duration.millis(ttl))
    }
    const refused = (ttl: number): RateLimitDecision => {
      leases.refuse(key, ttl, limit, Date.now())
      return exceeded(bucket, policy, Duration.millis(ttl))
    }
    return Effect.gen(function* () {
      if (1 > limit) return exceeded(bucket, policy, windowOf(policy).window)
      const size = leaseSize(limit)
      const [count, ttl] = yield* storeTake(key, policy, size)
      if (count <= limit) return kept(size, count, ttl)
      // Not a whole slice left: what is (the count before the take was `count - size`), else refused.
      const room = limit - (count - size)
      if (room <= 0) return refused(ttl)
      const [after, left] = yield* storeTake(key, policy, room)
      return after <= limit ? kept(room, after, left) : refused(left)
    }).pipe(Effect.catch(() => Effect.succeed(whenDown(keyId, bucket))))
  }

  const decide = (keyId: string, bucket: RateLimitBucketName): Effect.Effect<RateLimitDecision> =>
    Effect.suspend(() => {
      const policy = config.current().config.settings.rateLimits[bucket]
      const now = fromLease(leases, bucket, keyId, policy, Date.now())
      if (now !== undefined) return Effect.succeed(now)
      const key = `${bucket}:${keyId}`
      const pending = leasing.get(key)
      // Another request is leasing: wait for it; a refusal holds for this request too, a lease is taken from.
      if (pending !== undefined)
        return Effect.flatMap(Deferred.await(pending), (refused) =>
          refused === undefined ? decide(keyId, bucket) : Effect.succeed(refused)
        )
      const done = Deferred.makeUnsafe<RateLimitDecision | undefined>()
      leasing.set(key, done)
      // Out of the map before the waiters wake, so none of them waits for this lease again.
      return lease(keyId, bucket, policy).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            leasing.delete(key)
            const decision = exit._tag === "Success" ? exit.value : undefined
            Deferred.doneUnsafe(done, Exit.succeed(decision?.problem === undefined ? undefined : decision))
          })
        )
      )
    })

  const decideNow = (keyId: string, bucket: RateLimitBucketName, now: number): RateLimitDecision | undefined =>
    fromLease(leases, bucket, keyId, config.current().config.settings.rateLimits[bucket], now)

  return { decide, decideNow }
}

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
