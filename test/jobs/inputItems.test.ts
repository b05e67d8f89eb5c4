import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { InputItems } from "../../src/jobs/inputItems.ts"

/** What `take` hands out over a whole input, joined. */
const written = (items: InputItems, taken: Array<Uint8Array>): string => {
  taken.push(...items.take())
  return Buffer.concat(taken).toString("utf8")
}

describe("InputItems", () => {
  it("writes every line in order as UTF-8, across segments, verbatim runs and takes, long lines included", () => {
    const item = fc.oneof(
      fc.record({ kind: fc.constant("email" as const), email: fc.string({ unit: "grapheme", maxLength: 40 }) }),
      fc.record({
        kind: fc.constant("columns" as const),
        email: fc.string({ maxLength: 20 }),
        cell: fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.constant("é😀".repeat(40_000)))
      }),
      fc.record({ kind: fc.constant("bad" as const), raw: fc.string({ unit: "grapheme", maxLength: 200 }) }),
      fc.record({ kind: fc.constant("verbatim" as const), email: fc.emailAddress() }),
      fc.record({ kind: fc.constant("take" as const) })
    )
    fc.assert(
      fc.property(fc.array(item, { maxLength: 60 }), (list) => {
        const items = new InputItems(1_000_000)
        const taken: Array<Uint8Array> = []
        let expected = ""
        for (const next of list) {
          if (next.kind === "email") {
            items.email(next.email)
            expected += `${JSON.stringify(next.email)}\n`
          } else if (next.kind === "columns") {
            items.email(next.email, [next.cell])
            expected += `${JSON.stringify({ email: next.email, columns: [next.cell] })}\n`
          } else if (next.kind === "bad") {
            items.bad(next.raw, "unreadable")
            expected += `${JSON.stringify({ bad: next.raw, reason: "unreadable" })}\n`
          } else if (next.kind === "verbatim") {
            const line = `${JSON.stringify(next.email)}\n`
            items.verbatim(Buffer.from(line), 1)
            expected += line
          } else {
            taken.push(...items.take())
            expect(items.pendingSize).toBe(0)
          }
        }
        expect(written(items, taken)).toBe(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("counts the bytes pending until they are taken", () => {
    const items = new InputItems(10)
    items.email("jane@ox.ac.uk")
    items.verbatim(Buffer.from(`"sam@mit.edu"\n`), 1)
    expect(items.pendingSize).toBe(`"jane@ox.ac.uk"\n"sam@mit.edu"\n`.length)
    expect(Buffer.concat(items.take()).toString()).toBe(`"jane@ox.ac.uk"\n"sam@mit.edu"\n`)
    expect(items.pendingSize).toBe(0)
    expect(items.total).toBe(2)
  })
})
