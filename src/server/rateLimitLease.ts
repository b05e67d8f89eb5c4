/**
 * Budgets leased from a shared rate-limit store (Redis, PostgreSQL), so a
 * request does not wait for the store: a daemon takes a slice of a key's
 * budget in one atomic step of the store's fixed window
 * (`RateLimiterStore.fixedWindow` with the slice's tokens, the same counter
 * `RateLimiter.consume` counts in) and hands the slice out from memory,
 * synchronously, until it is used up or the window it was taken in ends;
 * then the next request leases the next slice.
 *
 * What it promises, and what it costs:
 * - nothing is admitted that the store did not count: every daemon together
 *   admits at most the budget (no over-admission);
 * - a slice taken but not used before its window ends is lost: per daemon
 *   and window, at most `leaseSize(limit) - 1` requests are refused that the
 *   budget had room for. `leaseSize` keeps a slice at 1% of the limit, and
 *   at 1 below `LEASE_SHARE` requests, so small budgets (bulk: 10 a minute)
 *   stay exact;
 * - a slice lasts: each token the store counts lengthens its window by
 *   `window / limit` (Effect's fixed window), so a slice of 1% is good for at
 *   least 1% of the window (600 ms of a minute) whatever the limit. A slice
 *   capped at 1,000 requests lasted 1,000 / limit of the window: under a
 *   millisecond for a limit of a billion a minute (the benchmarks' limits),
 *   so a busy daemon took a store step every few dozen answers (`npm run
 *   bench:matrix`: Redis commands per answer 0.058 before, 0.003 after,
 *   which is the daemon's background polls);
 * - `RateLimit: r=` tells the budget left as the store last said, plus the
 *   slice this daemon still holds: other daemons' slices are not seen until
 *   its next lease.
 * - a refusal from the store is repeated without asking it for up to
 *   `REFUSAL_MS` (a key over its budget does not cost a store step per
 *   request); a request given back on another daemon meanwhile is seen
 *   after that.
 * A request given back (a job submission not accepted) goes back to the
 * store, where every daemon can use it again.
 * Leases of windows that ended are swept as new ones come, so the map holds
 * the keys (and, for per-address buckets, the addresses) of the current
 * windows only.
 */

/** A slice is the limit over this (1%). */
export const LEASE_SHARE = 100
/** How long a refusal from the store is repeated without asking it again (ms); less if its window ends sooner. */
export const REFUSAL_MS = 1000
/** Leases kept between two sweeps of the ended ones. */
const SWEEP_EVERY = 1024

/** The tokens one lease takes from a budget of `limit`. */
export const leaseSize = (limit: number): number => Math.max(1, Math.floor(limit / LEASE_SHARE))

interface Lease {
  /** Tokens taken from the store and not yet handed out. */
  tokens: number
  /** When the store's window the tokens were taken in ends (epoch ms). */
  readonly endsAt: number
  /** The store's count after the take. */
  readonly storeCount: number
  /** The limit the tokens were taken under (a reload that changes it makes the lease void). */
  readonly limit: number
  /** Until when the store's refusal is repeated (epoch ms; 0: it did not refuse). */
  readonly refusedUntil: number
}

/** One request taken from a lease: the budget left as far as this daemon knows, and when its window ends. */
export interface LeasedTake {
  readonly remaining: number
  readonly resetAfterMillis: number
}

/** The slices of budgets this daemon holds, by counter key (`<bucket>:<key id or address>`). */
export class LeasedBudgets {
  readonly #leases = new Map<string, Lease>()
  #keptSinceSweep = 0

  /** One request from `key`'s lease at `now`, or undefined when it holds no token of a window still running. */
  take(key: string, limit: number, now: number): LeasedTake | undefined {
    const lease = this.#leases.get(key)
    if (lease === undefined || lease.tokens <= 0 || lease.endsAt <= now || lease.limit !== limit) return undefined
    lease.tokens--
    return { remaining: Math.max(0, limit - lease.storeCount) + lease.tokens, resetAfterMillis: lease.endsAt - now }
  }

  /**
   * Keeps `tokens` taken from the store at `now` (one more was handed out by
   * the caller), the store's count after the take and the window's time left.
   */
  keep(key: string, tokens: number, storeCount: number, ttlMillis: number, limit: number, now: number): void {
    if (++this.#keptSinceSweep >= SWEEP_EVERY) this.#sweep(now)
    this.#leases.set(key, { tokens, endsAt: now + ttlMillis, storeCount, limit, refusedUntil: 0 })
  }

  /** Remembers that the store refused `key` at `now`, its window ending in `ttlMillis`. */
  refuse(key: string, ttlMillis: number, limit: number, now: number): void {
    if (++this.#keptSinceSweep >= SWEEP_EVERY) this.#sweep(now)
    const endsAt = now + ttlMillis
    this.#leases.set(key, {
      tokens: 0,
      endsAt,
      storeCount: limit,
      limit,
      refusedUntil: Math.min(endsAt, now + REFUSAL_MS)
    })
  }

  /** The time (ms) until `key`'s window ends when the store refused it moments ago, else undefined. */
  refusal(key: string, limit: number, now: number): number | undefined {
    const lease = this.#leases.get(key)
    return lease === undefined || lease.refusedUntil <= now || lease.limit !== limit ? undefined : lease.endsAt - now
  }

  /** How many leases are held (for tests). */
  get size(): number {
    return this.#leases.size
  }

  #sweep(now: number): void {
    this.#keptSinceSweep = 0
    for (const [key, lease] of this.#leases) if (lease.endsAt <= now) this.#leases.delete(key)
  }
}
