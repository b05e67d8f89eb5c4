import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type RequestLog, requestLine } from "../../src/server/RequestLogger.ts"

describe("the request log line", () => {
  it("is what JSON.stringify writes for the entry, time included", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 })
    const entry = fc.record(
      {
        method: text,
        path: text,
        status: fc.integer({ min: 100, max: 599 }),
        durationMs: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constantFrom(0, 0.01, 12.5)),
        requestId: text,
        keyId: text
      },
      { requiredKeys: ["method", "path", "status", "durationMs", "requestId"] }
    )
    // Times around second boundaries and across years, in any order (the formatter keeps one second in memory).
    const time = fc.oneof(
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      fc.integer({ min: 0, max: 2000 }).map((offset) => 1_780_000_000_000 + offset)
    )
    fc.assert(
      fc.property(entry, time, (log, epochMs) => {
        const expected = `${JSON.stringify({ time: new Date(epochMs).toISOString(), level: "info", msg: "request", ...log })}\n`
        expect(requestLine(log as RequestLog, epochMs)).toBe(expected)
      }),
      { numRuns: 5000 }
    )
  })
})
