/**
 * Arbitrary result rows for the property tests of the row writers: text of
 * any UTF-16 code units (lone surrogates, control characters, quotes,
 * backslashes, CSV separators, formula-like starts, spaces at either end),
 * every optional member present or absent, members in the schema's order as
 * `toResultRow` makes them. Institutions come from a small pool of frozen
 * objects shared by the rows, as the engine's are, with differing matched
 * domains, so that what the writers keep per institution is put to the test.
 */
import fc from "fast-check"
import { ReasonCode } from "../../src/domain/ReasonCode.ts"
import type { ResultRow, RowInstitution } from "../../src/domain/ResultRow.ts"

const tricky = [
  "",
  " ",
  '"',
  "\\",
  ",",
  "\r\n",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u2028",
  "\ud800",
  "\udfff",
  "\ud83c\udf93",
  "=",
  "+",
  "-",
  "@",
  "'",
  "é",
  "名",
  "a@uni.samples.edu"
]

/** Any text: code units of every kind, and pieces that JSON or CSV treat specially. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 }).map((units) => String.fromCharCode(...units)),
  fc.array(fc.constantFrom(...tricky), { maxLength: 6 }).map((pieces) => pieces.join(""))
)

const institution: fc.Arbitrary<RowInstitution> = fc.record({
  id: anyText,
  name: fc.option(anyText, { nil: null }),
  country: fc.option(anyText, { nil: null })
})

const reasonCode: fc.Arbitrary<ReasonCode> = fc.constantFrom(...ReasonCode.literals)

const column: fc.Arbitrary<unknown> = fc.oneof(anyText, fc.jsonValue(), fc.constant(null), fc.constant(undefined))

/** Rows whose institutions are `pool`'s (and now and then one of their own, not frozen). */
export const rowsOver = (pool: ReadonlyArray<RowInstitution>): fc.Arbitrary<ResultRow> =>
  fc.record(
    {
      email: anyText,
      isValid: fc.boolean(),
      matchedTargetGroups: fc.array(anyText, { maxLength: 3 }),
      matchedDomain: fc.oneof(anyText, fc.constantFrom("mit.edu", "uni.samples.edu")),
      institution: pool.length === 0 ? institution : fc.oneof(fc.constantFrom(...pool), institution),
      reasonCode,
      reason: anyText,
      duplicateOf: fc.integer(),
      columns: fc.dictionary(fc.oneof(anyText, fc.constantFrom("customerId", "note")), column, { maxKeys: 4 })
    },
    { requiredKeys: ["email", "isValid"] }
  )

/** A pool of frozen institutions, and rows over it. */
export const rowSequences: fc.Arbitrary<ReadonlyArray<ResultRow>> = fc
  .array(institution, { minLength: 1, maxLength: 3 })
  .chain((pool) => fc.array(rowsOver(pool.map((one) => Object.freeze({ ...one }))), { maxLength: 12 }))
