/**
 * The compiled, serialisable form of the institution index: what
 * `npm run build` writes to `dist/data/institutions.json` and what user
 * datasets are merged into. Rows are tuples to keep the file small and the
 * load fast; `sources` are referenced by position.
 */
import type { CountrySource, DataSource, InstitutionType } from "../../domain/Institution.ts"

export const institutionsDataFormat = "campusgate-institutions/1"

export type InstitutionRow = readonly [
  id: string,
  name: string | null,
  country: string | null,
  countrySource: CountrySource | null,
  region: string | null,
  type: InstitutionType,
  sources: ReadonlyArray<number>,
  domains: ReadonlyArray<string>
]

/** A domain with the source that listed it (stoplist or abused list). */
export type DomainRow = readonly [domain: string, source: number]

export type SuffixRuleRow = readonly [suffix: string, country: string | null, type: InstitutionType, source: number]

export interface InstitutionsData {
  readonly format: typeof institutionsDataFormat
  readonly sources: ReadonlyArray<DataSource>
  readonly institutions: ReadonlyArray<InstitutionRow>
  /** Hosts that are never institutions although a parent is (swot's stoplist: `alumni.x.edu`). */
  readonly deny: ReadonlyArray<DomainRow>
  /** Domains that resolve to their institution but are known to be abused (swot's abused list). */
  readonly abused: ReadonlyArray<DomainRow>
  readonly suffixRules: ReadonlyArray<SuffixRuleRow>
}
