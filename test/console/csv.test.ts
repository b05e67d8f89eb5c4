/** The CSV export of the daily figures: what the chart draws, RFC 4180, named after the offer and the window. */
import { describe, expect, it } from "vitest"
import { csvField, dailyCsv, dailyCsvName } from "../../console/src/data/csv.ts"
import { fillDays } from "../../console/src/data/days.ts"

describe("the daily CSV", () => {
  it("has a header and one CRLF row per day of the window, quiet days as zeros", () => {
    const days = fillDays([{ date: "2026-05-30", validations: 5, eligible: 3, ineligible: 2 }], 3, "2026-05-31")
    expect(dailyCsv(days)).toBe(
      "date,validations,eligible,ineligible\r\n2026-05-29,0,0,0\r\n2026-05-30,5,3,2\r\n2026-05-31,0,0,0\r\n"
    )
  })

  it("quotes a field with a comma, a quote or a line break", () => {
    expect(csvField("plain")).toBe("plain")
    expect(csvField(12)).toBe("12")
    expect(csvField('say "hi", then\nleave')).toBe('"say ""hi"", then\nleave"')
  })

  it("is named after the offer, the last day and the window, safely", () => {
    expect(dailyCsvName("acme-spring", "2026-05-31", 30)).toBe("acme-spring-2026-05-31-30d.csv")
    expect(dailyCsvName("a/b c", "2026-05-31", 7)).toBe("a_b_c-2026-05-31-7d.csv")
  })
})
