/**
 * Subdivision names: which ISO 3166-2 codes exist, what they are called, and
 * which code a dataset's free-text region ("Tamil Nadu", "California",
 * "Bavaria", "CE") stands for.
 *
 * The list is compiled at build time (`scripts/data/subdivisions.ts`, from
 * `@koshmoney/countries` plus authored corrections and English names) into
 * `dist/data/subdivisions.json`. `loadSubdivisions` turns that data into
 * lookups; `builtInSubdivisions` reads the built-in file on first use only,
 * so programs that never ask about regions never read it.
 *
 * Guarantees:
 * - `regionFromName` answers only with a code of the given country, and
 *   prefers, in order: an exact name match (ignoring case, diacritics and
 *   punctuation), a match ignoring designators such as "Province", "Oblast"
 *   or "State", then the subdivision part of a code ("CE" -> "BR-CE"), then
 *   each comma-separated part ("Los Angeles, CA" -> "US-CA"). When
 *   two subdivisions share a name, the higher-level one wins (the compiler
 *   orders each country's list that way).
 * - Per-country name indexes are built on the first question about that
 *   country and kept; a lookup after that is a few map reads.
 */
import * as Schema from "effect/Schema"
import type { CountryCode } from "../../domain/Country.ts"
import { nameKey, nameVariants, nameWords } from "../../domain/nameKey.ts"
import { isRegionCode, type RegionCode } from "../../domain/Region.ts"
import { readBuiltInJson } from "../data/builtInData.ts"

/** The compiled form: per country, `[subdivision part, name, ...other names]`, higher levels first. */
export const SubdivisionsData = Schema.Struct({
  source: Schema.String,
  countries: Schema.Record(
    Schema.String,
    Schema.Array(Schema.TupleWithRest(Schema.Tuple([Schema.String, Schema.String]), [Schema.String]))
  ),
  /** Codes ISO has replaced -> the current code. */
  renamed: Schema.Record(Schema.String, Schema.String)
})
export type SubdivisionsData = typeof SubdivisionsData.Type

export interface Subdivisions {
  /** Where the list comes from (package and version). */
  readonly source: string
  /** True when ISO 3166-2 currently lists the code. */
  readonly isKnownRegion: (code: string) => code is RegionCode
  /** The current code for a listed or replaced code (`"CN-11"` -> `"CN-BJ"`), else undefined. */
  readonly currentRegionCode: (code: string) => RegionCode | undefined
  /** The subdivision's name as ISO lists it (often the local form: `"DE-BY"` -> `"Bayern"`). */
  readonly regionName: (code: RegionCode) => string | undefined
  /** The subdivision of `country` that `name` stands for, or undefined. */
  readonly regionFromName: (country: CountryCode, name: string) => RegionCode | undefined
  /** The listed subdivisions of a country, higher levels first. */
  readonly regionsOf: (country: CountryCode) => ReadonlyArray<RegionCode>
  /** Every name the list gives a subdivision (`EG-C`: Al Qāhirah, Cairo). */
  readonly namesOf: (code: RegionCode) => ReadonlyArray<string>
}

/** Words that say what kind of subdivision a name is, not which one. */
const designatorWords = new Set([
  ...["province", "provincia", "provinsi", "provincie", "prefecture", "state", "estado", "region", "regione"],
  ...["regiao", "rehiyon", "governorate", "muhafazat", "oblast", "oblys", "oblysy", "kraj", "krai", "respublika"],
  ...["republic", "department", "departement", "departamento", "district", "distrito", "county", "lan"],
  ...["maakunta", "municipality", "municipio", "city", "capital", "federal", "territory", "special"],
  ...["administrative", "autonomous", "metropolitan", "of", "de", "del", "da", "do", "dos", "la", "el", "al"]
])
const designatorFreeKey = (spelling: string): string =>
  nameWords(spelling)
    .filter((word) => !designatorWords.has(word))
    .join("")

interface CountryIndex {
  readonly byName: Map<string, RegionCode>
  readonly byNameWithoutDesignators: Map<string, RegionCode>
}

const setIfAbsent = (map: Map<string, RegionCode>, key: string, code: RegionCode): void => {
  if (key.length > 0 && !map.has(key)) map.set(key, code)
}

/** Decodes compiled subdivision data (throws on malformed data: it is compiled by us). */
export const loadSubdivisions = (input: unknown): Subdivisions => {
  const data = Schema.decodeUnknownSync(SubdivisionsData)(input)
  const names = new Map<string, string>()
  const allNames = new Map<string, ReadonlyArray<string>>()
  const regionsByCountry = new Map<string, Array<RegionCode>>()
  for (const [country, entries] of Object.entries(data.countries)) {
    const codes: Array<RegionCode> = []
    for (const [part, name, ...others] of entries) {
      const code = `${country}-${part}`
      allNames.set(code, [name, ...others])
      if (!isRegionCode(code)) throw new Error(`subdivisions data: "${code}" is not a well-formed ISO 3166-2 code`)
      names.set(code, name)
      codes.push(code)
    }
    regionsByCountry.set(country, codes)
  }
  const indexes = new Map<string, CountryIndex>()
  const noSubdivisions: CountryIndex = { byName: new Map(), byNameWithoutDesignators: new Map() }
  const indexOf = (country: string): CountryIndex => {
    if (!Object.hasOwn(data.countries, country)) return noSubdivisions
    let index = indexes.get(country)
    if (index !== undefined) return index
    index = { byName: new Map(), byNameWithoutDesignators: new Map() }
    for (const [part, ...spellings] of data.countries[country] ?? []) {
      const code = `${country}-${part}` as RegionCode
      for (const spelling of spellings.flatMap((name) => nameVariants(name))) {
        setIfAbsent(index.byName, nameKey(spelling), code)
        setIfAbsent(index.byNameWithoutDesignators, designatorFreeKey(spelling), code)
      }
    }
    indexes.set(country, index)
    return index
  }

  const isKnownRegion = (code: string): code is RegionCode => names.has(code)
  const currentRegionCode = (code: string): RegionCode | undefined => {
    const current = Object.hasOwn(data.renamed, code) ? (data.renamed[code] ?? code) : code
    return isKnownRegion(current) ? current : undefined
  }
  const regionFromName = (country: CountryCode, name: string): RegionCode | undefined => {
    const trimmed = name.trim()
    if (trimmed.length === 0) return undefined
    const upper = trimmed.toUpperCase()
    if (upper.startsWith(`${country}-`)) return currentRegionCode(upper)
    const index = indexOf(country)
    const spellings = nameVariants(trimmed, true)
    for (const spelling of spellings) {
      const code = index.byName.get(nameKey(spelling))
      if (code !== undefined) return code
    }
    for (const spelling of spellings) {
      const code = index.byNameWithoutDesignators.get(designatorFreeKey(spelling))
      if (code !== undefined) return code
    }
    if (/^[A-Z0-9]{1,3}$/.test(upper)) return currentRegionCode(`${country}-${upper}`)
    // "New York, NY", "Los Angeles, CA": a place qualified by its subdivision.
    if (!trimmed.includes(",")) return undefined
    for (const part of trimmed.split(",")) {
      const code = part.trim().length > 0 ? regionFromName(country, part) : undefined
      if (code !== undefined) return code
    }
    return undefined
  }
  return {
    source: data.source,
    isKnownRegion,
    currentRegionCode,
    regionName: (code) => names.get(code),
    regionFromName,
    regionsOf: (country) => regionsByCountry.get(country) ?? [],
    namesOf: (code) => allNames.get(code) ?? []
  }
}

let builtIn: Subdivisions | undefined

/**
 * The built-in list, read from `dist/data/subdivisions.json` on the first call
 * and kept (it is immutable reference data). Throws `BuiltInDataMissing` when
 * the build has not run.
 */
export const builtInSubdivisions = (): Subdivisions => {
  builtIn ??= loadSubdivisions(readBuiltInJson("subdivisions.json"))
  return builtIn
}
