/** Ineligible validations by reason (and matches by target group) as bars: largest first, shares and lengths. */
import { describe, expect, it } from "vitest"
import { barsOf } from "../../console/src/data/bars.ts"

describe("bars of counts by name", () => {
  it("puts the largest first, ties by name, and leaves out zeros", () => {
    const bars = barsOf({ NOT_AN_INSTITUTION: 2, DISPOSABLE_EMAIL: 6, ROLE_ACCOUNT: 2, COUNTRY_NOT_ALLOWED: 0 })
    expect(bars.map((bar) => [bar.name, bar.count])).toEqual([
      ["DISPOSABLE_EMAIL", 6],
      ["NOT_AN_INSTITUTION", 2],
      ["ROLE_ACCOUNT", 2]
    ])
  })

  it("gives each bar its share of the total and its length against the largest", () => {
    const [first, second] = barsOf({ a: 3, b: 1 })
    expect(first).toEqual({ name: "a", count: 3, share: 0.75, length: 1 })
    expect(second).toEqual({ name: "b", count: 1, share: 0.25, length: 1 / 3 })
  })

  it("is empty when nothing was counted", () => {
    expect(barsOf({})).toEqual([])
    expect(barsOf({ a: 0 })).toEqual([])
  })
})
