/**
 * Regions: ISO 3166-2 subdivision codes (`US-CA`, `IN-TN`, `FR-IDF`) as a
 * branded schema.
 *
 * Guarantees:
 * - `RegionCode` decodes a string of the form `CC-XXX`: an assigned ISO 3166-1
 *   alpha-2 code (see `Country.ts`), a hyphen, and 1–3 upper-case letters or
 *   digits. Its failure message says what was expected and suggests the code
 *   that was probably meant (`"us-ca"` -> `"US-CA"`, `"UK-ENG"` -> `"GB-ENG"`).
 * - The schema checks the form only, so decoding needs no data. Whether a
 *   well-formed code names a subdivision ISO lists, and the names of
 *   subdivisions, come from the compiled subdivision list (`Subdivisions.ts`).
 */
import * as Schema from "effect/Schema"
import { type CountryCode, isCountryCode, suggestCountryCode } from "./Country.ts"

const regionCodeForm = /^([A-Z]{2})-([A-Z0-9]{1,3})$/

const isWellFormedRegionCode = (input: string): boolean => {
  const match = regionCodeForm.exec(input)
  return match !== null && isCountryCode(match[1])
}

/**
 * The code someone most likely meant, or undefined: a code in the wrong case
 * or with another separator (`"us_ca"`, `"US CA"` -> `"US-CA"`), or with a
 * non-ISO or alpha-3 country part (`"UK-ENG"` -> `"GB-ENG"`,
 * `"DEU-BY"` -> `"DE-BY"`). It does not check that the subdivision exists.
 */
export const suggestRegionCode = (input: string): RegionCode | undefined => {
  const match = /^\s*([A-Za-z]{2,3})\s*[-_ ./]\s*([A-Za-z0-9]{1,3})\s*$/.exec(input)
  if (match === null) return undefined
  const [, countryPart = "", subdivisionPart = ""] = match
  const country = suggestCountryCode(countryPart)
  return country === undefined ? undefined : (`${country}-${subdivisionPart.toUpperCase()}` as RegionCode)
}

/** The failure text for a string that is not a well-formed subdivision code. */
const regionCodeIssue = (input: string): string => {
  const shown = JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input)
  const suggestion = suggestRegionCode(input)
  if (suggestion !== undefined && suggestion !== input) {
    return `${shown} is not an ISO 3166-2 subdivision code (did you mean "${suggestion}"?)`
  }
  const match = regionCodeForm.exec(input)
  if (match !== null) {
    return `${shown} is not an ISO 3166-2 subdivision code ("${match[1]}" is not an ISO 3166-1 alpha-2 country code)`
  }
  return `${shown} is not an ISO 3166-2 subdivision code (expected "CC-XXX": an ISO 3166-1 alpha-2 country code, a hyphen and 1 to 3 upper-case letters or digits, such as "US-CA" or "FR-IDF")`
}

/** An ISO 3166-2 subdivision code: `"US-CA"`, `"IN-TN"`, `"FR-IDF"`. */
export const RegionCode = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((input: string) => isWellFormedRegionCode(input) || regionCodeIssue(input), {
      expected: "an ISO 3166-2 subdivision code",
      toJsonSchema: () => ({ pattern: "^[A-Z]{2}-[A-Z0-9]{1,3}$" })
    })
  ),
  Schema.brand("Iso3166Subdivision")
).annotate({
  identifier: "RegionCode",
  title: "ISO 3166-2 subdivision code",
  description:
    'An ISO 3166-2 subdivision code: the country\'s ISO 3166-1 alpha-2 code, a hyphen and 1 to 3 letters or digits, e.g. "US-CA", "IN-TN", "FR-IDF".',
  examples: ["US-CA", "IN-TN", "FR-IDF"].map((code) => code as RegionCode)
})
export type RegionCode = typeof RegionCode.Type

export const isRegionCode = (input: unknown): input is RegionCode =>
  typeof input === "string" && isWellFormedRegionCode(input)

/** The country a subdivision belongs to: `regionCountry("US-CA")` is `"US"`. */
export const regionCountry = (code: RegionCode): CountryCode => code.slice(0, 2) as CountryCode

/** The subdivision part of a code: `regionSubdivision("US-CA")` is `"CA"`. */
export const regionSubdivision = (code: RegionCode): string => code.slice(3)
