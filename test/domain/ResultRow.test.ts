import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as reference from "../../bench/rowsReference.ts"
import { ReasonCode } from "../../src/domain/ReasonCode.ts"
import { ROW_CSV_COLUMNS, toOfferResultRow, toResultRow } from "../../src/domain/ResultRow.ts"
import { rowCsv } from "../../src/domain/rowCsv.ts"
import { rowText } from "../../src/domain/rowText.ts"
import type { OfferValidationResult, ValidationResult } from "../../src/domain/ValidationResult.ts"
import { fixtureEngine } from "../fixtures.ts"

const engine = fixtureEngine()

const emails = [
  "Jane@MIT.EDU",
  "bob@ox.ac.uk",
  "a@partner.com",
  "a@mailinator.com",
  "not an email",
  'q"@x.edu',
  "ü@tum.de"
]

/** What a row is made of in a target-group result, each member present or not (reason code and sentence apart too). */
const groupResult = fc
  .record(
    {
      isValid: fc.boolean(),
      targetGroup: fc.record({ id: fc.constantFrom("g1", "g2", "g3") }),
      validationDetails: fc.record({
        domain: fc.record(
          {
            status: fc.constant("passed"),
            institution: fc.record({
              id: fc.string(),
              name: fc.option(fc.string(), { nil: null }),
              country: fc.option(fc.string(), { nil: null }),
              type: fc.constant("university")
            })
          },
          { requiredKeys: ["status"] }
        )
      }),
      matchedDomain: fc.string(),
      reasonCode: fc.constantFrom(...ReasonCode.literals),
      reason: fc.string()
    },
    { requiredKeys: ["isValid", "targetGroup", "validationDetails"] }
  )
  .map((result) => result as unknown as ValidationResult)

const offerResult = fc
  .record(
    {
      isValid: fc.boolean(),
      matchedTargetGroups: fc.subarray(["g1", "g2", "g3"]),
      results: fc.array(groupResult, { maxLength: 3 }),
      reasonCode: fc.constantFrom(...ReasonCode.literals),
      reason: fc.string()
    },
    { requiredKeys: ["isValid", "matchedTargetGroups", "results"] }
  )
  .map((result) => result as unknown as OfferValidationResult)

describe("result rows", () => {
  it("have the members, in the order, of the rows made member by member before (any set of members present)", () => {
    fc.assert(
      fc.property(groupResult, offerResult, (result, offer) => {
        const row = toResultRow("a@uni.samples.edu", result)
        expect(Object.keys(row)).toEqual(Object.keys(reference.toResultRow("a@uni.samples.edu", result)))
        expect(row).toStrictEqual(reference.toResultRow("a@uni.samples.edu", result))
        const offerRow = toOfferResultRow("a@uni.samples.edu", offer)
        expect(Object.keys(offerRow)).toEqual(Object.keys(reference.toOfferResultRow("a@uni.samples.edu", offer)))
        expect(offerRow).toStrictEqual(reference.toOfferResultRow("a@uni.samples.edu", offer))
      }),
      { numRuns: 1000 }
    )
  })

  it("keep the input as given, the verdict and the facts behind it", () => {
    const [mit, , partner, , bad] = engine
      .validateMany(emails, "uk")
      .map((result, i) => toResultRow(emails[i]!, result))
    expect(mit).toEqual({
      email: "Jane@MIT.EDU",
      isValid: false,
      matchedDomain: "mit.edu",
      institution: { id: expect.any(String), name: "Massachusetts Institute of Technology", country: "US" },
      reasonCode: "COUNTRY_NOT_ALLOWED",
      reason: expect.any(String)
    })
    expect(partner).toMatchObject({ email: "a@partner.com", isValid: true, matchedDomain: "partner.com" })
    expect(partner!.institution).toBeUndefined()
    expect(bad).toMatchObject({ email: "not an email", isValid: false, reasonCode: "INVALID_EMAIL_FORMAT" })
  })

  it("of an offer name the matched target groups and take the domain facts from the first match", () => {
    const rows = engine.validateManyOffer(emails, "o").map((result, i) => toOfferResultRow(emails[i]!, result))
    expect(rows[0]).toMatchObject({ email: "Jane@MIT.EDU", isValid: true, matchedTargetGroups: ["all"] })
    expect(rows[0]!.institution?.name).toBe("Massachusetts Institute of Technology")
    expect(rows[3]).toMatchObject({ isValid: false, matchedTargetGroups: [], reasonCode: "DISPOSABLE_EMAIL" })
  })

  it("as JSON text are exactly what JSON.stringify writes", () => {
    for (let round = 0; round < 2; round++) {
      engine.validateMany(emails, "uk").forEach((result, i) => {
        const row = toResultRow(emails[i]!, result)
        expect(rowText(row)).toBe(JSON.stringify(row))
      })
      engine.validateManyOffer(emails, "o").forEach((result, i) => {
        const row = toOfferResultRow(emails[i]!, result)
        expect(rowText(row)).toBe(JSON.stringify(row))
      })
    }
  })

  it("as CSV quote what needs quoting and defuse spreadsheet formulas", () => {
    expect(ROW_CSV_COLUMNS[0]).toBe("email")
    const row = toResultRow('q"@x.edu', engine.validate('q"@x.edu', "all"))
    expect(rowCsv(row).startsWith('"q""@x.edu",false,INVALID_EMAIL_FORMAT,')).toBe(true)
    expect(rowCsv({ email: "=HYPERLINK(1)@x.edu", isValid: false, reason: "a, b" })).toBe(
      '\'=HYPERLINK(1)@x.edu,false,,"a, b",,,,,,'
    )
    // A job's row: the row it repeats, then the input's other columns by name, in the order given.
    expect(
      rowCsv(
        { email: "a@x.edu", isValid: true, duplicateOf: 3, columns: { customerId: "c-42", score: 7, gone: null } },
        ["customerId", "missing", "score", "gone"]
      )
    ).toBe("a@x.edu,true,,,,,,,,3,c-42,,7,")
    const offer = toOfferResultRow("Jane@MIT.EDU", engine.validateOffer("Jane@MIT.EDU", "o"))
    expect(rowCsv(offer).split(",")).toHaveLength(ROW_CSV_COLUMNS.length)
  })
})
