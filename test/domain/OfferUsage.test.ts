/** `lastDays`: the daily series a chart of the last N days draws, every day present. */
import { describe, expect, it } from "vitest"
import { lastDays } from "../../src/domain/OfferUsage.ts"

const NOW = Date.parse("2026-03-02T08:30:00Z")

describe("lastDays", () => {
  it("answers exactly the last N UTC days up to today, zeros where nothing was validated", () => {
    const daily = [
      { date: "2026-02-01", validations: 9, eligible: 9, ineligible: 0 },
      { date: "2026-02-27", validations: 3, eligible: 2, ineligible: 1 },
      { date: "2026-03-02", validations: 5, eligible: 1, ineligible: 4 }
    ]
    expect(lastDays(daily, 4, NOW)).toEqual([
      { date: "2026-02-27", validations: 3, eligible: 2, ineligible: 1 },
      { date: "2026-02-28", validations: 0, eligible: 0, ineligible: 0 },
      { date: "2026-03-01", validations: 0, eligible: 0, ineligible: 0 },
      { date: "2026-03-02", validations: 5, eligible: 1, ineligible: 4 }
    ])
    expect(lastDays(daily, 1, NOW)).toEqual([daily[2]])
    const month = lastDays(daily, 30, NOW)
    expect(month).toHaveLength(30)
    expect(month[0]!.date).toBe("2026-02-01")
    expect(month.reduce((sum, day) => sum + day.validations, 0)).toBe(17)
    expect(lastDays([], 90, NOW).every((day) => day.validations === 0)).toBe(true)
  })
})
