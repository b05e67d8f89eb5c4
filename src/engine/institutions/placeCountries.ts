/**
 * Countries from place names, for listed institutions whose data gives no
 * country (a `.com`, `.org` or `.cc` domain: "Cairo Institute",
 * `cic-cairo.com`). Not for `.edu` domains the zone calls American: US
 * places are named after places abroad far too often (Santa Rosa,
 * Lebanon, Georgia), and measured on this data the rule put more of those
 * abroad wrongly than rightly. A place is a country's or a
 * subdivision's name in the ISO lists (`Cairo` is EG-C, `Idaho` US-ID); a
 * name that belongs to places of two countries (`Georgia`) says nothing.
 * The rule is measured like the type rules (`typeInference.ts`): its
 * precision is the share of the institutions whose data states a country
 * that the place in their name gives right, and that precision is the
 * evidence's.
 */
import type { CountryCode } from "../../domain/Country.ts"
import { countryRows } from "../../domain/countries.data.ts"
import { nameKey, nameWords } from "../../domain/nameKey.ts"
import type { RegionCode } from "../../domain/Region.ts"
import { EvidenceTable, type InstitutionRow, type InstitutionsData, placedRow } from "./InstitutionsData.ts"
import type { Subdivisions } from "./Subdivisions.ts"
import { confidenceOf } from "./typeInference.ts"

export interface Place {
  readonly key: string
  readonly country: string
  readonly region: string | null
}

/** Place keys (`nameKey`) to their place; null where two countries have a place of that name. */
export type PlaceIndex = ReadonlyMap<string, Place | null>

/** Subdivision names that are words of any name ("South" is a region of Cameroon, "Centre" one of France). */
const directionWords = new Set([
  ...["north", "south", "east", "west", "central", "centre", "center", "northern", "southern", "eastern", "western"],
  ...["capital", "coast", "islands", "island", "upper", "lower", "middle", "interior", "highlands", "lakes", "plateau"],
  ...["northeast", "northwest", "southeast", "southwest", "littoral", "mountain", "valley", "river", "lake"]
])

export const buildPlaceIndex = (subdivisions: Subdivisions): PlaceIndex => {
  const index = new Map<string, Place | null>()
  const add = (name: string, country: string, region: string | null) => {
    const key = nameKey(name)
    if (key.length < 4 || directionWords.has(key)) return
    const known = index.get(key)
    if (known === undefined) index.set(key, { key, country, region })
    else if (known !== null && known.country !== country) index.set(key, null)
    else if (known !== null && known.region !== region) index.set(key, { key, country, region: null })
  }
  for (const [alpha2, , ...names] of countryRows) {
    for (const name of names) add(name, alpha2, null)
    for (const code of subdivisions.regionsOf(alpha2 as CountryCode)) {
      for (const name of subdivisions.namesOf(code as RegionCode)) add(name, alpha2, code)
    }
  }
  return index
}

/** The one country the places in `name` name (runs of one to three words), or undefined for none or several. */
export const placeInName = (index: PlaceIndex, name: string): Place | undefined => {
  const words = nameWords(name)
  let found: Place | undefined
  for (let length = 3; length >= 1; length--) {
    for (let at = 0; at + length <= words.length; at++) {
      const place = index.get(words.slice(at, at + length).join(""))
      if (place === undefined || place === null) continue
      if (found !== undefined && found.country !== place.country) return undefined
      found ??= place
    }
  }
  return found
}

/** The one country the places in a domain's first label name (`cic-cairo.com`), by its hyphen-separated parts. */
const placeInDomain = (index: PlaceIndex, domain: string): Place | undefined =>
  placeInName(index, domain.slice(0, domain.indexOf(".")).replace(/-/g, " "))

/** A country's own name in a label (`mitindia`), 5 letters or more, anywhere in it. */
const countryInLabel = (index: PlaceIndex, domain: string): Place | undefined => {
  const label = domain.slice(0, domain.indexOf(".")).replace(/[^a-z]/g, "")
  for (let start = 0; start + 5 <= label.length; start++) {
    for (let end = label.length; end - start >= 5; end--) {
      const place = index.get(label.slice(start, end))
      if (place != null && place.region === null) return place
    }
  }
  return undefined
}

const placeOf = (index: PlaceIndex, row: InstitutionRow): Place | undefined => {
  for (const name of [row[1], ...row[8]]) {
    const place = name === null ? undefined : placeInName(index, name)
    if (place !== undefined) return place
  }
  for (const domain of row[7]) {
    const place = placeInDomain(index, domain)
    if (place !== undefined) return place
  }
  return undefined
}

/** The country named in an institution's domain labels (for the `.edu` ones the zone calls American). */
const countryNamedIn = (index: PlaceIndex, row: InstitutionRow): Place | undefined => {
  for (const domain of row[7]) {
    const place = countryInLabel(index, domain)
    if (place !== undefined) return place
  }
  return undefined
}

/** Whether a row's country is stated by its data (not a zone's assumption, nor placed by these rules). */
const statesCountry = (data: InstitutionsData, row: InstitutionRow): boolean =>
  row[2] !== null &&
  row[3] !== "suffix-rule" &&
  !/^(place-name|country-in-label):/.test(data.evidence[row[10][2]]?.[1] ?? "")

/** A rule's precision: the share of the institutions whose data states their country that its place gives right. */
const measure = (
  data: InstitutionsData,
  placeFor: (row: InstitutionRow) => Place | undefined
): { readonly precision: number; readonly support: number } => {
  let right = 0
  let support = 0
  for (const row of data.institutions) {
    if (!statesCountry(data, row)) continue
    const place = placeFor(row)
    if (place === undefined) continue
    support++
    if (place.country === row[2]) right++
  }
  return { precision: support === 0 ? 0 : Math.round((right / support) * 1000) / 1000, support }
}

/** The precision of the places in a name or label. */
export const measurePlaceRule = (data: InstitutionsData, index: PlaceIndex) =>
  measure(data, (row) => placeOf(index, row))

/** The precision of a country's name in a domain label. */
export const measureCountryLabelRule = (data: InstitutionsData, index: PlaceIndex) =>
  measure(data, (row) => countryNamedIn(index, row))

/** Gives the institutions without a country the one their places name. */
export const withPlaceCountries = (data: InstitutionsData, subdivisions: Subdivisions): InstitutionsData => {
  const index = buildPlaceIndex(subdivisions)
  const { precision, support } = measurePlaceRule(data, index)
  const evidence = new EvidenceTable(data.evidence)
  const byLabel = measureCountryLabelRule(data, index)
  let placed = 0
  const institutions = data.institutions.map((row): InstitutionRow => {
    if (row[2] !== null && row[3] !== "suffix-rule") return row
    const named = row[3] === "suffix-rule" ? countryNamedIn(index, row) : undefined
    const place =
      row[2] === null ? placeOf(index, row) : named !== undefined && named.country !== row[2] ? named : undefined
    if (place === undefined) return row
    placed++
    const measured = row[2] === null ? { precision, support } : byLabel
    const via = evidence.ref([
      "campusgate",
      `${row[2] === null ? "place-name" : "country-in-label"}:${place.key}`,
      confidenceOf(measured.precision, measured.support),
      measured.precision
    ])
    const region = place.region ?? row[4]
    return placedRow(row, place.country, region, via, place.region === null ? (region === null ? -1 : row[10][3]) : via)
  })
  return {
    ...data,
    evidence: evidence.rows,
    institutions,
    placeRule: {
      precision,
      support,
      placed,
      countryInLabelPrecision: byLabel.precision,
      countryInLabelSupport: byLabel.support
    }
  }
}
