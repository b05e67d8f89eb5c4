/**
 * A gzip file's content whose request does not name its format: NDJSON or
 * CSV from its first line that is not blank (`inputFormat.ts`), read by the
 * reader chosen whatever the cuts (`readJobInput` with `detect`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { DETECT_BYTES, detectFormat, formatOfFirstLine } from "../../src/jobs/inputFormat.ts"
import { itAnswers } from "../support/tables.ts"
import { cutAt, encoder, read } from "./jobInputHelpers.ts"

describe("formatOfFirstLine", () => {
  itAnswers("is NDJSON for a JSON object or a JSON string, CSV for anything else: %j → %j", formatOfFirstLine, [
    ['{"email":"jane@ox.ac.uk","customerId":"c-1"}', "ndjson"],
    ['  "jane@ox.ac.uk"\r', "ndjson"],
    ["customerId,email", "csv"],
    ["email", "csv"],
    // A header quoted, as R's write.csv writes one: not one JSON string.
    ['"customerId","email"', "csv"],
    // The one column `email` quoted is a CSV header: as an NDJSON item it would be no address.
    ['"Email"', "csv"],
    ['"jane@ox.ac.uk",x', "csv"]
  ])
})

describe("detectFormat", () => {
  it("waits for the end of the first line that is not blank, a BOM dropped", () => {
    expect(detectFormat(encoder.encode('\uFEFF"jane@ox'), false)).toBeUndefined()
    expect(detectFormat(encoder.encode('\uFEFF"jane@ox.ac.uk"\n'), false)).toBe("ndjson")
    expect(detectFormat(encoder.encode('\r\n  \n{"email":"a@b.c"}\r\n'), false)).toBe("ndjson")
    expect(detectFormat(encoder.encode("\n\nemail\n"), false)).toBe("csv")
    expect(detectFormat(encoder.encode("\n \n"), false)).toBeUndefined()
    expect(detectFormat(encoder.encode('"jane@ox.ac.uk"'), true)).toBe("ndjson")
    expect(detectFormat(encoder.encode(""), true)).toBe("csv")
  })

  it("reads a first line longer than it looks at as CSV", () => {
    const long = `email,${"x".repeat(DETECT_BYTES)}`
    expect(detectFormat(encoder.encode(long.slice(0, DETECT_BYTES - 1)), false)).toBeUndefined()
    expect(detectFormat(encoder.encode(long), false)).toBe("csv")
  })
})

describe("readJobInput: detect", () => {
  it.effect("reads NDJSON and CSV as when named, whatever the cuts, one byte at a time included", () =>
    Effect.gen(function* () {
      const bodies = {
        ndjson: '\uFEFF\r\n"jane@ox.ac.uk"\r\n{"email":"kim@cam.ac.uk","customerId":"c-42"}\r\n42\r\n',
        csv: '\uFEFFcustomerId;Email\r\nc-41;jane@ox.ac.uk\r\n"c;42";kim@cam.ac.uk\r\n'
      }
      for (const format of ["ndjson", "csv"] as const) {
        const body = encoder.encode(bodies[format])
        const named = yield* read(format, body)
        expect(named.input.total).toBeGreaterThan(1)
        for (const cuts of [[], [1], [3, 4, 5], Array.from({ length: body.length - 1 }, (_, i) => i + 1)]) {
          const detected = yield* read("detect", cutAt(body, cuts))
          expect(detected.items, `${format} cut at ${cuts.join(",")}`).toEqual(named.items)
          expect(detected.input).toEqual(named.input)
        }
      }
    })
  )

  it.effect("keeps the named format's rules: a CSV without an email column, no emails at all", () =>
    Effect.gen(function* () {
      const noColumn = yield* Effect.flip(read("detect", "name\nJane\n"))
      expect(noColumn).toMatchObject({ reason: "MissingEmailColumn" })
      const empty = yield* Effect.flip(read("detect", "\n\n"))
      expect(empty).toMatchObject({ reason: "NoEmails", errors: [{ field: "/body" }] })
    })
  )
})
