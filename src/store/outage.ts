/**
 * A store outage, whatever the store's kind (memory, files, Redis, or one
 * to come): the one mark that tells a store that cannot be used now —
 * unreachable or stalled, a full disk, a read-only or broken volume — from
 * a bug, so that the server answers it 503 with `Retry-After`, never 500.
 *
 * Every store port's error is marked beside its class (`ResourceStoreError`,
 * `JobStoreError`, `VerificationStoreError`, ...), so an adapter of any
 * kind that maps its failures to its port's error is recognised; the Redis
 * connection fails every command with a marked `RedisError`
 * (`store/redis.ts`), for the adapters that hand a Redis failure on as it
 * is. A new kind of store maps its failures the same way; nothing that
 * recognises an outage names a store's kind.
 */

/** The mark of an error that is a store outage (a symbol of the registry, the same in every copy of this module). */
const StoreOutage: unique symbol = Symbol.for("campusgate/store/StoreOutage")

/** Marks every error of `Class` as a store outage: called once, beside the class. */
export const markOutage = (Class: { readonly prototype: object }): void => {
  Object.defineProperty(Class.prototype, StoreOutage, { value: true })
}

/** How many causes deep an outage is looked for (a defect wraps a port's error, which wraps the client's). */
const MAX_DEPTH = 6

/**
 * Whether a failure or defect is, or was caused by, a store outage: the
 * error itself, its `cause`, or the `reason` an error of a service carries
 * inside, a few levels deep.
 */
export const isStoreOutage = (failure: unknown): boolean => {
  let current: unknown = failure
  for (let depth = 0; depth < MAX_DEPTH && current !== null && typeof current === "object"; depth++) {
    if ((current as { readonly [StoreOutage]?: unknown })[StoreOutage] === true) return true
    const { cause, reason } = current as { readonly cause?: unknown; readonly reason?: unknown }
    current = cause ?? reason
  }
  return false
}
