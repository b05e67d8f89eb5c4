import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatLine, LOG_LEVELS, type RequestLog, requestLine, requestLineOf } from "../../src/observability/logLine.ts"

const text = fc.string({ unit: "binary", maxLength: 40 })
// Times around second boundaries and across years, in any order (the formatter keeps one second in memory).
const time = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
  fc.integer({ min: 0, max: 2000 }).map((offset) => 1_780_000_000_000 + offset)
)

describe("the request log line", () => {
  it("is what JSON.stringify writes for the entry, time included", () => {
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
    fc.assert(
      fc.property(entry, time, (log, epochMs) => {
        const expected = `${JSON.stringify({ time: new Date(epochMs).toISOString(), level: "info", msg: "request", ...log })}\n`
        expect(requestLine(log as RequestLog, epochMs)).toBe(expected)
        const { method, path, status, durationMs, requestId, keyId } = log as RequestLog
        expect(requestLineOf(method, path)(status, durationMs, requestId, keyId, epochMs)).toBe(expected)
      }),
      { numRuns: 5000 }
    )
  })
})

describe("an event log line", () => {
  // Names JavaScript keeps in insertion order (not integer-like) and that are not the line's own.
  const name = fc
    .string({ minLength: 1, maxLength: 12 })
    .filter((key) => !/^\d+$/.test(key) && !["time", "level", "msg", "__proto__"].includes(key))
  const value = fc.jsonValue({ maxDepth: 2 })

  it("is what JSON.stringify writes for time, level, msg and the fields, in that order", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LOG_LEVELS),
        text,
        fc.dictionary(name, value),
        time,
        (level, msg, fields, epochMs) => {
          const expected = `${JSON.stringify({ time: new Date(epochMs).toISOString(), level, msg, ...fields })}\n`
          expect(formatLine(level, msg, fields, epochMs)).toBe(expected)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("keeps its own time, level and msg when a field has one of their names, and skips undefined fields", () => {
    const line = formatLine(
      "warn",
      "disk full",
      { time: "no", level: "debug", msg: "other", at: undefined, dir: "/data" },
      0
    )
    expect(line).toBe('{"time":"1970-01-01T00:00:00.000Z","level":"warn","msg":"disk full","dir":"/data"}\n')
  })

  it("writes a value JSON cannot (a cycle, a bigint) as its text rather than failing", () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    const line = JSON.parse(formatLine("error", "odd", { cycle, big: 10n }, 0))
    expect(line).toMatchObject({ msg: "odd", cycle: "[object Object]", big: "10" })
  })

  it("passes every string through the replacer, however deep", () => {
    const upper = (_: string, value: unknown) => (typeof value === "string" ? value.toUpperCase() : value)
    const line = JSON.parse(formatLine("info", "msg", { list: ["a", { b: "c" }], d: 1 }, 0, upper))
    expect(line).toEqual({ time: "1970-01-01T00:00:00.000Z", level: "info", msg: "MSG", list: ["A", { b: "C" }], d: 1 })
  })
})
