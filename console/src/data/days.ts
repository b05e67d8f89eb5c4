/**
 * An offer's daily figures shaped for its chart and its CSV export. The API
 * answers only the UTC days with at least one validation (`usage.daily`,
 * oldest first); a chart of the last 7, 30 or 90 days needs every day of
 * the window, the quiet ones as zeros, or its lines would join distant days.
 * Pure: the caller says which day is today (UTC), so tests fix the clock.
 */

/** The counts of one UTC day, as `usage.daily` has them. */
export interface DayCounts {
  readonly date: string
  readonly validations: number
  readonly eligible: number
  readonly ineligible: number
}

/** The windows the offer page offers, in days. */
export const WINDOWS = [7, 30, 90] as const
export type WindowDays = (typeof WINDOWS)[number]

const DAY_MS = 86_400_000

/** The UTC calendar date (`YYYY-MM-DD`) of an instant in milliseconds. */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Midnight UTC of a `YYYY-MM-DD` date, in milliseconds. */
export const dateMs = (date: string): number => Date.parse(`${date}T00:00:00Z`)

/** The `days` dates that end with `today`, oldest first. */
export const windowDates = (days: number, today: string): ReadonlyArray<string> => {
  const end = dateMs(today)
  return Array.from({ length: days }, (_, index) => utcDate(end - (days - 1 - index) * DAY_MS))
}

/** Every day of the window ending `today`, with the counts `daily` has for it and zeros for the others. */
export const fillDays = (daily: ReadonlyArray<DayCounts>, days: number, today: string): ReadonlyArray<DayCounts> => {
  const byDate = new Map(daily.map((day) => [day.date, day]))
  return windowDates(days, today).map((date) => {
    const day = byDate.get(date)
    return {
      date,
      validations: day?.validations ?? 0,
      eligible: day?.eligible ?? 0,
      ineligible: day?.ineligible ?? 0
    }
  })
}

/** Totals over a window. */
export const windowTotals = (days: ReadonlyArray<DayCounts>): Omit<DayCounts, "date"> =>
  days.reduce(
    (sum, day) => ({
      validations: sum.validations + day.validations,
      eligible: sum.eligible + day.eligible,
      ineligible: sum.ineligible + day.ineligible
    }),
    { validations: 0, eligible: 0, ineligible: 0 }
  )

/** The names of the chart's series, in the order `chartSeries` gives their values. */
export const SERIES = ["validations", "eligible", "ineligible"] as const

/**
 * The window as uPlot's columns: x in Unix seconds (midnight UTC of each
 * day), then validations, eligible and ineligible per day.
 */
export const chartSeries = (
  days: ReadonlyArray<DayCounts>
): [Array<number>, Array<number>, Array<number>, Array<number>] => [
  days.map((day) => dateMs(day.date) / 1000),
  days.map((day) => day.validations),
  days.map((day) => day.eligible),
  days.map((day) => day.ineligible)
]
