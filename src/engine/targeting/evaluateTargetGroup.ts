/**
 * The per-email hot path: one email against one compiled target group,
 * producing the seed's validation result with a detail per criterion type.
 * Synchronous, no effect overhead; it answers as soon as the answer is known
 * and builds reason strings only for failures. Checks run in a fixed order
 * (format, email policy, lists and index, type, country, region) and the
 * first failure gives `reason` and `reasonCode`.
 */
import type { Institution } from "../../domain/Institution.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type {
  CustomListDetail,
  EmailPolicyFlags,
  ValidationDetails,
  ValidationResult
} from "../../domain/ValidationResult.ts"
import { type ParsedEmail, parseEmail } from "../email/parseEmail.ts"
import type { HostMatch } from "../institutions/InstitutionTable.ts"
import { assessConfusable } from "../policy/confusable.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"
import { judgeListed, judgeSuffixRule } from "./judgeInstitution.ts"
import { resolveHost } from "./resolveHost.ts"
import { suggestionFor } from "./suggestion.ts"

const skipped = { status: "skipped" } as const
const passed = { status: "passed" } as const
const failed = { status: "failed" } as const
const noMatch: HostMatch = { kind: "none" }

type Details = { -readonly [K in keyof ValidationDetails]: ValidationDetails[K] }
type Flags = { -readonly [K in keyof EmailPolicyFlags]: boolean }

const result = (
  group: CompiledTargetGroup,
  email: string,
  details: Details,
  matchedDomain: string | undefined,
  failure?: readonly [ReasonCode, string]
): ValidationResult => {
  const out: { -readonly [K in keyof ValidationResult]: ValidationResult[K] } = {
    isValid: failure === undefined,
    email,
    targetGroup: group.ref,
    validationDetails: details
  }
  if (matchedDomain !== undefined) out.matchedDomain = matchedDomain
  if (failure !== undefined) {
    out.reasonCode = failure[0]
    out.reason = failure[1]
  }
  return out
}

const emptyDetails = (): Details => ({
  format: skipped,
  domain: skipped,
  geography: skipped,
  organizationType: skipped,
  customList: skipped,
  emailPolicy: skipped
})

const policyFailure = (
  group: CompiledTargetGroup,
  context: EngineContext,
  email: ParsedEmail,
  flags: EmailPolicyFlags,
  imitates: string | null
): readonly [ReasonCode, string] | undefined => {
  const policy = group.policy
  if (flags.disposable && policy.rejectDisposable)
    return ["DISPOSABLE_EMAIL", `${email.domain} is a disposable email service.`]
  if (flags.confusable && policy.rejectConfusable)
    return [
      "CONFUSABLE_DOMAIN",
      imitates === null
        ? `${email.unicodeDomain} mixes writing systems in a way used to imitate other domains.`
        : `${email.unicodeDomain} imitates ${imitates} with look-alike characters.`
    ]
  if (flags.roleAccount && policy.rejectRoleAccounts)
    return ["ROLE_ACCOUNT", `"${email.localPart}" is a role account, not a personal address.`]
  // The free-mail list names a few institutions' own domains (nus.edu.sg): a listed institution is never free mail.
  if (flags.freeMail && policy.rejectFreeMail && context.index.lookup(email.domain).kind !== "listed")
    return ["FREE_MAIL_PROVIDER", `${email.domain} is a free email provider, not an institution.`]
  return undefined
}

const describe = (institution: Institution | null, matchedDomain: string): string =>
  institution?.name ?? `the institution at ${matchedDomain}`

export const evaluateTargetGroup = (
  group: CompiledTargetGroup,
  context: EngineContext,
  input: string
): ValidationResult => {
  const details = emptyDetails()
  const parsed = parseEmail(input, group.syntax)
  if (!parsed.ok) {
    details.format = { status: "failed", code: parsed.reason, message: parsed.message }
    return result(group, input, details, undefined, [
      "INVALID_EMAIL_FORMAT",
      `The email address is not valid: ${parsed.message}`
    ])
  }
  const email = parsed.email
  const host = email.domain
  details.format = { status: "passed", normalized: email.address }

  const lists = context.lists
  let imitates: string | null = null
  let confusable = false
  if (email.isInternational) {
    const assessment = assessConfusable(host, email.unicodeDomain)
    imitates = assessment.imitates
    confusable = assessment.mixedScript || imitates !== null
  }
  const flags: Flags = {
    disposable: lists.isDisposable(host),
    freeMail: lists.isFreeMail(host),
    // Checked only when the group rejects role accounts: it is the costliest flag (measured: bench/library.ts).
    roleAccount: group.policy.rejectRoleAccounts && lists.isRoleAccount(email.localPart),
    confusable,
    abused: false
  }
  const policyFailed = policyFailure(group, context, email, flags, imitates)
  details.emailPolicy =
    imitates === null
      ? { status: policyFailed ? "failed" : "passed", flags }
      : { status: policyFailed ? "failed" : "passed", flags, imitates }
  if (policyFailed !== undefined) return result(group, input, details, undefined, policyFailed)

  const resolution = resolveHost(group, context.index, host)
  if (group.hasCustomLists) details.customList = passed
  if (resolution.kind === "custom") {
    const customList: CustomListDetail = {
      status: resolution.list.endsWith("deny") ? "failed" : "passed",
      list: resolution.list,
      entry: resolution.entry
    }
    details.customList = customList
    if (customList.status === "failed") {
      return result(group, input, details, undefined, [
        "DOMAIN_DENIED",
        `${host} is denied by the target group's ${resolution.list} entry "${resolution.entry}".`
      ])
    }
    return result(group, input, details, resolution.list === "domains.allow" ? resolution.entry : host)
  }
  // A look-alike of another domain (`mіt.edu`) never counts as academic by its suffix alone.
  const match = resolution.index.kind === "suffix" && imitates !== null ? noMatch : resolution.index
  if (resolution.kind === "alumni" && match.kind !== "none" && match.kind !== "deny") {
    const institution = match.kind === "listed" ? match.entry.institution : null
    details.domain = {
      status: "failed",
      domain: host,
      matchedDomain: match.matchedDomain,
      rule: "alumni-subdomain",
      institution: match.kind === "listed" ? match.entry.summary : match.rule.summary
    }
    return result(group, input, details, undefined, [
      "INSTITUTION_DENIED",
      `${host} is an alumni service of ${describe(institution, match.matchedDomain)}, not a student address.`
    ])
  }
  if (match.kind === "deny") {
    details.domain = { status: "failed", domain: host, matchedDomain: match.matchedDomain, rule: "stoplist" }
    return result(group, input, details, undefined, [
      "INSTITUTION_DENIED",
      `${match.matchedDomain} is not an institution's student domain (it is on the ${match.entry.source.dataset} stoplist).`
    ])
  }
  if (match.kind === "none") {
    if (group.hasCustomLists) details.customList = failed
    const suggestion = suggestionFor(context, host)
    const hint = suggestion === null ? "" : ` Did you mean ${suggestion}?`
    if (group.institutions !== null) {
      details.domain =
        suggestion === null ? { status: "failed", domain: host } : { status: "failed", domain: host, suggestion }
      return result(group, input, details, undefined, [
        "NOT_AN_INSTITUTION",
        `${host} is not a known academic institution${group.hasCustomLists ? " nor on the target group's lists" : ""}.${hint}`
      ])
    }
    return result(group, input, details, undefined, [
      "DOMAIN_NOT_ALLOWED",
      `${host} is not on the target group's domain lists or patterns.${hint}`
    ])
  }
  const verdict =
    match.kind === "listed" ? judgeListed(group, match.entry) : judgeSuffixRule(group, match.rule, match.matchedDomain)
  flags.abused = match.kind === "listed" && match.entry.abused
  details.domain = verdict.domain
  details.organizationType = verdict.organizationType
  details.geography = verdict.geography
  if (verdict.abusedRejected) details.emailPolicy = { ...details.emailPolicy, status: "failed" }
  return result(group, input, details, match.matchedDomain, verdict.failure)
}
