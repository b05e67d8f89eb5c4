/**
 * The send queue of verification messages: `concurrency` worker fibers take
 * items in order and `process` them; an item whose attempt failed for now
 * comes back after the wait `process` asks for (exponential backoff is the
 * caller's rule, `sendBackoffMs`), on Effect's `Clock`, so tests step
 * through retries with `TestClock`. `offer` refuses when `maxQueued` items
 * are waiting or sleeping before a retry — the only case a start request
 * answers 503. The queue holds ids and secrets in memory only: what it
 * must not lose lives in the verification store (a record whose message is
 * `queued`), and is offered again at start.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

export interface SendQueue<A> {
  /** Adds an item; false (nothing added) when the queue is full. */
  offer(item: A): boolean
  /** Items waiting, in progress or sleeping before a retry. */
  readonly size: number
}

/** What processing an item asks for: nothing more, or another attempt after a wait (of `item`, else the same). */
export type Processed<A = unknown> = { readonly retryAfterMs: number; readonly item?: A | undefined } | undefined

export interface SendQueueOptions<A> {
  readonly concurrency: number
  readonly maxQueued: number
  readonly process: (item: A) => Effect.Effect<Processed<A>>
}

/** The wait before attempt `attempt + 1` (after `attempt` failures): 1 s, 2 s, 4 s, ... at most 5 minutes. */
export const sendBackoffMs = (attempts: number): number => Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1))

export const makeSendQueue = <A>(options: SendQueueOptions<A>): Effect.Effect<SendQueue<A>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<A>()
    const scope = yield* Effect.scope
    let size = 0
    const worker = Effect.forever(
      Effect.gen(function* () {
        const item = yield* Queue.take(queue)
        const outcome = yield* options.process(item).pipe(Effect.catchCause(() => Effect.succeed(undefined)))
        if (outcome === undefined) {
          size--
          return
        }
        yield* Effect.forkIn(
          Effect.andThen(
            Effect.sleep(outcome.retryAfterMs),
            Effect.sync(() => Queue.offerUnsafe(queue, outcome.item ?? item))
          ),
          scope
        )
      })
    )
    for (let i = 0; i < options.concurrency; i++) yield* Effect.forkIn(worker, scope)
    return {
      offer: (item) => {
        if (size >= options.maxQueued) return false
        size++
        Queue.offerUnsafe(queue, item)
        return true
      },
      get size() {
        return size
      }
    }
  })
