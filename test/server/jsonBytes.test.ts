import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { JsonBytes } from "../../src/server/jsonBytes.ts"

describe("JsonBytes", () => {
  it("holds the UTF-8 of the pieces written, whatever the estimate (growing past it) and the characters", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 60 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 400 }),
        (pieces, estimate) => {
          const out = new JsonBytes(estimate)
          for (const piece of pieces) out.write(piece)
          expect(out.bytes()).toEqual(Buffer.from(pieces.join(""), "utf8"))
        }
      ),
      { numRuns: 300 }
    )
  })
})
