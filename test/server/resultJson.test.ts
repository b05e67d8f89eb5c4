import { describe, expect, it } from "vitest"
import { offerResultText, resultsText, resultText } from "../../src/server/resultJson.ts"
import { fixtureEngine } from "../fixtures.ts"

const engine = fixtureEngine()

const emails = [
  "jane@mit.edu",
  "Jane@MIT.EDU",
  "bob@ox.ac.uk",
  "x@stu.y.edu.cn",
  "x@newcollege.edu",
  "a@partner.com",
  "a@mailinator.com",
  "not an email",
  '"quoted"@mit.edu',
  "a@mіt.edu",
  "ü@tum.de"
]

describe("validation results as JSON text", () => {
  it("is exactly what JSON.stringify writes, for every kind of result, also when written again", () => {
    for (let round = 0; round < 2; round++) {
      const results = engine.validateMany(emails, "uk")
      for (const result of results) expect(resultText(result)).toBe(JSON.stringify(result))
      expect(resultsText(results)).toBe(JSON.stringify(results))
      expect(resultText(results[0]!, "req-1")).toBe(JSON.stringify({ ...results[0]!, requestId: "req-1" }))
      const offers = engine.validateManyOffer(emails, "o")
      for (const offer of offers) expect(offerResultText(offer)).toBe(JSON.stringify(offer))
      expect(offerResultText(offers[2]!, "req-2")).toBe(JSON.stringify({ ...offers[2]!, requestId: "req-2" }))
    }
  })
})
