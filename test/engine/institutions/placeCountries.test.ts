import { describe, expect, it } from "vitest"
import { compileInstitutionIndex } from "../../../src/engine/institutions/compileIndex.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { buildPlaceIndex, placeInName } from "../../../src/engine/institutions/placeCountries.ts"
import { builtInSubdivisions } from "../../../src/engine/institutions/Subdivisions.ts"
import { rorSnapshot, swotSnapshot } from "./sourceFixtures.ts"

describe("countries from place names", () => {
  const index = buildPlaceIndex(builtInSubdivisions())

  it("finds the one country a name's places name, by country or subdivision", () => {
    expect(placeInName(index, "Cairo Institute of Science")).toMatchObject({ country: "EG", region: "EG-C" })
    expect(placeInName(index, "College of Western Idaho")).toMatchObject({ country: "US", region: "US-ID" })
    expect(placeInName(index, "Academy of Music of Kenya")).toMatchObject({ country: "KE", region: null })
  })

  it("says nothing where places of two countries are named, or a name is only a direction", () => {
    expect(placeInName(index, "Cairo and Kenya Joint College")).toBeUndefined()
    expect(placeInName(index, "South Mountain Community College")).toBeUndefined()
  })

  it("gives listed institutions without a country the one their name places them in, with the rule's precision", () => {
    const data = compileInstitutionIndex({
      swot: swotSnapshot([["samplecairo.com", "Sample Cairo Institute"]]),
      ror: rorSnapshot([]),
      nonInstitutions: [],
      subdivisions: builtInSubdivisions()
    }).data
    const match = InstitutionTable.fromData(data).lookup("samplecairo.com")
    if (match.kind !== "listed") throw new Error("expected a listed domain")
    expect(match.entry.institution).toMatchObject({ country: "EG", region: "EG-C" })
    expect(match.entry.institution.evidence.country).toMatchObject({
      source: "campusgate",
      rule: "place-name:cairo",
      precision: expect.any(Number)
    })
  })
})
