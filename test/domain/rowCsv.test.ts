import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as reference from "../../bench/rowsReference.ts"
import { rowCsv } from "../../src/domain/rowCsv.ts"
import { anyText, rowSequences } from "./rowTesting.ts"

/**
 * The former rule read a column named after an Object.prototype member that the row lacks from the prototype (below):
 * it threw, or wrote `{}` for `__proto__`. That case aside, the same line.
 */
const formerLine = (row: Parameters<typeof rowCsv>[0], inputColumns: ReadonlyArray<string>): string | undefined => {
  if (inputColumns.some((name) => name in Object.prototype && !Object.hasOwn(row.columns ?? {}, name))) return undefined
  try {
    return reference.rowCsv(row, inputColumns)
  } catch {
    return undefined
  }
}

describe("row CSV line", () => {
  it("leaves a column the row lacks empty, whatever its name (toString, valueOf, __proto__ are no values)", () => {
    const row = { email: "a@uni.samples.edu", isValid: true, columns: { customerId: "c-1" } }
    expect(rowCsv(row, ["toString", "valueOf", "__proto__", "constructor", "customerId"])).toBe(
      "a@uni.samples.edu,true,,,,,,,,,,,,,c-1"
    )
    // A column the input did name so is the input's value.
    expect(rowCsv({ ...row, columns: JSON.parse('{"__proto__":"p","toString":"t"}') }, ["__proto__", "toString"])).toBe(
      "a@uni.samples.edu,true,,,,,,,,,p,t"
    )
  })

  it("is the line the former rule writes (quoting, formula guard, input columns), for any rows", () => {
    fc.assert(
      fc.property(rowSequences, fc.array(anyText, { maxLength: 3 }), (rows, extraColumns) => {
        for (const row of rows) {
          const inputColumns = [...Object.keys(row.columns ?? {}), ...extraColumns]
          expect(rowCsv(row)).toBe(reference.rowCsv(row))
          const former = formerLine(row, inputColumns)
          if (former !== undefined) expect(rowCsv(row, inputColumns)).toBe(former)
        }
      }),
      { numRuns: 500 }
    )
  })
})
