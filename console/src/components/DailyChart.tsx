/**
 * An offer's daily validations, eligible and ineligible counts as a uPlot
 * time series. uPlot is loaded on first use (its own chunk), so the sign-in
 * screen does not pay for it. Days are UTC dates whatever the browser's
 * zone; the legend shows the values of the day under the cursor, and the
 * arrow keys move that cursor day by day when the chart has focus. The
 * colours come from the page's CSS variables, so the chart follows the
 * light or dark scheme (rebuilt when it changes). A table of the same
 * figures sits beside it for screen readers and copying.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type uPlot from "uplot"
import { chartSeries, type DayCounts, utcDate } from "../data/days.ts"
import { formatCount } from "../data/format.ts"
import { useDarkScheme } from "../hooks.ts"

const HEIGHT = 260

const WHOLE_STEPS = [1, 2, 5]
  .flatMap((step) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6].map((scale) => step * scale))
  .sort((a, b) => a - b)

const shortDate = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", timeZone: "UTC" })

const cssVar = (element: Element, name: string): string => getComputedStyle(element).getPropertyValue(name).trim()

const optionsOf = (element: HTMLElement, width: number, UPlot: typeof uPlot): uPlot.Options => {
  const text = cssVar(element, "--text-muted")
  const grid = cssVar(element, "--grid")
  const axis = (label: string): uPlot.Axis => ({
    stroke: text,
    grid: { stroke: grid, width: 1 },
    ticks: { stroke: grid, width: 1 },
    label,
    labelSize: 18,
    font: "12px system-ui, sans-serif",
    labelFont: "12px system-ui, sans-serif"
  })
  return {
    width,
    height: HEIGHT,
    tzDate: (seconds) => UPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    legend: { live: true },
    cursor: { drag: { x: false, y: false }, points: { size: 7 } },
    series: [
      { label: "Day", value: (_u, seconds) => (seconds === null ? "—" : utcDate(seconds * 1000)) },
      { label: "Validations", stroke: cssVar(element, "--series-validations"), width: 2 },
      { label: "Eligible", stroke: cssVar(element, "--series-eligible"), width: 2 },
      { label: "Ineligible", stroke: cssVar(element, "--series-ineligible"), width: 2, dash: [6, 4] }
    ],
    axes: [
      { ...axis("Day (UTC)"), values: (_u, ticks) => ticks.map((tick) => shortDate.format(tick * 1000)) },
      // Counts are whole: ticks at whole steps only.
      { ...axis("Validations"), incrs: WHOLE_STEPS, values: (_u, ticks) => ticks.map((tick) => formatCount(tick)) }
    ]
  }
}

/** The day under the cursor in words, for the slider's value text. */
const dayText = (day: DayCounts | undefined): string =>
  day === undefined
    ? "no day"
    : `${day.date}: ${day.validations} validations, ${day.eligible} eligible, ${day.ineligible} ineligible`

export const DailyChart = (props: { readonly days: ReadonlyArray<DayCounts>; readonly label: string }) => {
  const holder = useRef<HTMLDivElement>(null)
  const chart = useRef<uPlot | undefined>(undefined)
  const [failed, setFailed] = useState<string | undefined>(undefined)
  const [cursor, setCursor] = useState(props.days.length - 1)
  const dark = useDarkScheme()
  const data = chartSeries(props.days)
  const last = props.days.length - 1
  const index = Math.min(Math.max(0, cursor), last)

  useEffect(() => {
    const element = holder.current
    if (element === null) return
    let cancelled = false
    let observer: ResizeObserver | undefined
    import("uplot").then(
      ({ default: UPlot }) => {
        if (cancelled) return
        const options = optionsOf(element, element.clientWidth || 600, UPlot)
        options.hooks = {
          // The legend starts on the newest day rather than empty.
          ready: [(plot) => plot.setLegend({ idx: plot.data[0].length - 1 })],
          setCursor: [(plot) => plot.cursor.idx != null && setCursor(plot.cursor.idx)]
        }
        const plot = new UPlot(options, data, element)
        chart.current = plot
        observer = new ResizeObserver(() => plot.setSize({ width: element.clientWidth || 600, height: HEIGHT }))
        observer.observe(element)
      },
      (error: Error) => setFailed(error.message)
    )
    return () => {
      cancelled = true
      observer?.disconnect()
      chart.current?.destroy()
      chart.current = undefined
    }
    // Rebuilt for a new colour scheme; new data goes through setData below.
  }, [dark])

  // Only new figures are drawn again (a cursor move re-renders this component too).
  const figures = props.days.map((day) => `${day.date}:${day.validations}:${day.eligible}:${day.ineligible}`).join()
  useEffect(() => {
    chart.current?.setData(data)
  }, [figures])

  /** Left and right move the cursor a day, Home and End to the ends; the legend and the value text say the day. */
  const onKey = (event: KeyboardEvent) => {
    const next =
      event.key === "ArrowLeft" || event.key === "ArrowDown"
        ? Math.max(0, index - 1)
        : event.key === "ArrowRight" || event.key === "ArrowUp"
          ? Math.min(last, index + 1)
          : event.key === "Home"
            ? 0
            : event.key === "End"
              ? last
              : undefined
    if (next === undefined) return
    event.preventDefault()
    setCursor(next)
    const plot = chart.current
    if (plot === undefined) return
    const x = plot.data[0][next]!
    const y = plot.data[1]?.[next] ?? 0
    plot.setCursor({ left: plot.valToPos(x, "x"), top: plot.valToPos(y, "y") })
  }

  return (
    <figure class="chart">
      <div
        ref={holder}
        class="chart-canvas"
        role="slider"
        tabIndex={0}
        aria-label={`${props.label}. Arrow keys move from day to day.`}
        aria-valuemin={0}
        aria-valuemax={last}
        aria-valuenow={index}
        aria-valuetext={dayText(props.days[index])}
        onKeyDown={onKey}
      />
      {failed === undefined ? null : (
        <p class="note note-error" role="alert">
          The chart could not load: {failed}
        </p>
      )}
      <figcaption class="visually-hidden">{props.label}</figcaption>
    </figure>
  )
}
