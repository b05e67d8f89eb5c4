/**
 * Rate-limit buckets, as the contract declares them: every API key has one
 * budget per bucket, and each endpoint names its bucket with the
 * `RateLimitBucket` annotation (an endpoint without it draws on `default`).
 * The budgets themselves are deploy settings (`rateLimits` in
 * `campusgate.yaml`); the spec fixes bulk operations at 10 per minute.
 */
import * as Context from "effect/Context"

/**
 * `bulk`: bulk validation, batch offer processing; `jobs`: job submissions
 * (bulk-async) — two budgets, so submitting large jobs never uses up the
 * synchronous bulk calls of the same key, nor the other way round;
 * `validate`: single validations; `verifications`: starting, confirming,
 * resending and cancelling verifications; `signIn`: console sign-ins, counted
 * per client address rather than per key (no endpoint of the API draws on it);
 * `hostedFlow`: the hosted verification page's form submissions, per client
 * address too.
 */
export type RateLimitBucketName = "bulk" | "jobs" | "validate" | "verifications" | "default" | "signIn" | "hostedFlow"

/** The rate-limit bucket an endpoint draws on (an endpoint annotation). */
export class RateLimitBucket extends Context.Service<RateLimitBucket, RateLimitBucketName>()(
  "campusgate/api/RateLimitBucket"
) {}

/** The bucket of an endpoint, from its annotations. */
export const rateLimitBucketOf = (annotations: Context.Context<never>): RateLimitBucketName =>
  Context.getOrUndefined(annotations, RateLimitBucket) ?? "default"

/**
 * The buckets that count what was accepted, not what was asked: a request
 * the handler refused (a client error) or answered as a replay of an
 * earlier one (`Idempotent-Replayed: true`) gives its unit back. The jobs
 * budget counts jobs made; a mistyped submission or a client's retry does
 * not use it up.
 */
export const countsAcceptedOnly = (bucket: RateLimitBucketName): boolean => bucket === "jobs"

/** The header field marking an answer replayed for a repeated `Idempotency-Key`. */
export const REPLAYED_HEADER = "idempotent-replayed"
