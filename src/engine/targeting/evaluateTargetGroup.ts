/**
 * The per-email hot path: one email against one compiled target group,
 * producing the seed's validation result with a detail per criterion type.
 * Synchronous, no effect overhead; it answers as soon as the answer is known
 * and builds reason strings only for failures. Checks run in a fixed order
 * (format, email policy, lists and index, type, country, region) and the
 * first failure gives `reason` and `reasonCode`.
 */
import type { Institution } from "../../domain/Institution.ts"
import { nonInstitutionPhrase, nonInstitutionReason } from "../../domain/NonInstitution.ts"
import type {
  CustomListDetail,
  EmailPolicyDetail,
  FormatDetail,
  ValidationResult
} from "../../domain/ValidationResult.ts"
import { type EmailParse, isFormatFailure, type ParsedEmail, parseAddress } from "../email/parseEmail.ts"
import type { FormatFailure } from "../email/reasons.ts"
import type { HostMatch } from "../institutions/InstitutionTable.ts"
import { assessConfusable } from "../policy/confusable.ts"
import { type CompiledTargetGroup, rolePhrases } from "./compileTargetGroup.ts"
import { resolveCustomRule } from "./customRule.ts"
import type { EngineContext } from "./EngineContext.ts"
import { ABUSED, CONFUSABLE, hostPolicyFlags, policyDetail, policyFailure, ROLE_ACCOUNT } from "./emailPolicy.ts"
import { type Details, groupResult } from "./groupResult.ts"
import { type HostFacts, keepVerdictFields, keptVerdictFields } from "./HostDirectory.ts"
import { type RoleFact, roleFactOf } from "./hostRole.ts"
import { domainWithRole, type InstitutionVerdict, judgeListed, judgeSuffixRule } from "./judgeInstitution.ts"
import { suggestionFor } from "./suggestion.ts"
import { unknownHostResult } from "./unknownHost.ts"

// Shared by every result, hence frozen (as are verdicts and policy details): a caller may cache their JSON.
const skipped = Object.freeze({ status: "skipped" } as const)
const passed = Object.freeze({ status: "passed" } as const)
const failed = Object.freeze({ status: "failed" } as const)

const result = groupResult

/** A failed result because the host is a known non-student part of an institution (the stoplist). */
const denied = (group: CompiledTargetGroup, email: string, details: Details, reason: string): ValidationResult =>
  result(group, email, details, undefined, "INSTITUTION_DENIED", reason)

const emptyDetails = (): Details => ({
  format: skipped,
  domain: skipped,
  geography: skipped,
  organizationType: skipped,
  customList: skipped,
  emailPolicy: skipped
})

/** The details of an email past its format and email-policy checks, the domain's still skipped (the keys in `emptyDetails`' order). */
const detailsAfterPolicy = (
  format: FormatDetail,
  emailPolicy: EmailPolicyDetail,
  customList: CustomListDetail | typeof skipped
): Details => ({
  format,
  domain: skipped,
  geography: skipped,
  organizationType: skipped,
  customList,
  emailPolicy
})

const judgeHost = (group: CompiledTargetGroup, facts: HostFacts, remember = true): InstitutionVerdict => {
  const match = facts.match
  if (match.kind === "listed") return judgeListed(group, match.entry, remember)
  if (match.kind === "suffix") return judgeSuffixRule(group, match.rule, match.matchedDomain)
  throw new Error(`judgeHost: the host matched no institution (${match.kind})`)
}

const describe = (institution: Institution | null, matchedDomain: string): string =>
  institution?.name ?? `the institution at ${matchedDomain}`

type NonInstitutionMatch = Extract<HostMatch, { kind: "non-institution" }>
type RoleMatch = Extract<HostMatch, { kind: "listed" | "suffix" }>

/** The role of a host below its matched domain (`alumni.x.edu`). */
const hostRoleOf = (host: string, match: RoleMatch): RoleFact =>
  roleFactOf(host, match.matchedDomain, match.kind === "listed" ? match.entry.role : "mixed")

/**
 * The match on which every group of `groups` judges an email alone — so
 * that the hosts of one match (`x.edu`, `cs.x.edu`, `students.x.edu`) get
 * one row — or `undefined` when a group's result may say more of the host
 * than its match: it names the host where a policy refuses it (disposable,
 * free mail), where a group does not accept the role it serves
 * (`alumni.x.edu`), and where the host is of no institution or a group has
 * no institution criteria; and a group's own list or pattern that speaks
 * for the host decides by the host itself. Otherwise `judgeEmail` ends,
 * for every group, in the group's verdict on the match, whose members the
 * row holds (`app/rowVerdicts.ts` shares it).
 *
 * For plain ASCII addresses (no look-alike check) whose local part no group
 * reads: the caller checks that the email is not a role account where a
 * group rejects them.
 */
export const rowMatchOf = (
  groups: ReadonlyArray<CompiledTargetGroup>,
  email: ParsedEmail,
  facts: HostFacts
): Exclude<HostMatch, { kind: "none" }> | undefined => {
  const match = facts.match
  if (match.kind === "none") return undefined
  const host = email.domain
  const flags = hostPolicyFlags(facts)
  let role: RoleFact | undefined
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!
    const criteria = group.institutions
    if (criteria === null || policyFailure(group, email, facts, flags, null) !== undefined) return undefined
    if (resolveCustomRule(group, match, host) !== undefined) return undefined
    if (match.kind === "listed" || match.kind === "suffix") {
      // As `judgeEmail`'s role check: a verdict refuses the role of its matched domain exactly when the group does not accept it.
      role ??= hostRoleOf(host, match)
      if (!criteria.acceptsRoleFact[role.index]) return undefined
    }
  }
  return match
}

// The refusals below are out of line: keeping `evaluateTargetGroup` small lets the engine inline
// what every email runs (measured: bench/library.ts).

/** A failed result because the host serves a role the group does not accept (alumni, by default). */
const roleRefused = (
  group: CompiledTargetGroup,
  input: string,
  details: Details,
  host: string,
  match: RoleMatch,
  role: RoleFact
): ValidationResult => {
  const criteria = group.institutions!
  const institution = match.kind === "listed" ? match.entry.institution : null
  details.domain = {
    status: "failed",
    domain: host,
    matchedDomain: match.matchedDomain,
    rule: match.kind === "listed" ? "listed-domain" : "academic-suffix",
    institution: match.kind === "listed" ? match.entry.summary : match.rule.summary,
    role: role.role,
    roleEvidence: role.evidence,
    allowedRoles: criteria.allowedRoles ?? ["student", "staff"]
  }
  return result(
    group,
    input,
    details,
    undefined,
    "ROLE_NOT_ALLOWED",
    `${host} serves ${rolePhrases[role.role]} of ${describe(institution, match.matchedDomain)}; this target group accepts ${criteria.rolesText}.`
  )
}

/** A failed result because the host belongs to an organisation that is not an institution. */
const nonInstitutionRefused = (
  group: CompiledTargetGroup,
  input: string,
  details: Details,
  host: string,
  match: NonInstitutionMatch
): ValidationResult => {
  const organization = match.entry.organization
  details.domain = {
    status: "failed",
    domain: host,
    matchedDomain: match.matchedDomain,
    rule: "non-institution",
    organization
  }
  return result(
    group,
    input,
    details,
    undefined,
    nonInstitutionReason[organization.kind],
    `${match.matchedDomain} belongs to ${organization.name ?? "an organisation"}, ${nonInstitutionPhrase[organization.kind]}, not an educational institution.`
  )
}

/** A failed result because the input is not a valid email address. */
export const formatRefused = (group: CompiledTargetGroup, input: string, parsed: FormatFailure): ValidationResult => {
  const details = emptyDetails()
  details.format = { status: "failed", code: parsed.reason, message: parsed.message }
  return result(
    group,
    input,
    details,
    undefined,
    "INVALID_EMAIL_FORMAT",
    `The email address is not valid: ${parsed.message}`
  )
}

/** Whether an internationalised domain looks like another (null for a plain ASCII one: never). */
export const lookalikeOf = (email: ParsedEmail): ReturnType<typeof assessConfusable> | null =>
  email.isInternational ? assessConfusable(email.domain, email.unicodeDomain) : null

/**
 * What a caller knows of an email already: `parsed`, what `parseEmail`
 * answered for it under `syntax`, and its host's facts in the context at
 * hand (`context.hosts.facts` of the parsed domain). A job that judges a
 * host for several targets looks it up once (`app/rowVerdicts.ts`).
 */
export interface KnownEmail {
  readonly syntax: CompiledTargetGroup["syntax"]
  readonly parsed: Extract<EmailParse, { ok: true }>
  readonly facts: HostFacts
}

export const evaluateTargetGroup = (
  group: CompiledTargetGroup,
  context: EngineContext,
  input: string
): ValidationResult => {
  const email = parseAddress(input, group.syntax)
  if (isFormatFailure(email)) return formatRefused(group, input, email)
  return judgeEmail(group, context, input, email, context.hosts.facts(email.domain), lookalikeOf(email))
}

/**
 * `evaluateTargetGroup` of an email the caller knows already (`known`,
 * parsed under the group's syntax). A function of its own, so that
 * `evaluateTargetGroup`, which every email of a request runs, stays as
 * small as the engine inlines (see the refusals above).
 */
export const evaluateKnownEmail = (
  group: CompiledTargetGroup,
  context: EngineContext,
  input: string,
  known: KnownEmail
): ValidationResult => {
  if (known.syntax !== group.syntax) return evaluateTargetGroup(group, context, input)
  const email = known.parsed.email
  return judgeEmail(group, context, input, email, known.facts, lookalikeOf(email))
}

/**
 * One parsed email against one group, given what does not depend on the
 * group — the host's facts and the look-alike check — so an offer finds
 * them once for all its groups (`evaluateOffer.ts`).
 */
export const judgeEmail = (
  group: CompiledTargetGroup,
  context: EngineContext,
  input: string,
  email: ParsedEmail,
  facts: HostFacts,
  lookalike: ReturnType<typeof assessConfusable> | null
): ValidationResult => {
  const host = email.domain
  // The details are made once the checks that fill them are done (below: one literal, not six fields written
  // over `emptyDetails`' on every accepted email).
  const format: FormatDetail = { status: "passed", normalized: email.address }

  let flags = hostPolicyFlags(facts)
  // Checked only when the group rejects role accounts: it is the costliest flag (measured: bench/library.ts).
  if (group.policy.rejectRoleAccounts && context.lists.isRoleAccount(email.localPart)) flags |= ROLE_ACCOUNT
  let imitates: string | null = null
  if (lookalike !== null) {
    imitates = lookalike.imitates
    if (lookalike.mixedScript || imitates !== null) flags |= CONFUSABLE
  }
  const policyFailed = policyFailure(group, email, facts, flags, imitates)
  const emailPolicy = policyDetail(policyFailed !== undefined, flags, imitates)
  if (policyFailed !== undefined) {
    return result(
      group,
      input,
      detailsAfterPolicy(format, emailPolicy, skipped),
      undefined,
      policyFailed[0],
      policyFailed[1]
    )
  }

  const custom = resolveCustomRule(group, facts.match, host)
  const customList = group.hasCustomLists ? passed : skipped
  if (custom !== undefined) {
    const customListDetail: CustomListDetail = {
      status: custom.list.endsWith("deny") ? "failed" : "passed",
      list: custom.list,
      entry: custom.entry
    }
    const details = detailsAfterPolicy(format, emailPolicy, customListDetail)
    if (customListDetail.status === "failed") {
      return result(
        group,
        input,
        details,
        undefined,
        "DOMAIN_DENIED",
        `${host} is denied by the target group's ${custom.list} entry "${custom.entry}".`
      )
    }
    return result(group, input, details, custom.list === "domains.allow" ? custom.entry : host)
  }
  // Without institution criteria the index is not asked; a look-alike of another domain (`mіt.edu`)
  // never counts as academic by its suffix alone.
  const kind =
    group.institutions === null || (facts.matchKind === "suffix" && imitates !== null) ? "none" : facts.matchKind
  const matchedDomain = facts.matchedDomain!
  if (kind === "non-institution") {
    const details = detailsAfterPolicy(format, emailPolicy, customList)
    return nonInstitutionRefused(group, input, details, host, facts.match as NonInstitutionMatch)
  }
  if (kind === "deny") {
    const match = facts.match as Extract<HostMatch, { kind: "deny" }>
    const details = detailsAfterPolicy(format, emailPolicy, customList)
    details.domain = { status: "failed", domain: host, matchedDomain: match.matchedDomain, rule: "stoplist" }
    return denied(
      group,
      input,
      details,
      `${match.matchedDomain} is not an institution's student domain (it is on the ${match.entry.source.dataset} stoplist).`
    )
  }
  if (kind === "none") {
    const details = detailsAfterPolicy(format, emailPolicy, group.hasCustomLists ? failed : skipped)
    const suggestion = suggestionFor(context, host)
    if (group.institutions !== null) {
      return unknownHostResult(group, context, input, details, host, facts, suggestion)
    }
    const hint = suggestion === null ? "" : ` Did you mean ${suggestion}?`
    return result(
      group,
      input,
      details,
      undefined,
      "DOMAIN_NOT_ALLOWED",
      `${host} is not on the target group's domain lists or patterns.${hint}`
    )
  }
  // A host judged by the group whose verdict its facts keep the fields of, and of the role the verdict judged
  // (its matched domain's, as most hosts below it): the verdict's own answer, read from the facts
  // (`keptVerdictFields`). The role is found as below.
  const kept = context.remembersVerdicts ? keptVerdictFields(facts, group) : null
  if (
    kept !== null &&
    (host.length === matchedDomain.length ||
      roleFactOf(host, matchedDomain, kept.verdictRole!.role) === kept.verdictRole)
  ) {
    if (kept.verdictRoleRefused) {
      const details = detailsAfterPolicy(format, emailPolicy, customList)
      return roleRefused(group, input, details, host, facts.match as RoleMatch, kept.verdictRole!)
    }
    const details: Details = {
      format,
      domain: kept.verdictDomain!,
      geography: kept.verdictGeography!,
      organizationType: kept.verdictOrganizationType!,
      customList,
      emailPolicy: facts.abused ? policyDetail(kept.verdictAbusedRejected, flags | ABUSED, imitates) : emailPolicy
    }
    return result(group, input, details, matchedDomain, kept.verdictReasonCode, kept.verdictReason)
  }
  // The match is the host's own facts.match: its verdict is remembered beside those facts (see `EngineContext`).
  const verdict = context.remembersVerdicts
    ? context.hosts.memo(facts, group, judgeHost)
    : judgeHost(group, facts, false)
  if (context.remembersVerdicts) keepVerdictFields(facts, group, verdict)
  // Most hosts are their matched domain and serve its role, which the verdict holds. A host below it is
  // judged against the matched domain's own role as the verdict holds it too (the listed entry's, or mixed
  // under a suffix rule), so the match and its entry are not read again: for these hosts that was two more
  // cache misses, the most of `hostRoleOf`'s cost (measured: bench/library.ts).
  const role = host.length === matchedDomain.length ? verdict.role : roleFactOf(host, matchedDomain, verdict.role.role)
  if (role === verdict.role ? verdict.roleRefused : !group.institutions!.acceptsRoleFact[role.index]) {
    return roleRefused(
      group,
      input,
      detailsAfterPolicy(format, emailPolicy, customList),
      host,
      facts.match as RoleMatch,
      role
    )
  }
  const details: Details = {
    format,
    domain: role === verdict.role ? verdict.domain : domainWithRole(verdict, role),
    geography: verdict.geography,
    organizationType: verdict.organizationType,
    customList,
    emailPolicy: facts.abused ? policyDetail(verdict.abusedRejected, flags | ABUSED, imitates) : emailPolicy
  }
  return result(group, input, details, matchedDomain, verdict.reasonCode, verdict.reason)
}
