/**
 * How likely a domain no source lists is an academic institution, from the
 * domain alone: the word families of its labels (`domainWords.ts`), the
 * kind of zone it is registered in, whether its label holds a place of the
 * zone's country or a word that names known institutions there, and its
 * shape. Each of these is a feature; a logistic model weighs them
 * (`trainCandidateModel`, fitted at build time on the bundled institutions
 * against the project's own lists of non-institutions, free-mail
 * providers and non-academic organisations: `scripts/data/candidateModel.ts`).
 * The score is the model's probability; the signals are the features that
 * fired, with their weights, so an operator sees why.
 *
 * The knowledge of names and places (`CandidateKnowledge`) is built from
 * the index in use, so an imported index brings its own.
 */
import { type CountryCode, countryFromTld } from "../../domain/Country.ts"
import { countryRows } from "../../domain/countries.data.ts"
import type { Candidate, CandidateSignal } from "../../domain/InstitutionReview.ts"
import { nameKey, nameWords } from "../../domain/nameKey.ts"
import { type LetterModel, letterScore, zoneKeys } from "./candidateLetters.ts"
import { familiesOf, type WordFamily, wordFamilies, type ZoneKind, zoneKindOf } from "./domainWords.ts"
import { sigmoid } from "./logistic.ts"
import type { Subdivisions } from "./Subdivisions.ts"

export const candidateModelFormat = "campusgate-candidates/1"

export type { LetterModel }

/** The fitted model: a bias and a weight per feature (log-odds), with how it was measured. */
export interface CandidateModel {
  readonly format: typeof candidateModelFormat
  readonly letters: LetterModel
  readonly bias: number
  readonly weights: Readonly<Record<string, number>>
  /** The score the docs recommend for `acceptCandidates.minScore`, and what it gave in cross-validation. */
  readonly recommended: {
    readonly minScore: number
    readonly recall: number
    readonly falsePositiveRate: number
  }
  /** Measured by 5-fold cross-validation on the training data. */
  readonly auc: number
  readonly trainedOn: { readonly positives: number; readonly negatives: number }
}

/** Names and places by country, to tell `hfmt-hamburg.de` from `hamburger-shop.de`. */
export interface CandidateKnowledge {
  /** Per country (`*` for all), the words (folded, 5+ letters) that name institutions there, with how many. */
  readonly nameWords: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Per country, the acronyms of its institutions (lower case), with how many. */
  readonly acronyms: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Per country (`*` for all), the names of its subdivisions and itself (folded, 5+ letters). */
  readonly places: ReadonlyMap<string, ReadonlySet<string>>
}

/** What the knowledge is built from: each institution's names and country; each country's place names. */
export interface KnowledgeInput {
  readonly institutions: Iterable<{
    readonly country: string | null
    readonly name: string | null
    readonly names: ReadonlyArray<string>
  }>
  readonly places: Iterable<readonly [country: string, names: ReadonlyArray<string>]>
}

/** Words that name no institution in particular: the lexicon's and the grammar's, across the datasets' languages. */
const isGenericWord = (word: string): boolean => familiesOf([word]).length > 0 || word.length < 5

const acronymPattern = /^[A-Z][A-Z0-9&]{1,7}$/

/**
 * The words of a name worth looking for in a label: folded, 5+ letters, not
 * generic. `known` remembers each word's answer: names repeat their words
 * (`university`, `college`), and a word's test against every family's stems
 * was nearly all of building the knowledge (measured: 20x faster with it).
 */
const distinctiveWords = (name: string, known: Map<string, string | null> = new Map()): Array<string> => {
  const words: Array<string> = []
  for (const word of nameWords(name)) {
    let key = known.get(word)
    if (key === undefined) {
      const folded = nameKey(word)
      key = /^[a-z]+$/.test(folded) && !isGenericWord(folded) ? folded : null
      known.set(word, key)
    }
    if (key !== null) words.push(key)
  }
  return words
}

const bump = (maps: Map<string, Map<string, number>>, country: string, key: string): void => {
  let map = maps.get(country)
  if (map === undefined) {
    map = new Map()
    maps.set(country, map)
  }
  map.set(key, (map.get(key) ?? 0) + 1)
}

/** A word in this many countries' names or more is a common word, not a name (`national`, `saint`). */
const maxCountriesOfAName = 8

export const buildCandidateKnowledge = (input: KnowledgeInput): CandidateKnowledge => {
  const nameWordMaps = new Map<string, Map<string, number>>()
  const acronyms = new Map<string, Map<string, number>>()
  const countriesOfWord = new Map<string, Set<string>>()
  const known = new Map<string, string | null>()
  for (const institution of input.institutions) {
    const country = institution.country ?? "*"
    const words = new Set<string>()
    for (const name of [institution.name, ...institution.names]) {
      if (name === null) continue
      if (acronymPattern.test(name)) bump(acronyms, country, name.toLowerCase())
      else for (const word of distinctiveWords(name, known)) words.add(word)
    }
    for (const word of words) {
      bump(nameWordMaps, country, word)
      if (country !== "*") bump(nameWordMaps, "*", word)
      let countries = countriesOfWord.get(word)
      if (countries === undefined) {
        countries = new Set()
        countriesOfWord.set(word, countries)
      }
      countries.add(country)
    }
  }
  for (const [word, countries] of countriesOfWord) {
    if (countries.size < maxCountriesOfAName) continue
    for (const map of nameWordMaps.values()) map.delete(word)
  }
  const places = new Map<string, Set<string>>([["*", new Set()]])
  for (const [country, names] of input.places) {
    const set = places.get(country) ?? new Set<string>()
    for (const name of names) {
      for (const key of [nameKey(name), ...nameWords(name).map((w) => nameKey(w))]) {
        if (/^[a-z]{5,}$/.test(key)) {
          set.add(key)
          places.get("*")!.add(key)
        }
      }
    }
    places.set(country, set)
  }
  return { nameWords: nameWordMaps, acronyms, places }
}

/** One fired feature: its id (the model's key) and what was seen. */
export interface Feature {
  readonly id: string
  readonly detail: string
  /** The feature's value: 1 for a feature that fired, the letter score for `letters` (`candidateLetters.ts`). */
  readonly value: number
}

/** The registrable domain's parts: its first label (the name) and its public suffix. */
export interface DomainParts {
  readonly domain: string
  readonly label: string
  readonly suffix: string
}

/** What an institution's own words are, to leave out of its own features while fitting (leave-one-out). */
export interface OwnWords {
  readonly words: ReadonlySet<string>
  readonly acronyms: ReadonlySet<string>
}

const vowels = /[aeiouy]/g

/** The first substring of `text` (5 to 16 letters) that `has` accepts, longest first at each start. */
const findWord = (text: string, has: (word: string) => boolean): string | undefined => {
  for (let start = 0; start + 5 <= text.length; start++) {
    for (let end = Math.min(text.length, start + 16); end - start >= 5; end--) {
      const word = text.slice(start, end)
      if (has(word)) return word
    }
  }
  return undefined
}

const zoneDetail: Record<ZoneKind, string> = {
  "academic-gtld": "an academic top-level domain",
  "commercial-sld": "a commercial second-level zone",
  "organisation-sld": "an organisations' second-level zone",
  "government-sld": "a government second-level zone",
  cctld: "a country-code top-level domain",
  "generic-cctld": "a country code sold as a generic top-level domain",
  com: ".com",
  org: ".org",
  net: ".net",
  gtld: "a generic top-level domain"
}

const familyDetail: Record<WordFamily, string> = {
  university: "a university word",
  college: "a college word",
  polytechnic: "a polytechnic word",
  institute: "an institute word",
  academy: "an academy word",
  school: "a school word",
  k12: "a school-district word",
  arts: "an arts or music word",
  medicine: "a medicine word",
  science: "a science word",
  research: "a research word",
  education: "an education word",
  seminary: "a seminary or theology word",
  hospital: "a hospital or health word",
  government: "a government word",
  commerce: "a commercial word",
  media: "a media word",
  technology: "a technology word"
}

/** Every feature id the model knows, in a fixed order. */
export const featureIds: ReadonlyArray<string> = [
  ...wordFamilies.map((family) => `family:${family}`),
  ...(Object.keys(zoneDetail) as Array<ZoneKind>).map((kind) => `zone:${kind}`),
  "letters",
  "zone-prior",
  "place",
  "known-name",
  "known-acronym",
  "shape:acronym",
  "shape:digits",
  "shape:hyphens",
  "shape:short",
  "shape:long",
  "shape:no-word"
]

/**
 * The features of a registrable domain. `own` leaves an institution's own
 * words and acronyms out (fitting on the institutions themselves: a word
 * known only from the domain's own institution says nothing).
 */
export const featuresOf = (
  parts: DomainParts,
  knowledge: CandidateKnowledge,
  letters: ReadonlyMap<string, number>,
  own?: OwnWords
): Array<Feature> => {
  const features: Array<Feature> = []
  const label = parts.label
  const spelled = letterScore(letters, label)
  const mean = Math.round(spelled.mean * 100) / 100
  features.push({
    id: "letters",
    detail: `${label} is spelled ${mean >= 0.3 ? "like institutions' domains" : mean <= -0.3 ? "like other domains" : "like any domain"}${spelled.top.length === 0 ? "" : ` (${spelled.top.map((g) => `"${g}"`).join(", ")})`}`,
    value: mean
  })
  const families = familiesOf([label])
  for (const hit of families) {
    features.push({
      id: `family:${hit.family}`,
      detail: `"${hit.stem}" in ${hit.label}: ${familyDetail[hit.family]}`,
      value: 1
    })
  }
  const [exact, top] = zoneKeys(parts.suffix)
  const prior = letters.get(exact!) ?? (top === undefined ? undefined : letters.get(top))
  if (prior !== undefined) {
    features.push({
      id: "zone-prior",
      detail: `${prior > 0 ? "more" : "fewer"} institutions than other domains register under ${parts.suffix}`,
      value: prior
    })
  }
  const zone = zoneKindOf(parts.suffix)
  features.push({ id: `zone:${zone}`, detail: `registered under ${parts.suffix}: ${zoneDetail[zone]}`, value: 1 })
  const tld = parts.suffix.slice(parts.suffix.lastIndexOf(".") + 1)
  const country = tld.length === 2 ? (countryFromTld(tld) ?? "*") : "*"
  const text = label.replace(/[^a-z]/g, "")
  const places = knowledge.places.get(country) ?? knowledge.places.get("*")!
  const place = findWord(text, (word) => places.has(word))
  if (place !== undefined)
    features.push({ id: "place", detail: `"${place}" is a place${country === "*" ? "" : ` in ${country}`}`, value: 1 })
  const words = knowledge.nameWords.get(country)
  if (words !== undefined) {
    const known = findWord(text, (word) => {
      const count = words.get(word)
      return count !== undefined && count - (own?.words.has(word) ? 1 : 0) >= 2 && word !== place
    })
    if (known !== undefined) {
      features.push({
        id: "known-name",
        detail: `"${known}" is in the names of ${words.get(known)! - (own?.words.has(known) ? 1 : 0)} known institutions${country === "*" ? "" : ` in ${country}`}`,
        value: 1
      })
    }
  }
  const acronyms = knowledge.acronyms.get(country)
  const parts_ = label.split("-")
  const acronym = parts_.find((part) => {
    const count = acronyms?.get(part)
    return count !== undefined && count - (own?.acronyms.has(part) ? 1 : 0) > 0
  })
  if (acronym !== undefined)
    features.push({ id: "known-acronym", detail: `"${acronym}" is a known institution's acronym`, value: 1 })
  const plain = /^[a-z]{2,6}$/.test(label)
  if (plain && families.length === 0 && (label.match(vowels)?.length ?? 0) <= 1) {
    features.push({ id: "shape:acronym", detail: `${label} reads as an acronym`, value: 1 })
  }
  if (/[0-9]/.test(label)) features.push({ id: "shape:digits", detail: `${label} has digits`, value: 1 })
  if (label.split("-").length > 2)
    features.push({ id: "shape:hyphens", detail: `${label} has several hyphens`, value: 1 })
  if (label.length <= 3)
    features.push({ id: "shape:short", detail: `${label} is ${label.length} characters`, value: 1 })
  if (label.length > 20) features.push({ id: "shape:long", detail: `${label} is ${label.length} characters`, value: 1 })
  if (families.length === 0 && place === undefined)
    features.push({ id: "shape:no-word", detail: "no word the lexicon knows", value: 1 })
  return features
}

/** The model's probability for the features, with each feature's signal. */
export const scoreFeatures = (model: CandidateModel, domain: string, features: ReadonlyArray<Feature>): Candidate => {
  let logit = model.bias
  const signals: Array<CandidateSignal> = []
  for (const feature of features) {
    const weight = (model.weights[feature.id] ?? 0) * feature.value
    logit += weight
    if (weight !== 0)
      signals.push({ signal: feature.id, detail: feature.detail, weight: Math.round(weight * 100) / 100 })
  }
  signals.sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight))
  return { domain, score: Math.round(sigmoid(logit) * 1000) / 1000, signals }
}

/** The places of every country: its names and its subdivisions' names. */
export const placesOf = (subdivisions: Subdivisions): Array<readonly [string, ReadonlyArray<string>]> =>
  countryRows.map(([alpha2, , ...names]) => [
    alpha2,
    [...names, ...subdivisions.regionsOf(alpha2 as CountryCode).flatMap((code) => subdivisions.regionName(code) ?? [])]
  ])

/** An institution's own words and acronyms, left out of its own features while fitting. */
export const ownWordsOf = (name: string | null, names: ReadonlyArray<string>): OwnWords => {
  const words = new Set<string>()
  const acronyms = new Set<string>()
  for (const each of [name, ...names]) {
    if (each === null) continue
    if (acronymPattern.test(each)) acronyms.add(each.toLowerCase())
    else for (const word of distinctiveWords(each)) words.add(word)
  }
  return { words, acronyms }
}

type KnowledgeText = {
  readonly nameWords: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, number]>]>
  readonly acronyms: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, number]>]>
  readonly places: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
}

/** The knowledge as JSON, kept with a compiled table (`tableBuffer.ts`) so it is not built again at run time. */
export const encodeKnowledge = (knowledge: CandidateKnowledge): string =>
  JSON.stringify({
    nameWords: [...knowledge.nameWords].map(([country, words]) => [country, [...words]]),
    acronyms: [...knowledge.acronyms].map(([country, words]) => [country, [...words]]),
    places: [...knowledge.places].map(([country, names]) => [country, [...names]])
  } satisfies KnowledgeText)

/** The knowledge `encodeKnowledge` wrote, its maps and sets in the same order. */
export const decodeKnowledge = (text: string): CandidateKnowledge => {
  const parsed = JSON.parse(text) as KnowledgeText
  return {
    nameWords: new Map(parsed.nameWords.map(([country, words]) => [country, new Map(words)])),
    acronyms: new Map(parsed.acronyms.map(([country, words]) => [country, new Map(words)])),
    places: new Map(parsed.places.map(([country, names]) => [country, new Set(names)]))
  }
}
