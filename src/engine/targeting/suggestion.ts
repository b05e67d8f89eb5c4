/**
 * "Did you mean …?" for hosts that resolve to nothing. Validation asks only
 * when the host's top-level label is not a real ICANN TLD (`mit.ed`,
 * `ox.ac.ku`), so a plain non-academic domain such as `gmail.com` costs one
 * memoised check and no search. Candidates are listed institution domains
 * and the common mail providers — not the whole free-mail list, which holds
 * typo domains such as `gmial.com` itself.
 */
import { parse } from "tldts"
import type { InstitutionTable } from "../institutions/InstitutionTable.ts"
import { KnownDomains } from "../policy/KnownDomains.ts"
import { suggestDomain } from "../policy/typo.ts"
import type { EngineContext } from "./EngineContext.ts"

/** TLD label → is it an ICANN top-level domain. Bounded: garbage input cannot grow it without limit. */
const knownTlds = new Map<string, boolean>()
const maxRemembered = 4096

const isIcannTld = (host: string): boolean => {
  const tld = host.slice(host.lastIndexOf(".") + 1)
  let known = knownTlds.get(tld)
  if (known === undefined) {
    known = parse(`x.${tld}`).isIcann === true
    if (knownTlds.size >= maxRemembered) knownTlds.clear()
    knownTlds.set(tld, known)
  }
  return known
}

/** Built on the first suggestion for a table (about 10 ms), then reused for as long as the table lives. */
const candidates = new WeakMap<InstitutionTable, KnownDomains>()

const knownDomains = (context: EngineContext): KnownDomains => {
  let known = candidates.get(context.index)
  if (known === undefined) {
    const domains: Array<string> = [...context.lists.commonMailProviders()]
    for (const [domain, entry] of context.index.entries) if (entry.kind === "listed") domains.push(domain)
    known = new KnownDomains(domains)
    candidates.set(context.index, known)
  }
  return known
}

export const suggestionFor = (context: EngineContext, host: string): string | null =>
  isIcannTld(host) ? null : suggestDomain(host, knownDomains(context))
