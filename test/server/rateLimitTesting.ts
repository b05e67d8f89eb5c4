/** A config holder for rate-limit tests, whose limits a test replaces as a reload would. */
import * as Layer from "effect/Layer"
import type { RateLimitBucketName } from "../../src/api/rateLimits.ts"
import type { ConfigSnapshot } from "../../src/app/Snapshot.ts"
import { Snapshot } from "../../src/app/Snapshot.ts"
import type { RateLimit } from "../../src/config/Settings.ts"

export type Limits = Record<RateLimitBucketName, RateLimit>

/** A config holder whose rate limits the test replaces, as a reload would. */
export const configWith = (initial: Limits) => {
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
