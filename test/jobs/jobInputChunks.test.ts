/**
 * Chunk boundaries anywhere (inside a UTF-8 character, between `\r` and `\n`,
 * inside a quoted CSV field, inside a JSON string or nested element) change
 * nothing; the JSON document read as it arrives answers what parsing it whole
 * would.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { cutAt, encoder, read } from "./jobInputHelpers.ts"

const emailText = fc.string({
  unit: fc.constantFrom("a", "b", "@", ".", "ü", "😀", ",", '"', " ", "\\", "\n", "é", "x"),
  minLength: 1,
  maxLength: 12
})

const csvCell = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value)

const run = (format: "ndjson" | "csv", body: Uint8Array, chunks: ReadonlyArray<Uint8Array>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const whole = yield* read(format, body)
      const cut = yield* read(format, chunks)
      return { whole, cut }
    })
  )

describe("readJobInput across chunk boundaries", () => {
  it("NDJSON and CSV read the same items whatever the cuts, one byte at a time included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(emailText, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        async (emails, crlf, bom, cutSeeds, byteByByte) => {
          const eol = crlf ? "\r\n" : "\n"
          const prefix = bom ? "\uFEFF" : ""
          const bodies = {
            ndjson: encoder.encode(prefix + emails.map((email) => JSON.stringify(email)).join(eol) + eol),
            csv: encoder.encode(
              `${prefix}id,email${eol}${emails.map((email, i) => `${i},${csvCell(email)}`).join(eol)}`
            )
          }
          for (const format of ["ndjson", "csv"] as const) {
            const body = bodies[format]
            const cuts = byteByByte
              ? Array.from({ length: body.length - 1 }, (_, i) => i + 1)
              : [...new Set(cutSeeds.map((seed) => seed % (body.length + 1)))].sort((a, b) => a - b)
            const { whole, cut } = await run(format, body, cutAt(body, cuts))
            const expected =
              format === "csv"
                ? emails.map((email, i) => (email.trim() === "" ? expect.anything() : { email, columns: [String(i)] }))
                : emails
            expect(whole.items).toEqual(expected)
            expect(cut.items).toEqual(whole.items)
            expect(cut.input.bodyHash).toBe(whole.input.bodyHash)
          }
        }
      ),
      { numRuns: 150 }
    )
  })

  it("a JSON document reads as parsing it whole would, whatever the cuts and the spacing", async () => {
    const element = fc.oneof(
      emailText,
      fc.record({ email: emailText, note: fc.jsonValue({ maxDepth: 2 }) }),
      fc.jsonValue({ maxDepth: 3 })
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(element, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(0, 1, 2, "\t"),
        fc.option(fc.constantFrom("edu", 'a"b'), { nil: undefined }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (emails, spacing, targetGroupId, cutSeeds) => {
          const document = { extra: { nested: [1, { emails: "not these" }] }, emails, targetGroupId }
          const body = encoder.encode(JSON.stringify(document, null, spacing))
          const cuts = [...new Set(cutSeeds.map((seed) => seed % (body.length + 1)))].sort((a, b) => a - b)
          // An object's fields besides email are columns, named in first-seen order.
          const names: Array<string> = []
          const columnsOf = (object: Record<string, unknown>) => {
            let values: Array<unknown> | undefined
            for (const key of Object.keys(object)) {
              if (key === "email") continue
              if (!names.includes(key)) names.push(key)
              values ??= []
              while (values.length < names.indexOf(key)) values.push(null)
              values[names.indexOf(key)] = object[key]
            }
            return values
          }
          const expected = JSON.parse(
            JSON.stringify(
              emails.map((value) => {
                const object =
                  typeof value === "object" && value !== null && !Array.isArray(value)
                    ? (value as Record<string, unknown>)
                    : undefined
                const columns = object === undefined ? undefined : columnsOf(object)
                const email = object === undefined ? value : object.email
                if (typeof email === "string") return columns === undefined ? email : { email, columns }
                return {
                  bad: JSON.stringify(value).slice(0, 1000),
                  reason: "expected a JSON string or an object with a string email",
                  ...(columns === undefined ? {} : { columns })
                }
              })
            )
          )
          const whole = await Effect.runPromise(read("json", body, { maxEmails: 100 }))
          const cut = await Effect.runPromise(read("json", cutAt(body, cuts), { maxEmails: 100 }))
          expect(whole.items).toEqual(expected)
          expect(cut.items).toEqual(whole.items)
          expect(whole.input.fields).toEqual(targetGroupId === undefined ? {} : { targetGroupId })
        }
      ),
      { numRuns: 200 }
    )
  })

  it("an invalid UTF-8 byte is found whichever chunk it falls in", async () => {
    for (const format of ["ndjson", "csv"] as const) {
      const body = encoder.encode(`${format === "csv" ? "email\n" : ""}"a@x.edu"\n"ü@x.edu"\n`)
      body[body.length - 8] = 0xff
      for (let cut = 0; cut <= body.length; cut++) {
        const error = await Effect.runPromise(Effect.flip(read(format, cutAt(body, [cut]))))
        expect(error.reason).toBe("InvalidUtf8")
      }
    }
  })
})
