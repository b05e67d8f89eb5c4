/**
 * What Campusgate knows about one email address or bare domain, independent
 * of any target group: format, the institution it belongs to (with the
 * rule, the evidence for each fact, the host's role and the sources), the
 * organisation it belongs to when that is not an institution, and the email
 * policy flags. The `campusgate inspect` command prints this; held-out
 * evaluations read its field names, so they are stable: `institution` is
 * null for any host a student offer refuses by what it is (an alumni
 * service, a stoplisted host, a non-institution).
 */
import type { Evidence, FactEvidence, HostRole } from "../domain/Institution.ts"
import type { Candidate } from "../domain/InstitutionReview.ts"
import type { NonInstitutionSummary } from "../domain/ValidationResult.ts"
import { parseDomain, parseEmail } from "./email/parseEmail.ts"
import { assessConfusable } from "./policy/confusable.ts"
import { candidateOf } from "./targeting/candidateOf.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"
import { roleFactOf } from "./targeting/hostRole.ts"
import { suggestionFor } from "./targeting/suggestion.ts"

export interface InspectInstitution {
  readonly id: string
  readonly name: string | null
  readonly country: string | null
  readonly countrySource: string | null
  readonly region: string | null
  readonly type: string
  readonly matchedDomain: string
  readonly rule: "listed-domain" | "academic-suffix"
  readonly sources: ReadonlyArray<{ readonly dataset: string; readonly version?: string; readonly date?: string }>
  readonly evidence: FactEvidence
  /** Whom the host serves (`student`, `staff`, `mixed`; an alumni host has no institution here). */
  readonly role: HostRole
  readonly roleEvidence: Evidence
  /** The ROR id, when the registry knows the institution. */
  readonly ror: string | null
  /** Under an academic zone: who may register there, and where that policy is published. */
  readonly zone: { readonly suffix: string; readonly policy: string; readonly reference: string } | null
}

export interface InspectResult {
  readonly input: string
  readonly format: { readonly valid: boolean; readonly code: string | null; readonly message?: string }
  readonly domain: string | null
  readonly institution: InspectInstitution | null
  /** The organisation the host belongs to when it is not an educational institution. */
  readonly organization: NonInstitutionSummary | null
  readonly flags: {
    readonly disposable: boolean
    readonly freeMail: boolean
    readonly roleAccount: boolean
    readonly confusable: boolean
    readonly imitates: string | null
    readonly abused: boolean
    /** Why a host is not an institution's student domain: stoplisted, an alumni service, not an institution at all. */
    readonly denied: "stoplist" | "alumni-subdomain" | "non-institution" | null
    readonly suggestion: string | null
  }
  /** For a host no source lists: how likely its domain is an institution, and why. */
  readonly candidate: Candidate | null
}

export const inspectInput = (context: EngineContext, input: string): InspectResult => {
  const isEmail = input.includes("@")
  const parsed = isEmail ? parseEmail(input) : parseDomain(input)
  if (!parsed.ok) {
    return {
      input,
      format: { valid: false, code: parsed.reason, message: parsed.message },
      domain: null,
      institution: null,
      organization: null,
      flags: {
        disposable: false,
        freeMail: false,
        roleAccount: false,
        confusable: false,
        imitates: null,
        abused: false,
        denied: null,
        suggestion: null
      },
      candidate: null
    }
  }
  const email = "email" in parsed ? parsed.email : undefined
  const host = email?.domain ?? (parsed as { domain: string }).domain
  const unicodeHost = email?.unicodeDomain ?? (parsed as { unicodeDomain: string }).unicodeDomain
  const international = email?.isInternational ?? (parsed as { isInternational: boolean }).isInternational
  const confusable = international ? assessConfusable(host, unicodeHost) : undefined
  const found = context.index.lookup(host)
  // A look-alike of another domain never counts as academic by its suffix alone.
  const match = found.kind === "suffix" && confusable?.imitates ? ({ kind: "none" } as const) : found
  let denied: InspectResult["flags"]["denied"] =
    match.kind === "deny" ? "stoplist" : match.kind === "non-institution" ? "non-institution" : null
  let institution: InspectInstitution | null = null
  if (match.kind === "listed" || match.kind === "suffix") {
    const role = roleFactOf(host, match.matchedDomain, match.kind === "listed" ? match.entry.role : "mixed")
    if (role.role === "alumni") denied = "alumni-subdomain"
    else {
      const summary = match.kind === "listed" ? match.entry.summary : match.rule.summary
      institution = {
        id: summary.id,
        name: summary.name,
        country: summary.country,
        countrySource: match.kind === "listed" ? match.entry.institution.countrySource : match.rule.countrySource,
        region: summary.region,
        type: summary.type,
        matchedDomain: match.matchedDomain,
        rule: match.kind === "listed" ? "listed-domain" : "academic-suffix",
        sources: summary.sources,
        evidence: summary.evidence,
        role: role.role,
        roleEvidence: role.evidence,
        ror: match.kind === "listed" ? match.entry.institution.ror : null,
        zone:
          match.kind === "suffix"
            ? { suffix: match.rule.suffix, policy: match.rule.policy, reference: match.rule.reference }
            : null
      }
    }
  }
  return {
    input,
    format: { valid: true, code: null },
    domain: host,
    institution,
    organization: match.kind === "non-institution" ? match.entry.organization : null,
    flags: {
      disposable: context.lists.isDisposable(host),
      freeMail: context.lists.isFreeMail(host),
      roleAccount: email !== undefined && context.lists.isRoleAccount(email.localPart),
      confusable: confusable !== undefined && (confusable.mixedScript || confusable.imitates !== null),
      imitates: confusable?.imitates ?? null,
      abused: match.kind === "listed" && match.entry.abused,
      denied,
      suggestion: match.kind === "none" ? suggestionFor(context, host) : null
    },
    candidate: match.kind === "none" ? candidateOf(context, host) : null
  }
}
