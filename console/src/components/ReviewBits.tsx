/**
 * Small pieces of the Reviews screens: a candidate's score as a bar with
 * its percentage and words, a domain's last days as small bars (an SVG
 * drawn with attributes, which the Content-Security-Policy allows, with
 * the counts in words for screen readers), and the note shown to a key
 * without `institutions:review`.
 */
import { ApiError } from "../api.ts"
import { REVIEW_SCOPE } from "../context.ts"
import { dayBars, scorePercent, scoreWords } from "../data/reviews.ts"

export { REVIEW_SCOPE }

/** Whether a failure is the daemon refusing the key for want of a scope. */
export const isScopeRefusal = (error: Error): boolean =>
  error instanceof ApiError && error.status === 403 && error.problem?.code === "INSUFFICIENT_SCOPE"

export const NoReviewScope = () => (
  <p class="note" role="status" data-no-review-scope>
    Reviewing unknown domains needs an API key with the <span class="mono">{REVIEW_SCOPE}</span> scope, and this
    session's key does not have it. Sign in with a key that has it to see the review queue.
  </p>
)

export const ScoreBar = (props: { readonly score: number; readonly words?: boolean }) => (
  <span class="score" data-score={props.score}>
    <span class="bar-track score-track" aria-hidden="true">
      <span class="bar-fill" style={{ width: scorePercent(props.score) }} />
    </span>
    <span>
      {scorePercent(props.score)}
      {props.words === false ? null : <span class="muted"> {scoreWords(props.score)}</span>}
    </span>
  </span>
)

/** The domain's last `span` days as bars, today on the right. */
export const DayBars = (props: {
  readonly days: ReadonlyArray<{ readonly day: string; readonly count: number }>
  readonly today: string
  readonly span?: number
}) => {
  const bars = dayBars(props.days, props.today, props.span)
  const total = bars.reduce((sum, bar) => sum + bar.count, 0)
  const active = bars.filter((bar) => bar.count > 0).length
  const width = 3
  const gap = 1
  const height = 20
  return (
    <span class="days">
      <svg
        class="day-bars"
        width={bars.length * (width + gap) - gap}
        height={height}
        viewBox={`0 0 ${bars.length * (width + gap) - gap} ${height}`}
        aria-hidden="true"
        focusable="false"
      >
        {bars.map((bar, index) => (
          <rect
            key={bar.day}
            x={index * (width + gap)}
            y={height - Math.max(bar.count > 0 ? 2 : 1, bar.height * height)}
            width={width}
            height={Math.max(bar.count > 0 ? 2 : 1, bar.height * height)}
            class={bar.count > 0 ? "day-bar" : "day-bar day-quiet"}
          />
        ))}
      </svg>
      <span class="visually-hidden">
        {total} in the last {bars.length} days, on {active} {active === 1 ? "day" : "days"}
      </span>
    </span>
  )
}
