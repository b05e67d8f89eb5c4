/**
 * Judges a matched institution (a listed domain, or an academic suffix rule)
 * against a target group's institution filters, roles and abuse policy. The
 * verdict for a listed domain depends only on the group and the entry, so it
 * is built once and its details are shared (frozen) by every later result
 * for that entry; a group remembers at most `maxRemembered` of them. The
 * domain detail reports the role of a host equal to the matched domain; a
 * host of another role (`staff.x.edu`) gets a detail of its own, made once.
 */
import { confidenceRank, type Evidence, type InstitutionType } from "../../domain/Institution.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { DomainDetail, GeographyDetail, OrganizationTypeDetail } from "../../domain/ValidationResult.ts"
import type { ListedEntry, SuffixRule } from "../institutions/InstitutionTable.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { InstitutionVerdict } from "./institutionVerdict.ts"

export type { InstitutionVerdict }

import { type RoleFact, roleFactOf } from "./hostRole.ts"

/**
 * The verdict's domain detail for a host of `role`: `verdict.domain` for the
 * matched domain's own role (almost every host), else built once per role
 * and shared. A host's labels (`stu.x.edu`) are the only way to another role
 * (`roleFactOf`), so each role keeps the first detail made for it; a detail
 * kept for another fact of the same role is not returned for this one.
 */
export const domainWithRole = (verdict: InstitutionVerdict, role: RoleFact): DomainDetail => {
  if (role === verdict.role) return verdict.domain
  const name = role.role
  const kept =
    name === "student"
      ? verdict.studentHost
      : name === "staff"
        ? verdict.staffHost
        : name === "alumni"
          ? verdict.alumniHost
          : null
  if (kept !== null && kept.roleEvidence === role.evidence) return kept
  // A literal of the detail's own shape: copying the frozen detail by spread costs a microsecond, and the
  // long tail of (institution, role) pairs makes that a per-email cost (measured: bench/library.ts).
  const domain = verdict.domain
  const detail_: Mutable<DomainDetail> = {
    status: domain.status,
    matchedDomain: domain.matchedDomain!,
    rule: domain.rule!,
    institution: domain.institution!,
    role: name,
    roleEvidence: role.evidence
  }
  if (domain.allowedRoles !== undefined) detail_.allowedRoles = domain.allowedRoles
  const detail = Object.freeze(detail_)
  if (kept === null) {
    if (name === "student") verdict.studentHost = detail
    else if (name === "staff") verdict.staffHost = detail
    else if (name === "alumni") verdict.alumniHost = detail
  }
  return detail
}

const maxRemembered = 50_000

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const judge = (
  group: CompiledTargetGroup,
  listed: ListedEntry | undefined,
  rule: SuffixRule | undefined,
  matchedDomain: string
): InstitutionVerdict => {
  const criteria = group.institutions!
  const summary = listed?.summary ?? rule!.summary
  const name = listed?.institution.name ?? `the institution at ${matchedDomain}`
  // The name as a sentence's subject: a listed name as it is, the stand-in capitalised.
  const subject = listed?.institution.name ?? `The institution at ${matchedDomain}`
  const role = roleFactOf(matchedDomain, matchedDomain, listed?.role ?? "mixed")
  const domain: Mutable<DomainDetail> = {
    status: "passed",
    matchedDomain,
    rule: listed !== undefined ? "listed-domain" : "academic-suffix",
    institution: summary,
    role: role.role,
    roleEvidence: role.evidence
  }
  if (criteria.allowedRoles !== undefined) domain.allowedRoles = criteria.allowedRoles
  const type = summary.type
  const organizationType: Mutable<OrganizationTypeDetail> = { status: "skipped", type }
  const country = summary.country
  const region = summary.region
  const countrySource = listed !== undefined ? listed.institution.countrySource : rule!.countrySource
  const geography: Mutable<GeographyDetail> = { status: "skipped", country, countrySource, region }
  const verdict = (failure: readonly [ReasonCode, string] | undefined, abusedRejected = false): InstitutionVerdict => ({
    domain,
    organizationType,
    geography,
    abusedRejected,
    reasonCode: failure?.[0],
    reason: failure?.[1],
    role,
    roleRefused: !criteria.acceptsRoleFact[role.index],
    studentHost: null,
    staffHost: null,
    alumniHost: null
  })

  if (rule !== undefined && !criteria.includeSuffixRules) {
    domain.status = "failed"
    return verdict([
      "SUFFIX_RULE_NOT_ACCEPTED",
      `${matchedDomain} is academic only by its suffix (${rule.suffix}); this target group accepts listed institutions only.`
    ])
  }
  if (listed?.abused === true && group.policy.rejectAbused) {
    domain.status = "failed"
    return verdict(
      [
        "ABUSED_DOMAIN",
        `${matchedDomain} belongs to ${name} but is known to give addresses to people who are not students.`
      ],
      true
    )
  }
  const evidence = summary.evidence
  if (criteria.types !== null) {
    organizationType.allowedTypes = criteria.allowedTypes!
    const sure = confidenceRank[evidence.type.confidence] >= criteria.minConfidence
    organizationType.status = sure && criteria.types.has(type) ? "passed" : "failed"
    if (organizationType.status === "failed") {
      return verdict([
        "ORGANIZATION_TYPE_NOT_ALLOWED",
        sure
          ? `${subject} is ${typePhrase(type)}; this target group accepts ${criteria.typesText}.`
          : `${subject} is ${typePhrase(type)} only with ${evidence.type.confidence} confidence (${evidence.type.rule}); this target group accepts ${criteria.typesText} known with more.`
      ])
    }
  }
  if (criteria.countries !== null) {
    geography.status = "passed"
    geography.allowedCountries = criteria.allowedCountries!
    const failure = placeFailure(
      "COUNTRY_NOT_ALLOWED",
      "country",
      name,
      subject,
      sureOf(country, evidence.country, criteria.minConfidence),
      criteria.countries,
      criteria.countriesText
    )
    if (failure !== undefined) {
      geography.status = "failed"
      return verdict(failure)
    }
  }
  if (criteria.regions !== null) {
    geography.status = "passed"
    geography.allowedRegions = criteria.allowedRegions!
    const failure = placeFailure(
      "REGION_NOT_ALLOWED",
      "region",
      name,
      subject,
      sureOf(region, evidence.region, criteria.minConfidence),
      criteria.regions,
      criteria.regionsText
    )
    if (failure !== undefined) {
      geography.status = "failed"
      return verdict(failure)
    }
  }
  return verdict(undefined)
}

/** A fact as the group judges it: unknown (null) when its evidence is less sure than the group asks. */
const sureOf = (value: string | null, evidence: Evidence | undefined, minConfidence: number): string | null =>
  value === null || (evidence !== undefined && confidenceRank[evidence.confidence] < minConfidence) ? null : value

/** An institution of `type` as a sentence says it: "a college organisation", "an organisation of type other". */
const typePhrase = (type: InstitutionType): string =>
  type === "other" ? "an organisation of type other" : `a ${type} organisation`

/** Country and region: the same check on a different fact of the institution. */
const placeFailure = (
  code: ReasonCode,
  what: "country" | "region",
  name: string,
  subject: string,
  value: string | null,
  allowed: ReadonlySet<string>,
  allowedText: string
): readonly [ReasonCode, string] | undefined => {
  if (value !== null && allowed.has(value)) return undefined
  return [
    code,
    value === null
      ? `The ${what} of ${name} is not known; this target group accepts ${allowedText}.`
      : `${subject} is in ${value}; this target group accepts ${allowedText}.`
  ]
}

/** Freezes what results share (the details); the verdict itself stays open for its details of other roles (`domainWithRole`), made on need. */
const freeze = (verdict: InstitutionVerdict): InstitutionVerdict => {
  Object.freeze(verdict.domain)
  Object.freeze(verdict.organizationType)
  Object.freeze(verdict.geography)
  return verdict
}

/** The group's verdict on a listed domain, remembered in the group unless `remember` is false. */
export const judgeListed = (group: CompiledTargetGroup, entry: ListedEntry, remember = true): InstitutionVerdict => {
  if (!remember) return freeze(judge(group, entry, undefined, entry.domain))
  let verdict = group.verdicts.get(entry)
  if (verdict === undefined) {
    verdict = freeze(judge(group, entry, undefined, entry.domain))
    if (group.verdicts.size >= maxRemembered) group.verdicts.clear()
    group.verdicts.set(entry, verdict)
  }
  return verdict
}

/** Its details are frozen too: the caller may share them between results (see `HostDirectory.memo`). */
export const judgeSuffixRule = (
  group: CompiledTargetGroup,
  rule: SuffixRule,
  matchedDomain: string
): InstitutionVerdict => freeze(judge(group, undefined, rule, matchedDomain))
