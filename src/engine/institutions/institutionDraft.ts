/**
 * An institution while the index is built (`IndexBuilder.ts`): its facts
 * with their evidence, its names, sources and domains. A draft is made
 * from a dataset's record, or read from a compiled row and kept settled
 * (standing for that row) until something changes it; it is filled by
 * later datasets, merged with another, and compiled back into a row with
 * the facts no dataset stated worked out (`draftFacts.ts`). Apart from the
 * builder, which decides which draft owns which domain: this module holds
 * only what a draft itself knows.
 */
import type { InstitutionType } from "../../domain/Institution.ts"
import { countrySourceOf, evidence, inferCountry, RULES_SOURCE, resolveType, type ZoneOf } from "./draftFacts.ts"
import type { EvidenceRow, InstitutionRow } from "./InstitutionsData.ts"
import type { RorType } from "./sources/SourceSnapshot.ts"

/** What a dataset says of one institution. */
export interface InstitutionInput {
  readonly name?: string | null | undefined
  readonly domains: ReadonlyArray<string>
  readonly country?: string | null | undefined
  readonly region?: string | null | undefined
  readonly type?: InstitutionType | undefined
  /** Other names and acronyms. */
  readonly names?: ReadonlyArray<string> | undefined
  readonly ror?: string | null | undefined
  /** The registry's organisation types, which the type is derived from with the names. */
  readonly rorTypes?: ReadonlyArray<RorType> | undefined
  /** How the country is known, when not stated by the dataset itself (e.g. `name-match`). */
  readonly countryEvidence?: EvidenceRow | undefined
}

export interface Draft {
  id: string
  name: string | null
  nameEvidence: EvidenceRow | null
  names: Set<string>
  country: string | null
  countryEvidence: EvidenceRow | null
  region: string | null
  regionEvidence: EvidenceRow | null
  type: InstitutionType | null
  typeEvidence: EvidenceRow | null
  rorTypes: ReadonlyArray<RorType> | null
  ror: string | null
  sources: Set<number>
  domains: Array<string>
  /**
   * The compiled row this draft was read from (`IndexBuilder.from`), while
   * nothing but losing domains has changed it: `finish` then writes it back
   * as it was, so merging a small user dataset into the built-in data stays
   * cheap.
   */
  settled: InstitutionRow | null
}

/** The shared empty sets of settled drafts; never added to. */
const noNames: Set<string> = new Set()
const noSources: Set<number> = new Set()

/** A draft standing for a compiled row: its sets and evidence are made only when something changes it. */
export const settledDraft = (row: InstitutionRow): Draft => {
  const [id, name, country, , region, type, , domains, , ror] = row
  return {
    id,
    name,
    nameEvidence: null,
    names: noNames,
    country,
    countryEvidence: null,
    region,
    regionEvidence: null,
    type,
    typeEvidence: null,
    rorTypes: null,
    ror,
    sources: noSources,
    domains: [...domains],
    settled: row
  }
}

/** Makes a settled draft's sets and evidence from its row (pointing into `baseEvidence`), before anything changes it. */
export const unsettleDraft = (draft: Draft, baseEvidence: ReadonlyArray<EvidenceRow>): void => {
  const row = draft.settled
  if (row === null) return
  draft.settled = null
  const at = (i: number): EvidenceRow | null => (i < 0 ? null : baseEvidence[i]!)
  const [nameEv, typeEv, countryEv, regionEv] = row[10]
  draft.names = new Set(row[8])
  draft.sources = new Set(row[6])
  draft.nameEvidence = at(nameEv)
  draft.typeEvidence = at(typeEv)
  draft.countryEvidence = at(countryEv)
  draft.regionEvidence = at(regionEv)
}

/** The evidence of a fact `dataset` states itself. */
const stated = (dataset: string, rule: string): EvidenceRow => evidence(dataset, rule, "high")

/** A new draft of a dataset's record (`dataset`, at `sourceIndex`), with no domains yet. */
export const newDraft = (id: string, input: InstitutionInput, dataset: string, sourceIndex: number): Draft => ({
  id,
  name: input.name ?? null,
  nameEvidence: input.name ? stated(dataset, "dataset-name") : null,
  names: new Set((input.names ?? []).filter((n) => n !== input.name)),
  country: input.country ?? null,
  countryEvidence: input.country ? (input.countryEvidence ?? stated(dataset, "dataset-country")) : null,
  region: input.region ?? null,
  regionEvidence: input.region ? stated(dataset, "dataset-region") : null,
  type: input.type ?? null,
  typeEvidence: input.type ? stated(dataset, "dataset-type") : null,
  rorTypes: input.rorTypes ?? null,
  ror: input.ror ?? null,
  sources: new Set([sourceIndex]),
  domains: [],
  settled: null
})

/** Adds a dataset's record to an (unsettled) draft it shares a domain with, filling only the facts it lacks. */
export const fillDraft = (draft: Draft, input: InstitutionInput, dataset: string, sourceIndex: number): void => {
  draft.sources.add(sourceIndex)
  if (draft.name === null && input.name) {
    draft.name = input.name
    draft.nameEvidence = stated(dataset, "dataset-name")
  } else if (input.name && input.name !== draft.name) draft.names.add(input.name)
  for (const name of input.names ?? []) if (name !== draft.name) draft.names.add(name)
  if (draft.country === null && input.country) {
    draft.country = input.country
    draft.countryEvidence = input.countryEvidence ?? stated(dataset, "dataset-country")
  }
  if (draft.region === null && input.region) {
    draft.region = input.region
    draft.regionEvidence = stated(dataset, "dataset-region")
  }
  if (draft.type === null && input.type) {
    draft.type = input.type
    draft.typeEvidence = stated(dataset, "dataset-type")
  }
  draft.rorTypes ??= input.rorTypes ?? null
  draft.ror ??= input.ror ?? null
}

/** Moves `other`'s names and sources into `into` (both unsettled), filling the facts `into` lacks; not its domains. */
/**
 * A user dataset's record replacing the record of an institution it shares
 * a domain with: each fact it states wins (the one it replaces stays as an
 * other name); what it does not state, the institution keeps.
 */
export const overrideDraft = (draft: Draft, input: InstitutionInput, dataset: string, sourceIndex: number): void => {
  draft.sources.add(sourceIndex)
  if (input.name) {
    if (draft.name !== null && draft.name !== input.name) draft.names.add(draft.name)
    draft.names.delete(input.name)
    draft.name = input.name
    draft.nameEvidence = stated(dataset, "dataset-name")
  }
  for (const name of input.names ?? []) if (name !== draft.name) draft.names.add(name)
  if (input.country) {
    draft.country = input.country
    draft.countryEvidence = input.countryEvidence ?? stated(dataset, "dataset-country")
  }
  if (input.region) {
    draft.region = input.region
    draft.regionEvidence = stated(dataset, "dataset-region")
  }
  if (input.type) {
    draft.type = input.type
    draft.typeEvidence = stated(dataset, "dataset-type")
  }
  if (input.rorTypes) draft.rorTypes = input.rorTypes
  if (input.ror) draft.ror = input.ror
}

export const mergeDraftFacts = (into: Draft, other: Draft): void => {
  for (const source of other.sources) into.sources.add(source)
  if (other.name !== null && other.name !== into.name) into.names.add(other.name)
  for (const name of other.names) if (name !== into.name) into.names.add(name)
  if (into.country === null) [into.country, into.countryEvidence] = [other.country, other.countryEvidence]
  if (into.region === null) [into.region, into.regionEvidence] = [other.region, other.regionEvidence]
  if (into.type === null) [into.type, into.typeEvidence] = [other.type, other.typeEvidence]
  into.rorTypes ??= other.rorTypes
  into.ror ??= other.ror
}

/** The names a draft is known by, its name first. */
export const draftNames = (draft: Draft): ReadonlyArray<string> => [
  ...(draft.name === null ? [] : [draft.name]),
  ...(draft.settled === null ? draft.names : draft.settled[8])
]

/**
 * The row of an unsettled draft as institution `id`, after working out the
 * country, region and type no dataset stated (which the draft keeps);
 * `ref` gives an evidence row's position in the table.
 */
export const draftRow = (
  draft: Draft,
  id: string,
  zoneOf: ZoneOf,
  ref: (row: EvidenceRow | null) => number
): InstitutionRow => {
  if (draft.country === null) {
    const inferred = draft.domains.map((d) => inferCountry(d, zoneOf)).find((c) => c !== undefined)
    if (inferred !== undefined) [draft.country, draft.countryEvidence] = inferred
  }
  if (draft.region === null) {
    const zone = draft.domains.map((d) => zoneOf(d)).find((z) => z?.[4] != null)
    if (zone !== undefined) {
      draft.region = zone[4]
      draft.regionEvidence = evidence(RULES_SOURCE, `zone-policy:${zone[0]}`, "medium")
    }
  }
  const [type, typeEvidence] = resolveType(draft, zoneOf)
  return [
    id,
    draft.name,
    draft.country,
    draft.countryEvidence === null ? null : countrySourceOf(draft.countryEvidence[1]),
    draft.region,
    type,
    [...draft.sources].sort((a, b) => a - b),
    draft.domains,
    [...draft.names],
    draft.ror,
    [ref(draft.nameEvidence), ref(typeEvidence), ref(draft.countryEvidence), ref(draft.regionEvidence)]
  ]
}
