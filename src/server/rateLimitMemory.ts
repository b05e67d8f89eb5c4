/**
 * The process-memory rate-limit store, readable without running an effect.
 * `FixedWindowCounters` keeps the counts of Effect's fixed-window algorithm
 * with the semantics of `RateLimiter.layerStoreMemory` (a counter restarts
 * once its expiry has passed; each token taken pushes the expiry by the
 * refill rate, `window / limit`; a take over the limit changes nothing and
 * reports the count it would have reached). The same counters serve two
 * callers: the `RateLimiterStore` of this layer (the Effect pipeline goes
 * through `RateLimiter.consume` as before) and the fast path, which reads
 * them synchronously. Running the limiter as an effect per hot-path request
 * cost 1-2.5k of about 6k requests/s (bench/http.ts).
 *
 * `SyncRateLimitCounters` is the layer-level flag: set only by this layer,
 * so a store of another kind (Redis) leaves it `undefined` and the fast path
 * runs the limiter as an effect. Equivalence with the Effect module is
 * checked by test/server/rateLimitMemory.test.ts.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"

interface Counter {
  count: number
  expiresAt: number
}

export class FixedWindowCounters {
  readonly #counters = new Map<string, Counter>()
  /** The time to live (ms) of the counter last taken from, as `RateLimiterStore.fixedWindow` reports it. */
  ttl = 0

  /**
   * Takes `tokens` from `key`'s counter at `now` (epoch ms); returns the
   * count after the take and sets `ttl`. With a `limit`, a take that would
   * pass it is not counted, and the count it would have reached is returned.
   */
  take(key: string, tokens: number, refillRateMillis: number, limit: number | undefined, now: number): number {
    let counter = this.#counters.get(key)
    if (counter === undefined || counter.expiresAt <= now) {
      counter = { count: 0, expiresAt: now }
      this.#counters.set(key, counter)
    }
    if (limit !== undefined && limit !== 0 && counter.count + tokens > limit) {
      this.ttl = counter.expiresAt - now
      return counter.count + tokens
    }
    counter.count += tokens
    counter.expiresAt += refillRateMillis * tokens
    this.ttl = counter.expiresAt - now
    return counter.count
  }
}

/** The counters when the store is this process's memory, else `undefined` (the store must be run as an effect). */
export const SyncRateLimitCounters = Context.Reference<FixedWindowCounters | undefined>(
  "campusgate/server/SyncRateLimitCounters",
  { defaultValue: () => undefined }
)

/** `RateLimiter.layerStoreMemory` with its fixed-window counts kept in `counters`. */
const storeOver = (counters: FixedWindowCounters): Layer.Layer<RateLimiter.RateLimiterStore> =>
  Layer.effect(
    RateLimiter.RateLimiterStore,
    Effect.map(Effect.service(RateLimiter.RateLimiterStore), (memory) =>
      RateLimiter.RateLimiterStore.of({
        ...memory,
        fixedWindow: (options) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const refillRateMillis = Duration.toMillis(options.refillRate)
              const now = clock.currentTimeMillisUnsafe()
              const count = counters.take(options.key, options.tokens, refillRateMillis, options.limit, now)
              return [count, counters.ttl] as const
            })
          )
      })
    )
  ).pipe(Layer.provide(RateLimiter.layerStoreMemory))

/** The limiter over process memory, and the flag that lets the fast path read the same counters synchronously. */
export const rateLimiterLayerMemory: Layer.Layer<RateLimiter.RateLimiter> = Layer.unwrap(
  Effect.sync(() => {
    const counters = new FixedWindowCounters()
    return Layer.merge(
      Layer.succeed(SyncRateLimitCounters, counters),
      RateLimiter.layer.pipe(Layer.provide(storeOver(counters)))
    )
  })
)
