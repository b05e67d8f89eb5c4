import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonString } from "../../src/domain/jsonText.ts"
import type { ResultRow } from "../../src/domain/ResultRow.ts"
import { duplicateOfText, rowText, rowTextAfterDuplicate, rowTextBeforeDuplicate } from "../../src/domain/rowText.ts"
import { anyText, rowSequences } from "./rowTesting.ts"

const withoutReason = ({ reason: _, ...row }: ResultRow): ResultRow => row

describe("row JSON text", () => {
  it("is JSON.stringify of a string, for any string (lone surrogates, controls, quotes included)", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(jsonString(text)).toBe(JSON.stringify(text))
      }),
      { numRuns: 2000 }
    )
  })

  it("is JSON.stringify of the row, for any rows in turn, sharing institutions with other domains and verdicts", () => {
    fc.assert(
      fc.property(rowSequences, (rows) => {
        // Twice over: the second pass meets every institution's kept text.
        for (let pass = 0; pass < 2; pass++) {
          for (const row of rows) {
            expect(rowText(row)).toBe(JSON.stringify(row))
            expect(rowText(row, false)).toBe(JSON.stringify(withoutReason(row)))
          }
        }
      }),
      { numRuns: 500 }
    )
  })

  it("in pieces around duplicateOf is the row's JSON with duplicateOf put in, as a job appends it", () => {
    fc.assert(
      fc.property(rowSequences, fc.integer({ min: 1 }), (rows, earlier) => {
        for (const { duplicateOf: _, ...row } of rows) {
          const { columns, ...verdict } = row
          const expected = JSON.stringify(
            columns === undefined ? { ...verdict, duplicateOf: earlier } : { ...verdict, duplicateOf: earlier, columns }
          )
          expect(rowTextBeforeDuplicate(row) + duplicateOfText(earlier) + rowTextAfterDuplicate(row)).toBe(expected)
        }
      }),
      { numRuns: 300 }
    )
  })
})
