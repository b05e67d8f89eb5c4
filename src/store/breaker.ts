/**
 * The circuit breaker of a shared store's connection (Redis, PostgreSQL):
 * one per connection, made with it and given to everything that uses it,
 * so that a store that stalls costs one timeout, not one per request.
 *
 * What it guarantees:
 * - every command or statement it guards fails as the store's outage
 *   (`store/outage.ts`) when it fails, and when the store has not answered
 *   within `timeoutMs`; that timeout opens the breaker;
 * - while it is open, every guarded call fails at once, so nothing waits
 *   the timeout again; it stays open at least `PROBE_INTERVAL_MS`, then
 *   a probe (`PING`, `select 1`) runs every `PROBE_INTERVAL_MS` and the
 *   first one answered closes it;
 * - a call that timed out fails at its deadline: cancelling it (for
 *   PostgreSQL a cancel request on a side connection) goes on in the
 *   background, never on the caller's time;
 * - it can be held open with a reason (`hold`): a store that came back
 *   empty or replaced (`store/storeIdentity.ts`) must take no write, so
 *   every call fails at once with that reason until `release`, whatever
 *   the probe says.
 *
 * The time bounds are the network's: on the clock the connection was made
 * with, whatever clock a caller runs on.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"

/** How often an open breaker probes the store, and how long a probe waits for its answer. */
export const PROBE_INTERVAL_MS = 250
/** A call's deadline firing this much later than set means the thread was busy, not the store. */
const LATE_MS = 100
/** How long a late deadline waits (past an I/O turn) for the reply that may already be there. */
const LATE_GRACE_MS = 20

/**
 * The cause of every call refused while a breaker is held open: the
 * reason, for the operator and the caller (`storeHeldReason` finds it).
 */
export class StoreHeld extends Error {
  override readonly name = "StoreHeld"
}

/** The reason of a failure refused by a held breaker, a few causes deep; undefined for any other failure. */
export const storeHeldReason = (failure: unknown): string | undefined => {
  let current: unknown = failure
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    if (current instanceof StoreHeld) return current.message
    const { cause, reason } = current as { readonly cause?: unknown; readonly reason?: unknown }
    current = cause ?? reason
  }
  return undefined
}

/** A connection's breaker: what guards its calls, and the hold a lost store puts on it. */
export interface Breaker<Outage> {
  /** `effect` bounded in time and failing as the store's outage; at once while the breaker is open. */
  readonly bounded: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Outage, R>
  /** Holds the breaker open with `reason` (a lost or replaced store) until `release`. */
  readonly hold: (reason: string) => void
  readonly release: () => void
  /** The reason it is held open, if it is. */
  readonly heldFor: () => string | undefined
  /** `effect` with the hold lifted for its calls (still bounded in time): what watches whether a held store came back. */
  readonly pastHold: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * Why the daemon's shared store is held (`Breaker.heldFor` of its
 * connection), for the server to say on every 503 it answers meanwhile;
 * absent with files.
 */
export class StoreHold extends Context.Service<StoreHold, { readonly heldFor: () => string | undefined }>()(
  "campusgate/store/StoreHold"
) {}

/** Set for the calls that look past a hold (`Breaker.pastHold`). */
const PastHold = Context.Reference<boolean>("campusgate/store/breaker/PastHold", { defaultValue: () => false })

export interface BreakerOptions<Outage> {
  /** The store's name in messages: `Redis`, `PostgreSQL`. */
  readonly store: string
  /** The longest a call may take before it fails and the breaker opens. */
  readonly timeoutMs: number
  /** A call that answers when the store does (`PING`, `select 1`); unguarded. */
  readonly probe: Effect.Effect<unknown, unknown>
  /** The store's outage error for a cause (a timeout, a hold). */
  readonly outage: (cause: unknown) => Outage
  /** A call's failures as the store's outage: how the connection's client fails is the connection's to say. */
  readonly asOutage: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Outage, R>
}

/** A breaker over one connection, its probe running in the background for the scope. */
export const makeBreaker = <Outage>(
  options: BreakerOptions<Outage>
): Effect.Effect<Breaker<Outage>, never, Scope.Scope> =>
  Effect.gen(function* () {
    let stalledSince: number | undefined
    let held: string | undefined
    const clock = yield* Clock.Clock
    const stalled = () =>
      options.outage(
        new Error(
          `${options.store} is not answering (no answer within ${options.timeoutMs} ms since ${new Date(stalledSince ?? Date.now()).toISOString()}); calls fail at once until it answers again`
        )
      )
    const refusal = (pastHold: boolean): Outage | undefined =>
      held !== undefined && !pastHold
        ? options.outage(new StoreHeld(held))
        : stalledSince !== undefined
          ? stalled()
          : undefined
    const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Outage, R> =>
      Effect.flatMap(PastHold, (pastHold) => {
        const refused = refusal(pastHold)
        if (refused !== undefined) return Effect.fail(refused)
        // A deadline that fires late fired because this thread was busy (a long synchronous step, such as a
        // start compiling an index), not because the store was slow: the replies that arrived meanwhile get an
        // I/O turn before the call is judged, or a busy thread would open the breaker on a store that answered.
        const deadline = Effect.gen(function* () {
          const armed = yield* Clock.currentTimeMillis
          yield* Effect.sleep(options.timeoutMs)
          if ((yield* Clock.currentTimeMillis) - armed - options.timeoutMs > LATE_MS) yield* Effect.sleep(LATE_GRACE_MS)
          stalledSince ??= Date.now()
          return yield* Effect.fail(stalled())
        })
        // A call that fails no sooner than its deadline (the server gave up on it at the same moment) opens it too.
        const call = Effect.suspend(() => {
          const started = Date.now()
          return Effect.tapError(options.asOutage(effect), () =>
            Effect.sync(() => {
              if (Date.now() - started >= options.timeoutMs) stalledSince ??= Date.now()
            })
          )
        })
        // The call runs on its own fiber, so that losing to the deadline costs the caller no wait for its cancelling.
        const raced = Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(Effect.forkDetach(call, { startImmediately: true }), (fiber) =>
            Effect.onExit(restore(Effect.raceFirst(Fiber.join(fiber), deadline)), (exit) =>
              exit._tag === "Success" ? Effect.void : Effect.sync(() => fiber.interruptUnsafe())
            )
          )
        )
        return Effect.provideService(raced, Clock.Clock, clock)
      })
    // Once it has been open PROBE_INTERVAL_MS, probe every PROBE_INTERVAL_MS; an answer closes it.
    const probe = Effect.gen(function* () {
      if (stalledSince === undefined || Date.now() - stalledSince < PROBE_INTERVAL_MS) return
      const answered = yield* options.probe.pipe(
        Effect.timeout(PROBE_INTERVAL_MS),
        Effect.as(true),
        Effect.orElseSucceed(() => false)
      )
      if (answered) stalledSince = undefined
    }).pipe(Effect.delay(PROBE_INTERVAL_MS), Effect.forever, Effect.provideService(Clock.Clock, clock))
    yield* Effect.forkScoped(probe)
    return {
      bounded,
      hold: (reason) => {
        held = reason
      },
      release: () => {
        held = undefined
      },
      heldFor: () => held,
      pastHold: (effect) => Effect.provideService(effect, PastHold, true)
    }
  })
