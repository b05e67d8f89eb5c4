import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { compileSubdivisions } from "../../scripts/data/subdivisions.ts"
import type { CountryCode } from "../../src/domain/Country.ts"
import {
  isRegionCode,
  RegionCode,
  regionCountry,
  regionSubdivision,
  suggestRegionCode
} from "../../src/domain/Region.ts"
import { loadSubdivisions } from "../../src/engine/institutions/Subdivisions.ts"
import { itAnswers } from "../support/tables.ts"

const decode = Schema.decodeUnknownResult(RegionCode)
const failureMessage = (input: unknown): string => {
  const result = decode(input)
  return Result.isFailure(result) ? result.failure.message : "decoded"
}
const region = (value: string): RegionCode => value as RegionCode
const country = (value: string): CountryCode => value as CountryCode

describe("RegionCode", () => {
  it("decodes CC-XXX codes of assigned countries", () => {
    for (const input of ["US-CA", "IN-TN", "FR-IDF", "FR-2A", "GB-ENG", "CZ-10A", "EG-C", "AT-9"]) {
      expect(decode(input)).toEqual(Result.succeed(input))
    }
    expect(isRegionCode("DE-BY")).toBe(true)
    expect(isRegionCode("de-by")).toBe(false)
    expect(isRegionCode("ZZ-AB")).toBe(false)
    expect(isRegionCode(7)).toBe(false)
  })

  itAnswers("suggests the code that was meant: %j → %j", failureMessage, [
    ["us-ca", '"us-ca" is not an ISO 3166-2 subdivision code (did you mean "US-CA"?)'],
    ["UK-ENG", '"UK-ENG" is not an ISO 3166-2 subdivision code (did you mean "GB-ENG"?)'],
    ["DEU-BY", '"DEU-BY" is not an ISO 3166-2 subdivision code (did you mean "DE-BY"?)'],
    ["US_NY", '"US_NY" is not an ISO 3166-2 subdivision code (did you mean "US-NY"?)']
  ])

  it("says what was expected otherwise", () => {
    expect(failureMessage("ZZ-CA")).toBe(
      '"ZZ-CA" is not an ISO 3166-2 subdivision code ("ZZ" is not an ISO 3166-1 alpha-2 country code)'
    )
    const expected =
      'is not an ISO 3166-2 subdivision code (expected "CC-XXX": an ISO 3166-1 alpha-2 country code, a hyphen and 1 to 3 upper-case letters or digits, such as "US-CA" or "FR-IDF")'
    expect(failureMessage("California")).toBe(`"California" ${expected}`)
    expect(failureMessage("US-CALI")).toBe(`"US-CALI" ${expected}`)
    expect(failureMessage("US")).toBe(`"US" ${expected}`)
    expect(failureMessage(42)).toBe("Expected RegionCode")
  })

  it("gives the country and subdivision parts", () => {
    expect(regionCountry(region("US-CA"))).toBe("US")
    expect(regionSubdivision(region("FR-IDF"))).toBe("IDF")
    expect(suggestRegionCode("gb eng")).toBe("GB-ENG")
    expect(suggestRegionCode("Tamil Nadu")).toBeUndefined()
  })
})

describe("Subdivisions (compiled from @koshmoney/countries)", () => {
  const data = compileSubdivisions()
  const subdivisions = loadSubdivisions(JSON.parse(JSON.stringify(data)))

  it("compiles every country's subdivisions as well-formed codes", () => {
    const codes = Object.entries(data.countries).flatMap(([cc, entries]) => entries.map(([part]) => `${cc}-${part}`))
    expect(codes.length).toBeGreaterThan(4500)
    expect(codes.filter((code) => !isRegionCode(code))).toEqual([])
    expect(new Set(codes).size).toBe(codes.length)
    expect(subdivisions.source).toMatch(/^@koshmoney\/countries@\d/)
  })

  it("knows listed codes, and follows codes ISO has replaced", () => {
    for (const code of ["US-CA", "IN-TN", "FR-IDF", "CN-BJ", "IN-UK", "TW-NWT", "GB-SCT", "NO-42"]) {
      expect(subdivisions.isKnownRegion(code), code).toBe(true)
    }
    expect(subdivisions.isKnownRegion("US-ZZ")).toBe(false)
    expect(subdivisions.isKnownRegion("CN-11")).toBe(false)
    expect(subdivisions.currentRegionCode("CN-11")).toBe("CN-BJ")
    expect(subdivisions.currentRegionCode("IN-CT")).toBe("IN-CG")
    expect(subdivisions.currentRegionCode("TW-TPQ")).toBe("TW-NWT")
    expect(subdivisions.currentRegionCode("NO-09")).toBe("NO-42")
    expect(subdivisions.currentRegionCode("US-CA")).toBe("US-CA")
    expect(subdivisions.currentRegionCode("US-ZZ")).toBeUndefined()
    expect(subdivisions.currentRegionCode("constructor")).toBeUndefined()
    expect(subdivisions.regionName(region("DE-BY"))).toBe("Bayern")
    expect(subdivisions.regionName(region("ES-A"))).toBe("Alacant")
    expect(subdivisions.regionsOf(country("US"))).toContain("US-DC")
  })

  it.each([
    ["IN", "Tamil Nadu", "IN-TN"],
    ["US", "California", "US-CA"],
    ["US", "new york state", "US-NY"],
    ["US", "Washington", "US-WA"],
    ["US", "Washington, D.C.", "US-DC"],
    ["CA", "Quebec", "CA-QC"],
    ["CA", "Québec", "CA-QC"],
    ["DE", "Bavaria", "DE-BY"],
    ["DE", "BAYERN", "DE-BY"],
    ["AE", "Abu Dhabi", "AE-AZ"],
    ["ES", "Madrid", "ES-MD"],
    ["ES", "Comunidad de Madrid", "ES-MD"],
    ["RU", "Moscow", "RU-MOW"],
    ["RU", "Moscow Oblast", "RU-MOS"],
    ["RU", "Novosibirsk Oblast", "RU-NVS"],
    ["RU", "Republic of Tatarstan", "RU-TA"],
    ["KR", "Seoul", "KR-11"],
    ["KR", "Gyeonggi-do", "KR-41"],
    ["CN", "Beijing", "CN-BJ"],
    ["CN", "Inner Mongolia", "CN-NM"],
    ["JP", "Tokyo", "JP-13"],
    ["EG", "Cairo", "EG-C"],
    ["PK", "Khyber Pakhtunkhwa", "PK-KP"],
    ["MX", "Mexico City", "MX-CMX"],
    ["MX", "Estado de México", "MX-MEX"],
    ["CO", "Bogotá", "CO-DC"],
    ["NG", "Lagos State", "NG-LA"],
    ["IT", "Lombardy", "IT-25"],
    ["FR", "Ile de France", "FR-IDF"],
    ["TR", "Istanbul", "TR-34"],
    ["VN", "Ho Chi Minh City", "VN-SG"],
    ["UA", "Lviv Oblast", "UA-46"],
    ["BD", "Dhaka", "BD-C"],
    ["TW", "New Taipei City", "TW-NWT"],
    ["BR", "CE", "BR-CE"],
    ["US", "ny", "US-NY"],
    ["US", "US-CA", "US-CA"],
    ["CN", "CN-11", "CN-BJ"],
    ["US", "New York, NY", "US-NY"],
    ["US", "Los Angeles, CA", "US-CA"],
    ["NO", "Agder", "NO-42"],
    ["NO", "Troms", "NO-55"]
  ])("%s %s -> %s", (cc, name, expected) => {
    expect(subdivisions.regionFromName(country(cc), name)).toBe(expected)
  })

  it("answers only with subdivisions of the given country", () => {
    expect(subdivisions.regionFromName(country("IN"), "California")).toBeUndefined()
    expect(subdivisions.regionFromName(country("IN"), "US-CA")).toBeUndefined()
    expect(subdivisions.regionFromName(country("IN"), "Punjab")).toBe("IN-PB")
    expect(subdivisions.regionFromName(country("PK"), "Punjab")).toBe("PK-PB")
  })

  it("answers undefined for cities and unknown names", () => {
    expect(subdivisions.regionFromName(country("IN"), "Mumbai")).toBeUndefined()
    expect(subdivisions.regionFromName(country("US"), "Atlantis")).toBeUndefined()
    expect(subdivisions.regionFromName(country("US"), "  ")).toBeUndefined()
    expect(subdivisions.regionFromName(country("AQ"), "Ross Dependency")).toBeUndefined()
    expect(subdivisions.regionFromName(country("constructor"), "California")).toBeUndefined()
  })

  it("rejects malformed data", () => {
    expect(() => loadSubdivisions({ source: "x", countries: { US: [["CA"]] }, renamed: {} })).toThrow()
    expect(() => loadSubdivisions({ source: "x", countries: { US: [["CALI", "California"]] }, renamed: {} })).toThrow(
      /not a well-formed/
    )
  })
})
