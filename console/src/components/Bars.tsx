/**
 * A horizontal bar chart of counts by name (ineligible validations by
 * reason, matches by target group) as a list: each row names its bar and
 * says its count and share in text, so it reads the same without the bars;
 * `Bar` is one row's content, which the verification funnel's steps use too.
 * Bar lengths are set through the CSSOM (Preact's style property), which
 * the console's Content-Security-Policy allows, unlike style attributes.
 */
import type { Bar as BarFigures } from "../data/bars.ts"
import { formatCount, formatShare } from "../data/format.ts"

/** A bar's name, its length (0 to 1 of the track) and its count with its share in words. */
export const Bar = (props: BarFigures) => (
  <>
    <span class="bar-name">{props.name}</span>
    <span class="bar-track" aria-hidden="true">
      <span class="bar-fill" style={{ width: `${(props.length * 100).toFixed(2)}%` }} />
    </span>
    <span class="bar-value">
      {formatCount(props.count)} <span class="muted">({formatShare(props.share)})</span>
    </span>
  </>
)

export const Bars = (props: {
  readonly bars: ReadonlyArray<BarFigures>
  readonly label: string
  readonly empty: string
}) =>
  props.bars.length === 0 ? (
    <p class="note">{props.empty}</p>
  ) : (
    <ul class="bars" aria-label={props.label}>
      {props.bars.map((bar) => (
        <li key={bar.name} class="bar-row" data-name={bar.name} data-count={bar.count}>
          <Bar {...bar} />
        </li>
      ))}
    </ul>
  )
