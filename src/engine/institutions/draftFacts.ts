/**
 * The facts an institution's own data does not state, worked out by our
 * rules, each with its evidence: the country from the ccTLD or the academic
 * zone, the type from the registry's types, the names or the zone's policy,
 * and the role a listed sub-domain's labels name.
 */
import { parse } from "tldts"
import { countryFromTld } from "../../domain/Country.ts"
import type { Confidence, CountrySource, InstitutionType } from "../../domain/Institution.ts"
import type { EvidenceRow, RoleRow, SuffixRuleRow } from "./InstitutionsData.ts"
import { inferInstitutionType } from "./inferType.ts"
import { institutionTypeOfNames } from "./organizationKind.ts"
import { roleOf } from "./roles.ts"
import type { RorType } from "./sources/SourceSnapshot.ts"

/** Facts derived by our own rules, not stated by a dataset. */
export const RULES_SOURCE = "campusgate"

export const evidence = (source: string, rule: string, confidence: Confidence): EvidenceRow => [
  source,
  rule,
  confidence
]

/** The academic zone a domain falls under, if any. */
export type ZoneOf = (domain: string) => SuffixRuleRow | undefined

/** What the type of an institution is worked out from. */
export interface TypeFacts {
  readonly type: InstitutionType | null
  readonly typeEvidence: EvidenceRow | null
  readonly name: string | null
  readonly nameEvidence: EvidenceRow | null
  readonly names: Iterable<string>
  readonly rorTypes: ReadonlyArray<RorType> | null
  readonly domains: ReadonlyArray<string>
}

/** The `CountrySource` older clients read, from the evidence rule. */
export const countrySourceOf = (rule: string): CountrySource =>
  rule === "cctld" ? "cctld" : rule.startsWith("zone-policy") ? "suffix-rule" : "dataset"

/** The role a listed domain's own labels name (`students.x.edu`), in front of its registrable domain. */
export const ownRole = (domain: string): RoleRow[1] | undefined => {
  const registrable = parse(domain).domain
  return registrable === null || registrable === domain ? undefined : roleOf(domain, registrable)
}

/** The country of a host from its ccTLD, else from the academic zone it falls under, with the evidence. */
export const inferCountry = (domain: string, zoneOf: ZoneOf): [string, EvidenceRow] | undefined => {
  const lastDot = domain.lastIndexOf(".")
  const secondLevel = domain.slice(domain.lastIndexOf(".", lastDot - 1) + 1, lastDot)
  const byTld = countryFromTld(domain.slice(lastDot + 1), secondLevel)
  if (byTld !== undefined) return [byTld, evidence(RULES_SOURCE, "cctld", "medium")]
  const zone = zoneOf(domain)
  if (zone !== undefined && zone[1] !== null) {
    return [zone[1], evidence(RULES_SOURCE, `zone-policy:${zone[0]}`, "low")]
  }
  return undefined
}

/** The type of an institution from a dataset, the registry's types and the names, or the zone's policy. */
export const resolveType = (draft: TypeFacts, zoneOf: ZoneOf): [InstitutionType, EvidenceRow] => {
  if (draft.type !== null) return [draft.type, draft.typeEvidence ?? evidence(RULES_SOURCE, "dataset-type", "high")]
  const byName = institutionTypeOfNames([draft.name, ...draft.names])
  const nameSource = draft.nameEvidence?.[0] ?? RULES_SOURCE
  const ror = draft.rorTypes
  if (ror?.includes("education")) {
    return byName === "university" || byName === "college" || byName === "school"
      ? [byName, evidence("ror", "ror-type:education+name", "high")]
      : ["college", evidence("ror", "ror-type:education", "medium")]
  }
  if (ror?.includes("facility") && (byName === "other" || byName === "research")) {
    return ["research", evidence("ror", "ror-type:facility", "high")]
  }
  if (byName !== "other") return [byName, evidence(nameSource, "name", "medium")]
  for (const domain of draft.domains) {
    const zone = zoneOf(domain)
    if (zone?.[5]) return [zone[2], evidence(RULES_SOURCE, `zone-policy:${zone[0]}`, "medium")]
  }
  const byZoneName = inferInstitutionType(null, draft.domains)
  if (byZoneName !== "other") return [byZoneName, evidence(RULES_SOURCE, "school-zone", "medium")]
  return ["other", evidence(RULES_SOURCE, "unknown", "low")]
}
