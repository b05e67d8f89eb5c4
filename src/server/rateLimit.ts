/**
 * Rate limits per API key, one budget per bucket (`bulk`, `validate`,
 * `default`; see `api/rateLimits.ts`), counted by Effect's `RateLimiter`
 * (fixed window) over a `RateLimiterStore` layer: in memory for one
 * process, Redis (`RateLimiter.layerStoreRedis`) when replicas must share
 * budgets. Limits are read from the config snapshot of each request, so a
 * reload changes them at once.
 *
 * Every answer to a request that got this far carries the IETF header fields
 * of draft-ietf-httpapi-ratelimit-headers (`RateLimit-Policy: "bulk";q=10;w=60`
 * and `RateLimit: "bulk";r=3;t=42`, `t` in seconds until the budget resets);
 * a request over budget is a 429 `RATE_LIMIT_EXCEEDED` with `Retry-After`.
 */
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { ServiceUnavailable, TooManyRequests } from "../api/problems.ts"
import { type RateLimitBucketName, rateLimitBucketOf } from "../api/rateLimits.ts"
import type { RateLimit } from "../config/Settings.ts"
import { ServerConfig } from "./ServerConfig.ts"

/** The limiter over a store; the default store is process-local memory. */
export const rateLimiterLayer = (
  store: Layer.Layer<RateLimiter.RateLimiterStore> = RateLimiter.layerStoreMemory
): Layer.Layer<RateLimiter.RateLimiter> => RateLimiter.layer.pipe(Layer.provide(store))

/** How long a client should wait when the limiter store cannot be reached. */
const STORE_DOWN_RETRY_SECONDS = 5

const wholeSeconds = (duration: Duration.Duration): number => Math.max(0, Math.ceil(Duration.toMillis(duration) / 1000))

/** The header fields of one decision, added to the response whatever it turns out to be. */
const withHeaders = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

const decisionHeaders = (bucket: RateLimitBucketName, policy: RateLimit, remaining: number, resetSeconds: number) => ({
  "ratelimit-policy": `"${bucket}";q=${policy.requests};w=${policy.windowSeconds}`,
  ratelimit: `"${bucket}";r=${remaining};t=${resetSeconds}`
})

/**
 * Builds the check the authorisation middleware runs once the key is known:
 * it draws one request from the key's budget for the endpoint's bucket.
 */
/** A rate-limit decision: the header fields to send, and the problem to answer when the request may not go on. */
export interface RateLimitDecision {
  readonly headers: Record<string, string>
  readonly problem?: TooManyRequests | ServiceUnavailable
}

/** Consumes one request of the key's budget in the endpoint's bucket (never fails: the decision says). */
export const makeRateLimitDecision = Effect.gen(function* () {
  const limiter = yield* RateLimiter.RateLimiter
  const config = yield* ServerConfig
  return (keyId: string, annotations: Context.Context<never>, requestId: string): Effect.Effect<RateLimitDecision> => {
    const bucket = rateLimitBucketOf(annotations)
    const policy = config.current().config.settings.rateLimits[bucket]
    return limiter
      .consume({
        key: `${bucket}:${keyId}`,
        limit: policy.requests,
        window: Duration.seconds(policy.windowSeconds),
        algorithm: "fixed-window",
        onExceeded: "fail"
      })
      .pipe(
        Effect.match({
          onSuccess: (result): RateLimitDecision => ({
            headers: decisionHeaders(bucket, policy, result.remaining, wholeSeconds(result.resetAfter))
          }),
          onFailure: (error): RateLimitDecision => {
            const reason = error.reason
            if (reason._tag === "RateLimitExceeded") {
              const retryAfter = Math.max(1, wholeSeconds(reason.retryAfter))
              return {
                headers: { ...decisionHeaders(bucket, policy, 0, retryAfter), "retry-after": String(retryAfter) },
                problem: new TooManyRequests({
                  code: "RATE_LIMIT_EXCEEDED",
                  detail: `This API key may make ${policy.requests} ${bucket} requests per ${policy.windowSeconds} seconds; retry in ${retryAfter} seconds.`,
                  retryAfterSeconds: retryAfter,
                  requestId
                })
              }
            }
            return {
              headers: { "retry-after": String(STORE_DOWN_RETRY_SECONDS) },
              problem: new ServiceUnavailable({
                code: "SERVICE_ERROR",
                detail: "Rate limits cannot be checked right now; retry shortly.",
                retryAfterSeconds: STORE_DOWN_RETRY_SECONDS,
                requestId
              })
            }
          }
        })
      )
  }
})

/** The decision as middleware: sets the header fields on the response and fails with the problem, if any. */
export const makeRateLimitCheck = Effect.map(
  makeRateLimitDecision,
  (decide) =>
    (
      keyId: string,
      annotations: Context.Context<never>,
      requestId: string
    ): Effect.Effect<void, TooManyRequests | ServiceUnavailable, HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(decide(keyId, annotations, requestId), (decision) =>
        Effect.andThen(
          withHeaders(decision.headers),
          decision.problem === undefined ? Effect.void : Effect.fail(decision.problem)
        )
      )
)
