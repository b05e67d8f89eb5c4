/**
 * The adaptive steps kept as rows (`rateLimiterAdaptive.ts`) against
 * Effect's own memory store: the same consumes and 429 answers, at the same
 * times, give the same delays, epochs and phases, whichever way a run goes.
 */
import { expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as TestClock from "effect/testing/TestClock"
import { type AdaptiveState, adaptiveConsumeStep, adaptiveFeedbackStep } from "../../src/store/rateLimiterAdaptive.ts"

type Step =
  | { readonly wait: number }
  | { readonly consume: number }
  | { readonly feedback: { readonly tokens: number; readonly retryAfter: number; readonly stale?: boolean } }

/** A pseudo-random run: waits, consumes and 429 answers (some of an epoch gone by). */
const run = (seed: number): Array<Step> => {
  let x = seed
  const next = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648
    return x % n
  }
  return Array.from({ length: 60 }, (): Step => {
    const kind = next(10)
    if (kind < 3) return { wait: next(4000) }
    if (kind < 8) return { consume: 1 + next(3) }
    return { feedback: { tokens: 1 + next(2), retryAfter: next(3000), stale: next(5) === 0 } }
  })
}

it.effect("consumes and feedback give what Effect's memory store gives, over 20 runs", () =>
  Effect.gen(function* () {
    const phases = new Set<string>()
    for (let seed = 1; seed <= 20; seed++) {
      const memory = yield* Effect.service(RateLimiter.RateLimiterStore).pipe(
        Effect.provide(RateLimiter.layerStoreMemory)
      )
      let state: AdaptiveState | undefined
      let epoch = 0
      for (const step of run(seed)) {
        if ("wait" in step) {
          yield* TestClock.adjust(Duration.millis(step.wait))
          continue
        }
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        if ("consume" in step) {
          const options = {
            key: "k",
            tokens: step.consume,
            fallbackLimit: 10,
            fallbackWindow: Duration.seconds(10)
          }
          const expected = yield* memory.adaptiveConsume(options)
          const [answer, next] = adaptiveConsumeStep(state, now, options)
          if (next !== undefined) state = next
          expect({ ...answer, delay: Duration.toMillis(answer.delay) }).toEqual({
            ...expected,
            delay: Duration.toMillis(expected.delay)
          })
          epoch = answer.epoch
          phases.add(answer.phase)
        } else {
          const options = {
            key: "k",
            epoch: step.feedback.stale === true ? epoch + 7 : epoch,
            tokens: step.feedback.tokens,
            status: 429,
            retryAfter: Duration.millis(step.feedback.retryAfter)
          }
          yield* memory.adaptiveFeedback(options)
          const [, next] = adaptiveFeedbackStep(state, now, options)
          if (next !== undefined) state = next
        }
      }
    }
    // Every phase was met along the way.
    expect([...phases].sort()).toEqual(["cooldown", "inactive", "learned", "learning"])
  })
)
