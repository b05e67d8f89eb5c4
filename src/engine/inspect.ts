/**
 * What Campusgate knows about one email address or bare domain, independent
 * of any target group: format, the institution it belongs to (with the rule
 * and sources), and the email policy flags. The `campusgate inspect`
 * command prints this; held-out evaluations read its field names, so they
 * are stable.
 */
import { parseDomain, parseEmail } from "./email/parseEmail.ts"
import { isAlumniHost } from "./institutions/alumni.ts"
import { assessConfusable } from "./policy/confusable.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"
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
  readonly sources: ReadonlyArray<{ readonly dataset: string; readonly version?: string }>
}

export interface InspectResult {
  readonly input: string
  readonly format: { readonly valid: boolean; readonly code: string | null; readonly message?: string }
  readonly domain: string | null
  readonly institution: InspectInstitution | null
  readonly flags: {
    readonly disposable: boolean
    readonly freeMail: boolean
    readonly roleAccount: boolean
    readonly confusable: boolean
    readonly imitates: string | null
    readonly abused: boolean
    /** Why a host under an institution is not one of its student domains. */
    readonly denied: "stoplist" | "alumni-subdomain" | null
    readonly suggestion: string | null
  }
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
      flags: {
        disposable: false,
        freeMail: false,
        roleAccount: false,
        confusable: false,
        imitates: null,
        abused: false,
        denied: null,
        suggestion: null
      }
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
  let denied: InspectResult["flags"]["denied"] = match.kind === "deny" ? "stoplist" : null
  let institution: InspectInstitution | null = null
  if (match.kind === "listed" || match.kind === "suffix") {
    if (isAlumniHost(host, match.matchedDomain)) denied = "alumni-subdomain"
    else {
      const summary = match.kind === "listed" ? match.entry.summary : match.rule.summary
      institution = {
        id: summary.id,
        name: summary.name,
        country: summary.country,
        countrySource:
          match.kind === "listed" ? match.entry.institution.countrySource : summary.country ? "suffix-rule" : null,
        region: summary.region,
        type: summary.type,
        matchedDomain: match.matchedDomain,
        rule: match.kind === "listed" ? "listed-domain" : "academic-suffix",
        sources: summary.sources
      }
    }
  }
  return {
    input,
    format: { valid: true, code: null },
    domain: host,
    institution,
    flags: {
      disposable: context.lists.isDisposable(host),
      freeMail: context.lists.isFreeMail(host),
      roleAccount: email !== undefined && context.lists.isRoleAccount(email.localPart),
      confusable: confusable !== undefined && (confusable.mixedScript || confusable.imitates !== null),
      imitates: confusable?.imitates ?? null,
      abused: match.kind === "listed" && match.entry.abused,
      denied,
      suggestion: match.kind === "none" ? suggestionFor(context, host) : null
    }
  }
}
