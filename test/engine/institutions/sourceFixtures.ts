/**
 * Tiny open-source snapshots for tests: a few swot domains, ROR records of
 * both schemas, a Hipo snapshot and subdivisions, built with the same
 * types the real snapshots have.
 */

import { loadSubdivisions, type Subdivisions } from "../../../src/engine/institutions/Subdivisions.ts"
import { latestRecords } from "../../../src/engine/institutions/sources/ror.ts"
import type { RorSnapshot, SwotSnapshot } from "../../../src/engine/institutions/sources/SourceSnapshot.ts"

export const rorV2 = (
  id: string,
  name: string,
  types: ReadonlyArray<string>,
  fields: {
    readonly domains?: ReadonlyArray<string>
    readonly website?: string
    readonly country?: string
    readonly subdivision?: string
    readonly aliases?: ReadonlyArray<string>
    readonly acronyms?: ReadonlyArray<string>
    readonly status?: string
  } = {}
) => ({
  id: `https://ror.org/${id}`,
  status: fields.status ?? "active",
  types,
  domains: fields.domains ?? [],
  links: fields.website === undefined ? [] : [{ type: "website", value: fields.website }],
  locations: [
    {
      geonames_details: {
        country_code: fields.country ?? "US",
        country_subdivision_code: fields.subdivision ?? null
      }
    }
  ],
  names: [
    { value: name, types: ["ror_display", "label"] },
    ...(fields.aliases ?? []).map((value) => ({ value, types: ["alias"] })),
    ...(fields.acronyms ?? []).map((value) => ({ value, types: ["acronym"] }))
  ],
  relationships: []
})

export const swotSnapshot = (
  domains: ReadonlyArray<readonly [string, ...Array<string>]>,
  lists: { readonly stoplist?: ReadonlyArray<string>; readonly abused?: ReadonlyArray<string> } = {}
): SwotSnapshot => ({
  format: "campusgate-swot/1",
  source: { dataset: "swot", version: "test", date: "2026-01-01", licence: "MIT", url: "test" },
  domains,
  stoplist: lists.stoplist ?? [],
  abused: lists.abused ?? [],
  tlds: ["ac.za", "k12.ca.us"]
})

export const rorSnapshot = (records: ReadonlyArray<unknown>): RorSnapshot => ({
  format: "campusgate-ror/1",
  source: { dataset: "ror", version: "v9.9", date: "2026-01-02", licence: "CC0-1.0", url: "test" },
  records: latestRecords(records)
})

export const subdivisions = (): Subdivisions =>
  loadSubdivisions({
    source: "test",
    countries: { DE: [["BY", "Bayern", "Bavaria"]], US: [["CA", "California"]], GB: [["ENG", "England"]] },
    renamed: {}
  })
