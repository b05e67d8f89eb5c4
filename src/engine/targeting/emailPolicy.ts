/**
 * The email-policy check of a target group (`criteria.email`): which flags
 * an email raises (disposable, free mail, role account, look-alike, abused
 * domain), the group's refusal of them, and the detail that reports them.
 * The flags are bits, so that every combination's detail is built once and
 * shared.
 */
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { EmailPolicyDetail, EmailPolicyFlags } from "../../domain/ValidationResult.ts"
import type { ParsedEmail } from "../email/parseEmail.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { HostFacts } from "./HostDirectory.ts"

const DISPOSABLE = 1
const FREE_MAIL = 2
export const ROLE_ACCOUNT = 4
export const CONFUSABLE = 8
export const ABUSED = 16

const flagsOf = (bits: number): EmailPolicyFlags =>
  Object.freeze({
    disposable: (bits & DISPOSABLE) !== 0,
    freeMail: (bits & FREE_MAIL) !== 0,
    roleAccount: (bits & ROLE_ACCOUNT) !== 0,
    confusable: (bits & CONFUSABLE) !== 0,
    abused: (bits & ABUSED) !== 0
  })
const sharedPolicyDetails = (status: "passed" | "failed"): ReadonlyArray<EmailPolicyDetail> =>
  Array.from({ length: 32 }, (_, bits) => Object.freeze({ status, flags: flagsOf(bits) }))
const policyPassed = sharedPolicyDetails("passed")
const policyFailed = sharedPolicyDetails("failed")

/** The detail of the flags `bits` (and a look-alike's original), failed or passed: shared unless it names what it imitates. */
export const policyDetail = (failed: boolean, bits: number, imitates: string | null): EmailPolicyDetail =>
  imitates === null
    ? (failed ? policyFailed : policyPassed)[bits]!
    : { status: failed ? "failed" : "passed", flags: flagsOf(bits), imitates }

/** The flags an email's host raises by itself (disposable, free mail). */
export const hostPolicyFlags = (facts: HostFacts): number =>
  (facts.disposable ? DISPOSABLE : 0) | (facts.freeMail ? FREE_MAIL : 0)

/** The group's refusal of an email for the flags it raised, if any: the first in the order below. */
export const policyFailure = (
  group: CompiledTargetGroup,
  email: ParsedEmail,
  facts: HostFacts,
  flags: number,
  imitates: string | null
): readonly [ReasonCode, string] | undefined => {
  const policy = group.policy
  if ((flags & DISPOSABLE) !== 0 && policy.rejectDisposable)
    return ["DISPOSABLE_EMAIL", `${email.domain} is a disposable email service.`]
  if ((flags & CONFUSABLE) !== 0 && policy.rejectConfusable)
    return [
      "CONFUSABLE_DOMAIN",
      imitates === null
        ? `${email.unicodeDomain} mixes writing systems in a way used to imitate other domains.`
        : `${email.unicodeDomain} imitates ${imitates} with look-alike characters.`
    ]
  if ((flags & ROLE_ACCOUNT) !== 0 && policy.rejectRoleAccounts)
    return ["ROLE_ACCOUNT", `"${email.localPart}" is a role account, not a personal address.`]
  // The free-mail list names a few institutions' own domains (nus.edu.sg): a listed institution is never free mail.
  if ((flags & FREE_MAIL) !== 0 && policy.rejectFreeMail && facts.matchKind !== "listed")
    return ["FREE_MAIL_PROVIDER", `${email.domain} is a free email provider, not an institution.`]
  return undefined
}
