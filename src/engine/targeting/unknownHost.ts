/**
 * A host no source lists, judged by a group with institution criteria: by
 * default refused as `UNKNOWN_INSTITUTION`, with its candidate score
 * attached (`institutions/candidates.ts`); where the group accepts
 * candidates at a score (`acceptCandidates.minScore`) and this one reaches
 * it, accepted as `LIKELY_INSTITUTION` with low confidence in every fact:
 * the type its label's words infer, the country its country-code TLD
 * names. The group's type, country and region filters judge those facts
 * as they judge a listed institution's.
 */
import { countryFromTld } from "../../domain/Country.ts"
import { confidenceRank, type Evidence, type FactEvidence, type InstitutionType } from "../../domain/Institution.ts"
import type { Candidate } from "../../domain/InstitutionReview.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { InstitutionSummary, ValidationResult } from "../../domain/ValidationResult.ts"
import { scoredCandidate } from "./candidateOf.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"
import { type Details, groupResult } from "./groupResult.ts"
import type { HostFacts } from "./HostDirectory.ts"

const low = (rule: string): Evidence => ({ source: "campusgate", rule, confidence: "low" })

/** What a candidate is taken to be: its facts, each with low confidence. */
const candidateSummary = (context: EngineContext, candidate: Candidate): InstitutionSummary => {
  const dot = candidate.domain.indexOf(".")
  const tld = candidate.domain.slice(candidate.domain.lastIndexOf(".") + 1)
  const inferred = context.index.inferredType(candidate.domain.slice(0, dot))
  const type: InstitutionType = inferred?.type ?? "other"
  const country = tld.length === 2 ? (countryFromTld(tld) ?? null) : null
  const evidence: { -readonly [K in keyof FactEvidence]: FactEvidence[K] } = {
    type: inferred === undefined ? low("unknown") : { ...low(inferred.evidence[1]), precision: inferred.evidence[3]! }
  }
  if (country !== null) evidence.country = low(`cctld:${tld}`)
  return {
    id: `candidate:${candidate.domain}`,
    name: null,
    country,
    region: null,
    type,
    flags: [],
    sources: [{ dataset: "campusgate-candidates" }],
    evidence
  }
}

/** The first of the group's filters the candidate's facts fail, if any. */
const filterFailure = (
  group: CompiledTargetGroup,
  domain: string,
  summary: InstitutionSummary,
  details: Details
): readonly [ReasonCode, string] | undefined => {
  const criteria = group.institutions!
  const sure = criteria.minConfidence <= confidenceRank.low
  details.organizationType = { status: "skipped", type: summary.type }
  details.geography = { status: "skipped", country: summary.country, countrySource: "cctld", region: null }
  if (criteria.types !== null) {
    const passed = sure && criteria.types.has(summary.type)
    details.organizationType = {
      status: passed ? "passed" : "failed",
      type: summary.type,
      allowedTypes: criteria.allowedTypes!
    }
    if (!passed) {
      return [
        "ORGANIZATION_TYPE_NOT_ALLOWED",
        `The institution at ${domain} is likely of type ${summary.type} (low confidence); this target group accepts ${criteria.typesText}${sure ? "" : " known with more confidence"}.`
      ]
    }
  }
  if (criteria.countries !== null || criteria.regions !== null) {
    const country = sure ? summary.country : null
    const passed = criteria.regions === null && country !== null && criteria.countries!.has(country)
    details.geography = {
      status: passed ? "passed" : "failed",
      country: summary.country,
      countrySource: "cctld",
      region: null,
      ...(criteria.allowedCountries === undefined ? {} : { allowedCountries: criteria.allowedCountries }),
      ...(criteria.allowedRegions === undefined ? {} : { allowedRegions: criteria.allowedRegions })
    }
    if (!passed) {
      return criteria.regions !== null
        ? [
            "REGION_NOT_ALLOWED",
            `The region of the institution at ${domain} is not known; this target group accepts ${criteria.regionsText}.`
          ]
        : [
            "COUNTRY_NOT_ALLOWED",
            country === null
              ? `The country of the institution at ${domain} is not known${sure ? "" : " with enough confidence"}; this target group accepts ${criteria.countriesText}.`
              : `The institution at ${domain} is likely in ${country}; this target group accepts ${criteria.countriesText}.`
          ]
    }
  }
  return undefined
}

/** The answer for a host no source lists, for a group with institution criteria. */
export const unknownHostResult = (
  group: CompiledTargetGroup,
  context: EngineContext,
  input: string,
  details: Details,
  host: string,
  facts: HostFacts,
  suggestion: string | null
): ValidationResult => {
  const scored = scoredCandidate(context, host, facts)
  const candidate = scored?.candidate ?? null
  const minScore = group.institutions!.acceptCandidates
  const hint = suggestion === null ? "" : ` Did you mean ${suggestion}?`
  if (candidate !== null && minScore !== null && candidate.score >= minScore) {
    const summary = candidateSummary(context, candidate)
    const failure = filterFailure(group, candidate.domain, summary, details)
    details.domain = {
      status: failure === undefined ? "passed" : "failed",
      domain: host,
      matchedDomain: candidate.domain,
      institution: summary,
      candidate
    }
    if (failure !== undefined) return groupResult(group, input, details, undefined, failure[0], failure[1])
    return groupResult(
      group,
      input,
      details,
      candidate.domain,
      "LIKELY_INSTITUTION",
      `${candidate.domain} is in no source, but scores ${candidate.score} as an institution (this target group accepts ${minScore} and above): accepted with low confidence.`
    )
  }
  // A literal per shape (see `groupResult`), the keys in the answer's order.
  details.domain =
    suggestion === null
      ? candidate === null
        ? { status: "failed", domain: host }
        : { status: "failed", domain: host, candidate }
      : candidate === null
        ? { status: "failed", domain: host, suggestion }
        : { status: "failed", domain: host, suggestion, candidate }
  return groupResult(
    group,
    input,
    details,
    undefined,
    "UNKNOWN_INSTITUTION",
    `${host} is not a known academic institution${group.hasCustomLists ? " nor on the target group's lists" : ""}.${scored?.phrase ?? ""}${hint}`
  )
}
