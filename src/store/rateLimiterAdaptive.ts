/**
 * The adaptive rate-limit state of Effect's `RateLimiterStore` (learning a
 * server's own limit from its 429 answers) as pure steps over a stored
 * state, for a store that keeps the state as a row and runs a step under
 * the row's lock (`rateLimiterPostgres.ts`). The phases, the epochs that
 * match feedback to the consume it answers, the minute of grace before a
 * state expires and the hour a window is bounded to are those of
 * `RateLimiter.layerStoreMemory` and its Redis store, so every store learns
 * the same limit from the same answers.
 */
import * as Duration from "effect/Duration"
import type * as RateLimiter from "effect/persistence/RateLimiter"

/** How long a state outlives its last use. */
const GRACE_MS = 60_000
/** The longest cooldown or learned window. */
const MAX_WINDOW_MS = 60 * 60 * 1000

export interface AdaptiveState {
  readonly phase: "cooldown" | "learning" | "learned"
  readonly epoch: number
  readonly cooldownUntil: number
  readonly learningStartedAt: number
  readonly observedTokens: number
  readonly learnedLimit: number
  readonly learnedWindowMillis: number
  /** Epoch ms; past it the state is as absent. */
  readonly expiresAt: number
}

const boundedWindow = (millis: number): number =>
  Number.isNaN(millis) || millis <= 0 ? 1 : Math.min(millis, MAX_WINDOW_MS)

const answer = (
  delayMillis: number,
  epoch: number,
  phase: RateLimiter.AdaptivePhase
): RateLimiter.AdaptiveConsumeResult => ({
  delay: delayMillis <= 0 ? Duration.zero : Duration.millis(delayMillis),
  epoch,
  phase
})

/** A cooldown until `until` at `epoch`, nothing learned. */
const cooldown = (epoch: number, until: number): AdaptiveState => ({
  phase: "cooldown",
  epoch,
  cooldownUntil: until,
  learningStartedAt: 0,
  observedTokens: 0,
  learnedLimit: 0,
  learnedWindowMillis: 0,
  expiresAt: until + GRACE_MS
})

/** A consume at `now`: the answer, and the state to store (undefined: unchanged). */
export const adaptiveConsumeStep = (
  state: AdaptiveState | undefined,
  now: number,
  options: RateLimiter.AdaptiveConsumeOptions
): readonly [RateLimiter.AdaptiveConsumeResult, AdaptiveState | undefined] => {
  if (state === undefined) return [answer(0, 0, "inactive"), undefined]
  switch (state.phase) {
    case "cooldown": {
      if (state.cooldownUntil > now) return [answer(state.cooldownUntil - now, state.epoch, "cooldown"), undefined]
      const learning: AdaptiveState = {
        ...cooldown(state.epoch + 1, 0),
        phase: "learning",
        learningStartedAt: now,
        observedTokens: options.tokens,
        expiresAt: now + Duration.toMillis(options.fallbackWindow) + GRACE_MS
      }
      return [answer(0, learning.epoch, "learning"), learning]
    }
    case "learning":
      return [answer(0, state.epoch, "learning"), { ...state, observedTokens: state.observedTokens + options.tokens }]
    case "learned": {
      // Tokens are spread at the learned rate; a request waits for the window its tokens fall in.
      const refillMillis = state.learnedWindowMillis / state.learnedLimit
      const restart = state.cooldownUntil <= now
      const observedTokens = (restart ? 0 : state.observedTokens) + options.tokens
      const cooldownUntil = (restart ? now : state.cooldownUntil) + refillMillis * options.tokens
      const elapsed = observedTokens * refillMillis - (cooldownUntil - now)
      const windowNumber = Math.floor((observedTokens - 1) / state.learnedLimit)
      const wait = windowNumber * state.learnedWindowMillis - elapsed
      return [answer(wait, state.epoch, "learned"), { ...state, observedTokens, cooldownUntil }]
    }
  }
}

/** A 429 answer with its `Retry-After`, reported at `now`: the state to store (undefined: unchanged). */
export const adaptiveFeedbackStep = (
  state: AdaptiveState | undefined,
  now: number,
  options: RateLimiter.AdaptiveFeedbackOptions
): readonly [undefined, AdaptiveState | undefined] => {
  const retryAfterMillis = boundedWindow(Duration.toMillis(options.retryAfter ?? Duration.zero))
  const until = now + retryAfterMillis
  if (state === undefined) return [undefined, options.epoch === 0 ? cooldown(0, until) : undefined]
  if (state.epoch !== options.epoch) return [undefined, undefined]
  switch (state.phase) {
    case "cooldown":
      return [undefined, cooldown(state.epoch, Math.max(state.cooldownUntil, until))]
    case "learning": {
      const accepted = state.observedTokens - options.tokens
      if (accepted <= 0) return [undefined, cooldown(state.epoch, until)]
      const learnedWindowMillis = boundedWindow(now - state.learningStartedAt + retryAfterMillis)
      return [
        undefined,
        {
          phase: "learned",
          epoch: state.epoch + 1,
          cooldownUntil: state.learningStartedAt + learnedWindowMillis,
          learningStartedAt: state.learningStartedAt,
          observedTokens: accepted,
          learnedLimit: accepted,
          learnedWindowMillis,
          expiresAt: now + learnedWindowMillis + GRACE_MS
        }
      ]
    }
    case "learned":
      return [undefined, cooldown(state.epoch, until)]
  }
}
