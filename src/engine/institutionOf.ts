/**
 * Which institution an email address or host belongs to, with whom the
 * host serves: the question `GET /api/v1/institutions/{domain}` and the
 * library's `institutionOf` answer. A stoplisted host, a non-institution
 * and a host no data knows have none.
 */
import type { InstitutionMatch } from "../domain/InstitutionMatch.ts"
import { parseDomain, parseEmail } from "./email/parseEmail.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"
import { roleFactOf } from "./targeting/hostRole.ts"

/** The host of an email address or a bare domain, in its ASCII form, or undefined when it is not valid. */
export const hostOf = (input: string): string | undefined => {
  const parsed = input.includes("@") ? parseEmail(input) : parseDomain(input)
  if (!parsed.ok) return undefined
  return "email" in parsed ? parsed.email.domain : parsed.domain
}

export const institutionOf = (context: EngineContext, input: string): InstitutionMatch | undefined => {
  const host = hostOf(input)
  if (host === undefined) return undefined
  const match = context.index.lookup(host)
  if (match.kind !== "listed" && match.kind !== "suffix") return undefined
  const role = roleFactOf(host, match.matchedDomain, match.kind === "listed" ? match.entry.role : "mixed")
  const listed = match.kind === "listed" ? match.entry.institution : undefined
  return {
    domain: host,
    matchedDomain: match.matchedDomain,
    rule: match.kind === "listed" ? "listed-domain" : "academic-suffix",
    role: role.role,
    roleEvidence: role.evidence,
    institution: match.kind === "listed" ? match.entry.summary : match.rule.summary,
    domains: listed?.domains ?? [],
    names: listed?.names ?? [],
    ror: listed?.ror ?? null,
    zone:
      match.kind === "suffix"
        ? { suffix: match.rule.suffix, policy: match.rule.policy, reference: match.rule.reference }
        : null
  }
}
