/**
 * The compiled, serialisable form of the institution index: what
 * `npm run build` writes to `dist/data/institutions.json.gz` (and
 * `campusgate data import` to the data directory), and what user datasets
 * are merged into. Rows are tuples to keep the file small and the load
 * fast; `sources` and `evidence` are referenced by position.
 */
import type { Confidence, CountrySource, DataSource, HostRole, InstitutionType } from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"

export const institutionsDataFormat = "campusgate-institutions/2"

/** Where a fact came from: the dataset (or `campusgate` for a rule of ours), the rule, how sure. */
export type EvidenceRow = readonly [
  source: string,
  rule: string,
  confidence: Confidence,
  /** For a rule of ours measured on the data: its precision (`typeInference.ts`). */
  precision?: number
]

/** The evidence table being written: each distinct row once, referred to by its position. */
export class EvidenceTable {
  readonly rows: Array<EvidenceRow>
  readonly #positions: Map<string, number>

  /** Starts from `rows` as they are, so rows compiled against them keep pointing right. */
  constructor(rows: ReadonlyArray<EvidenceRow>) {
    this.rows = [...rows]
    this.#positions = new Map(this.rows.map((row, i) => [row.join("\u0000"), i]))
  }

  /** The position of `row`, added if new; -1 for an unknown fact. */
  ref(row: EvidenceRow | null): number {
    if (row === null) return -1
    const key = row.join("\u0000")
    let position = this.#positions.get(key)
    if (position === undefined) {
      position = this.rows.length
      this.rows.push(row)
      this.#positions.set(key, position)
    }
    return position
  }
}

/** A measured type rule (`typeInference.ts`): its id, the type it infers, its leave-one-out precision and how many institutions it was measured on. */
export type TypeRuleRow = readonly [rule: string, type: InstitutionType, precision: number, support: number]

/** Positions in `evidence` of the evidence for each fact; -1 when the fact is unknown. */
export type FactEvidenceRow = readonly [name: number, type: number, country: number, region: number]

export type InstitutionRow = readonly [
  id: string,
  name: string | null,
  country: string | null,
  countrySource: CountrySource | null,
  region: string | null,
  type: InstitutionType,
  sources: ReadonlyArray<number>,
  domains: ReadonlyArray<string>,
  /** Other names, labels in other languages and acronyms (for search). */
  names: ReadonlyArray<string>,
  /** The ROR id (`05x2bcf33`) when ROR knows the institution. */
  ror: string | null,
  evidence: FactEvidenceRow
]

/**
 * `row` placed by one of our own rules: the country it gives (its source
 * `dataset`) and the region, with the positions of the evidence for each.
 */
export const placedRow = (
  row: InstitutionRow,
  country: string | null,
  region: string | null,
  countryEvidence: number,
  regionEvidence: number
): InstitutionRow => {
  const facts = row[10]
  return [
    row[0],
    row[1],
    country,
    "dataset",
    region,
    row[5],
    row[6],
    row[7],
    row[8],
    row[9],
    [facts[0], facts[1], countryEvidence, regionEvidence]
  ]
}

/** A domain with the source that listed it (stoplist or abused list). */
export type DomainRow = readonly [domain: string, source: number]

/** A listed domain whose own labels name who it serves (`students.x.edu`). */
export type RoleRow = readonly [domain: string, role: Exclude<HostRole, "mixed">]

/** An organisation that is not an educational institution (a network, sector body, government body, platform). */
export type NonInstitutionRow = readonly [
  domain: string,
  kind: NonInstitutionKind,
  name: string | null,
  country: string | null,
  source: number,
  /** How it was recognised: `curated`, `ror-type`, `ror-name`. */
  rule: string
]

export type SuffixRuleRow = readonly [
  suffix: string,
  country: string | null,
  type: InstitutionType,
  source: number,
  region: string | null,
  /** Whether the zone's policy fixes the type (else `type` is `other`, unknown). */
  typeKnown: boolean,
  /** Who may register under the zone. */
  policy: string,
  /** Where that policy is published. */
  reference: string
]

/**
 * An unlisted domain under `.edu` (`kaist.edu`, by its label `kaist`) and
 * the listed domain elsewhere with the same label (`kaist.ac.kr`), whose
 * institution lends it facts (`siblings.ts`).
 */
export type SiblingRow = readonly [label: string, via: string]

export interface InstitutionsData {
  readonly format: typeof institutionsDataFormat
  readonly sources: ReadonlyArray<DataSource>
  readonly evidence: ReadonlyArray<EvidenceRow>
  readonly institutions: ReadonlyArray<InstitutionRow>
  /** Hosts that are never institutions although a parent is (swot's stoplist: `alumni.x.edu`). */
  readonly deny: ReadonlyArray<DomainRow>
  /** Domains that resolve to their institution but are known to be abused (swot's abused list). */
  readonly abused: ReadonlyArray<DomainRow>
  readonly roles: ReadonlyArray<RoleRow>
  readonly nonInstitutions: ReadonlyArray<NonInstitutionRow>
  readonly suffixRules: ReadonlyArray<SuffixRuleRow>
  /**
   * `SiblingRow`s as one text (`encodeSiblings`), searched when an unlisted
   * `.edu` host is met, so loading them costs nothing. Absent from indexes
   * compiled before it was added: then nothing is lent.
   */
  readonly siblings?: string | undefined
  /**
   * The measured type rules (`typeInference.ts`) that type the hosts matched
   * by a zone alone. Absent from indexes compiled before: then such hosts
   * keep the zone's type.
   */
  readonly typeRules?: ReadonlyArray<TypeRuleRow> | undefined
  /** How the place-name rule measured and how many institutions it placed (`placeCountries.ts`). */
  readonly placeRule?:
    | {
        readonly precision: number
        readonly support: number
        readonly placed: number
        /** A country's name in a `.edu` domain's label (`mitindia.edu`). */
        readonly countryInLabelPrecision: number
        readonly countryInLabelSupport: number
      }
    | undefined
}
