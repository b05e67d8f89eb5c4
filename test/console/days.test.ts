/** The offer chart's days: every day of the 7/30/90-day window, quiet days as zeros, as uPlot's columns. */
import { describe, expect, it } from "vitest"
import { chartSeries, fillDays, utcDate, WINDOWS, windowDates, windowTotals } from "../../console/src/data/days.ts"

const day = (date: string, validations: number, eligible: number) => ({
  date,
  validations,
  eligible,
  ineligible: validations - eligible
})

describe("the chart's window", () => {
  it("offers 7, 30 and 90 days", () => {
    expect(WINDOWS).toEqual([7, 30, 90])
  })

  it("ends with today, oldest first, across a month and a leap day", () => {
    expect(windowDates(3, "2028-03-01")).toEqual(["2028-02-28", "2028-02-29", "2028-03-01"])
    expect(windowDates(2, "2027-01-01")).toEqual(["2026-12-31", "2027-01-01"])
    for (const days of WINDOWS) {
      const dates = windowDates(days, "2026-05-31")
      expect(dates).toHaveLength(days)
      expect(dates.at(-1)).toBe("2026-05-31")
      expect(new Set(dates).size).toBe(days)
    }
    expect(windowDates(90, "2026-05-31")[0]).toBe("2026-03-03")
  })

  it("takes today in UTC, whatever the hour", () => {
    expect(utcDate(Date.parse("2026-05-31T23:59:59.999Z"))).toBe("2026-05-31")
    expect(utcDate(Date.parse("2026-06-01T00:30:00+02:00"))).toBe("2026-05-31")
  })
})

describe("filling the days", () => {
  const daily = [day("2026-05-01", 9, 9), day("2026-05-25", 4, 1), day("2026-05-28", 10, 6), day("2026-05-31", 2, 0)]

  it("keeps the counts of the days in the window and gives every other day zeros", () => {
    const week = fillDays(daily, 7, "2026-05-31")
    expect(week).toEqual([
      day("2026-05-25", 4, 1),
      day("2026-05-26", 0, 0),
      day("2026-05-27", 0, 0),
      day("2026-05-28", 10, 6),
      day("2026-05-29", 0, 0),
      day("2026-05-30", 0, 0),
      day("2026-05-31", 2, 0)
    ])
    expect(windowTotals(week)).toEqual({ validations: 16, eligible: 7, ineligible: 9 })
  })

  it("leaves out days before the window and after today", () => {
    const later = [...daily, day("2026-06-01", 5, 5)]
    // 30 days to May 31 start on May 2: May 1 is out, June 1 is after today.
    expect(windowTotals(fillDays(later, 30, "2026-05-31"))).toEqual({ validations: 16, eligible: 7, ineligible: 9 })
    expect(windowTotals(fillDays(later, 90, "2026-05-31"))).toEqual({ validations: 25, eligible: 16, ineligible: 9 })
    expect(windowTotals(fillDays(later, 7, "2026-06-01")).validations).toBe(17)
  })

  it("is all zeros for an offer never validated", () => {
    const empty = fillDays([], 30, "2026-05-31")
    expect(empty).toHaveLength(30)
    expect(windowTotals(empty)).toEqual({ validations: 0, eligible: 0, ineligible: 0 })
  })
})

describe("the chart's columns", () => {
  it("are midnight UTC in Unix seconds, then validations, eligible and ineligible per day", () => {
    const [xs, validations, eligible, ineligible] = chartSeries(fillDays([day("2026-05-30", 3, 2)], 2, "2026-05-31"))
    expect(xs).toEqual([Date.parse("2026-05-30T00:00:00Z") / 1000, Date.parse("2026-05-31T00:00:00Z") / 1000])
    expect(xs[1]! - xs[0]!).toBe(86_400)
    expect(validations).toEqual([3, 0])
    expect(eligible).toEqual([2, 0])
    expect(ineligible).toEqual([1, 0])
  })
})
