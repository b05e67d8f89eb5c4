import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as reference from "../../bench/rowsReference.ts"
import { rowCsv } from "../../src/domain/ResultRow.ts"
import { anyText, rowSequences } from "./rowTesting.ts"

describe("row CSV line", () => {
  it("is the line the former rule writes (quoting, formula guard, input columns), for any rows", () => {
    fc.assert(
      fc.property(rowSequences, fc.array(anyText, { maxLength: 3 }), (rows, extraColumns) => {
        for (const row of rows) {
          const inputColumns = [...Object.keys(row.columns ?? {}), ...extraColumns]
          expect(rowCsv(row)).toBe(reference.rowCsv(row))
          expect(rowCsv(row, inputColumns)).toBe(reference.rowCsv(row, inputColumns))
        }
      }),
      { numRuns: 500 }
    )
  })
})
