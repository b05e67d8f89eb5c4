/**
 * The clock outside `TestClock`, for a store connection in a test on the
 * test clock: a connection's time bounds (a command's timeout, the stall
 * breaker's probe, a pool's idle connections) are about the network's real
 * time, and a test's `TestClock.adjust` of a day must not fire them under
 * running commands.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

export const liveClock = Layer.effect(
  Clock.Clock,
  Effect.flatMap(Clock.clockWith(Effect.succeed), (clock) =>
    "withLive" in clock ? TestClock.withLive(Clock.clockWith(Effect.succeed)) : Effect.succeed(clock)
  )
)
