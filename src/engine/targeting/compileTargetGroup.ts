/**
 * Turns a decoded target group into the precompiled form the per-email path
 * reads: hash sets for filters, one map for the custom domain lists, compiled
 * globs, and the shared "skipped" details for criterion types it does not use.
 */
import { confidenceRank, type HostRole, type InstitutionType } from "../../domain/Institution.ts"
import type { EmailPolicy, TargetGroup } from "../../domain/TargetGroup.ts"
import type { EmailSyntaxOptions } from "../email/parseEmail.ts"
import { compileHostGlob, type HostGlob } from "./hostGlob.ts"
import { allRoleFacts } from "./hostRole.ts"
import type { InstitutionVerdict } from "./institutionVerdict.ts"

export interface CompiledInstitutionCriteria {
  readonly types: ReadonlySet<InstitutionType> | null
  readonly countries: ReadonlySet<string> | null
  readonly regions: ReadonlySet<string> | null
  readonly includeSuffixRules: boolean
  /** The least confidence a judged fact needs (`confidenceRank`): 0 (low, the default) counts every fact. */
  readonly minConfidence: number
  /** The least candidate score accepted for a domain no source lists (`acceptCandidates.minScore`), or null: none is. */
  readonly acceptCandidates: number | null
  /** The host roles accepted: `mixed` is in it whenever `student` or `staff` is. */
  readonly roles: ReadonlySet<HostRole>
  /** Whether each role fact (by its index) is accepted: the per-email check is one array read. */
  readonly acceptsRoleFact: ReadonlyArray<boolean>
  /** The roles the group names, for the details; undefined when it names none (students and staff). */
  readonly allowedRoles: ReadonlyArray<HostRole> | undefined
  readonly rolesText: string
  readonly allowedTypes: ReadonlyArray<InstitutionType> | undefined
  readonly allowedCountries: ReadonlyArray<string> | undefined
  readonly allowedRegions: ReadonlyArray<string> | undefined
  /** The allowed values as a phrase for reasons ("DE, FR, GB"), built once. */
  readonly typesText: string
  readonly countriesText: string
  readonly regionsText: string
}

export type CustomListName = "domains.allow" | "domains.deny"

export interface CompiledTargetGroup {
  readonly targetGroup: TargetGroup
  readonly ref: { readonly id: string; readonly name: string }
  readonly syntax: EmailSyntaxOptions
  readonly policy: EmailPolicy
  readonly institutions: CompiledInstitutionCriteria | null
  /** Domain allow/deny lists in one map; a deny wins over an allow of the same domain. */
  readonly customDomains: ReadonlyMap<string, CustomListName> | null
  readonly allowPatterns: ReadonlyArray<HostGlob>
  readonly denyPatterns: ReadonlyArray<HostGlob>
  readonly hasCustomLists: boolean
  /** Verdicts on listed institutions, built on first use (see `judgeInstitution.ts`). */
  readonly verdicts: Map<object, InstitutionVerdict>
}

/** Students and staff, and the hosts that serve both: what a group accepts unless it names roles. */
const defaultRoles: ReadonlyArray<HostRole> = ["student", "staff"]

/** Whom a role serves, as reasons say it. */
export const rolePhrases: Readonly<Record<HostRole, string>> = {
  student: "students",
  staff: "staff",
  alumni: "alumni",
  mixed: "students and staff alike"
}

const acceptedRoles = (roles: ReadonlyArray<HostRole>): ReadonlySet<HostRole> => {
  const accepted = new Set(roles)
  if (accepted.has("student") || accepted.has("staff")) accepted.add("mixed")
  return accepted
}

const setOrNull = <A>(values: ReadonlyArray<A> | undefined): ReadonlySet<A> | null =>
  values === undefined || values.length === 0 ? null : new Set(values)

/**
 * The syntax options, one shared object per combination: groups that parse
 * alike have the same object, so an offer parses an email once for all of
 * them (`evaluateOffer.ts`).
 */
const syntaxTable = new Map<number, EmailSyntaxOptions>()
const syntaxOptions = (
  allowQuotedLocalPart: boolean,
  allowIpLiteral: boolean,
  allowSpecialUseDomains: boolean
): EmailSyntaxOptions => {
  const key = (allowQuotedLocalPart ? 1 : 0) | (allowIpLiteral ? 2 : 0) | (allowSpecialUseDomains ? 4 : 0)
  let options = syntaxTable.get(key)
  if (options === undefined) {
    options = Object.freeze({ allowQuotedLocalPart, allowIpLiteral, allowSpecialUseDomains })
    syntaxTable.set(key, options)
  }
  return options
}

export const compileTargetGroup = (targetGroup: TargetGroup): CompiledTargetGroup => {
  const { criteria } = targetGroup
  const institutions = criteria.institutions
  const customDomains = new Map<string, CustomListName>()
  for (const domain of criteria.domains?.allow ?? []) customDomains.set(domain, "domains.allow")
  for (const domain of criteria.domains?.deny ?? []) customDomains.set(domain, "domains.deny")
  const allowPatterns = (criteria.patterns?.allow ?? []).map(compileHostGlob)
  const denyPatterns = (criteria.patterns?.deny ?? []).map(compileHostGlob)
  return {
    targetGroup,
    ref: Object.freeze({ id: targetGroup.id, name: targetGroup.name }),
    syntax: syntaxOptions(
      criteria.email.allowQuotedLocalPart,
      criteria.email.allowIpLiteral,
      criteria.email.allowSpecialUseDomains
    ),
    policy: criteria.email,
    institutions:
      institutions === undefined
        ? null
        : {
            types: setOrNull(institutions.types),
            countries: setOrNull(institutions.countries),
            regions: setOrNull(institutions.regions),
            includeSuffixRules: institutions.includeSuffixRules,
            minConfidence: confidenceRank[institutions.minConfidence ?? "low"],
            acceptCandidates: institutions.acceptCandidates?.minScore ?? null,
            roles: acceptedRoles(institutions.roles?.length ? institutions.roles : defaultRoles),
            acceptsRoleFact: allRoleFacts.map((fact) =>
              acceptedRoles(institutions.roles?.length ? institutions.roles : defaultRoles).has(fact.role)
            ),
            allowedRoles: institutions.roles?.length ? institutions.roles : undefined,
            rolesText: (institutions.roles?.length ? institutions.roles : defaultRoles)
              .map((role) => rolePhrases[role])
              .join(" and "),
            allowedTypes: institutions.types?.length ? institutions.types : undefined,
            allowedCountries: institutions.countries?.length ? institutions.countries : undefined,
            allowedRegions: institutions.regions?.length ? institutions.regions : undefined,
            typesText: (institutions.types ?? []).join(", "),
            countriesText: (institutions.countries ?? []).join(", "),
            regionsText: (institutions.regions ?? []).join(", ")
          },
    customDomains: customDomains.size > 0 ? customDomains : null,
    allowPatterns,
    denyPatterns,
    hasCustomLists: customDomains.size > 0 || allowPatterns.length > 0 || denyPatterns.length > 0,
    verdicts: new Map()
  }
}
