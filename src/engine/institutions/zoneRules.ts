/**
 * What a host under an academic zone is taken to be: the zone's rule with
 * its registry policy (`SuffixRule`), and the rule made for one domain
 * under it, where a sibling lends its facts (`siblings.ts`: `kaist.edu`) or
 * a measured rule infers its type (`typeInference.ts`).
 */
import type {
  CountrySource,
  DataSource,
  Evidence,
  FactEvidence,
  Institution,
  InstitutionType
} from "../../domain/Institution.ts"
import type { InstitutionSummary } from "../../domain/ValidationResult.ts"
import type { EvidenceRow } from "./InstitutionsData.ts"
import { siblingEvidence } from "./siblings.ts"
import type { InferredType } from "./typeInference.ts"

/** An academic zone (`edu`, `ac.uk`, `edu.cn`, `k12.ca.us`) with its registry policy: lower confidence than a listed domain. */
export interface SuffixRule {
  readonly kind: "suffix"
  readonly suffix: string
  readonly country: string | null
  /** `suffix-rule` for the zone's own country; `dataset` when a sibling institution lends it (`siblings.ts`). */
  readonly countrySource: CountrySource | null
  readonly region: string | null
  readonly type: InstitutionType
  readonly source: DataSource
  readonly policy: string
  readonly reference: string
  readonly summary: InstitutionSummary
}

/** The zone's rule for `domain`, with the name, country, region and (a university's or college's) type of its sibling. */
export const borrowFacts = (zone: SuffixRule, institution: Institution, via: string): SuffixRule => {
  const lent = siblingEvidence(via, "low")
  const evidence = Object.freeze({ source: lent[0], rule: lent[1], confidence: lent[2] })
  const teaches = institution.type === "university" || institution.type === "college"
  const type = teaches ? institution.type : zone.type
  const facts: { -readonly [K in keyof FactEvidence]: FactEvidence[K] } = {
    type: teaches ? evidence : zone.summary.evidence.type
  }
  if (institution.name !== null) facts.name = evidence
  if (institution.country !== null) facts.country = evidence
  if (institution.region !== null) facts.region = evidence
  return {
    ...zone,
    country: institution.country,
    countrySource: institution.country === null ? null : "dataset",
    region: institution.region,
    type,
    summary: Object.freeze({
      id: zone.summary.id,
      name: institution.name,
      country: institution.country,
      region: institution.region,
      type,
      flags: [],
      sources: zone.summary.sources,
      evidence: Object.freeze(facts)
    })
  }
}

/** A compiled evidence row as the model's `Evidence`, frozen. */
export const evidenceOf = ([source, rule, confidence, precision]: EvidenceRow): Evidence =>
  Object.freeze(precision === undefined ? { source, rule, confidence } : { source, rule, confidence, precision })

/** The zone's rule for `matchedDomain` with the type its label or the zone's members infer (`typeInference.ts`). */
export const inferType = (zone: SuffixRule, inferred: InferredType): SuffixRule => {
  const evidence = evidenceOf(inferred.evidence)
  return {
    ...zone,
    type: inferred.type,
    summary: Object.freeze({
      ...zone.summary,
      type: inferred.type,
      evidence: Object.freeze({ ...zone.summary.evidence, type: evidence })
    })
  }
}
