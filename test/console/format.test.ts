/** How the console writes counts, shares, instants and durations. */
import { describe, expect, it } from "vitest"
import { expiryText, formatCount, formatDuration, formatInstant, formatShare } from "../../console/src/data/format.ts"
import { itAnswers } from "../support/tables.ts"

describe("formatting", () => {
  it("writes counts with separators and shares as percents", () => {
    expect(formatCount(1234567)).toBe("1,234,567")
    expect(formatShare(0.125)).toBe("12.5%")
    expect(formatShare(1)).toBe("100%")
  })

  it("writes instants in UTC to the minute", () => {
    expect(formatInstant("2026-05-31T22:15:42.123+02:00")).toBe("2026-05-31 20:15 UTC")
    expect(formatInstant(null)).toBe("—")
  })

  itAnswers("writes a duration as its largest unit and the next when not zero: %j → %j", formatDuration, [
    [0, "0 s"],
    [0.4, "< 1 s"],
    [42, "42 s"],
    [185, "3 min 5 s"],
    [7200, "2 h"],
    [7260, "2 h 1 min"],
    [4 * 86_400 + 3 * 3600 + 59, "4 d 3 h"]
  ])

  it("says when a key expires", () => {
    const now = Date.parse("2026-05-01T12:00:00Z")
    expect(expiryText("2026-05-06T12:00:00Z", now)).toBe("expires in 5 days")
    expect(expiryText("2026-05-06T11:59:00Z", now)).toBe("expires in 5 days")
    expect(expiryText("2026-05-02T13:00:00Z", now)).toBe("expires in 1 day")
    expect(expiryText("2026-05-01T13:00:00Z", now)).toBe("expires within a day")
    expect(expiryText("2026-04-30T12:00:00Z", now)).toBe("expired")
  })
})
