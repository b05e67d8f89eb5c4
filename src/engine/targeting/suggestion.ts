/**
 * "Did you mean …?" for hosts that resolve to nothing. Validation asks only
 * when the host's top-level label is not a real ICANN TLD (`mit.ed`,
 * `ox.ac.ku`), so a plain non-academic domain such as `gmail.com` costs one
 * memoised check and no search.
 */
import { parse } from "tldts"
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

const isKnownDomain =
  (context: EngineContext) =>
  (domain: string): boolean =>
    context.index.entries.get(domain)?.kind === "listed" || context.lists.isFreeMail(domain)

export const suggestionFor = (context: EngineContext, host: string): string | null =>
  isIcannTld(host) ? null : suggestDomain(host, isKnownDomain(context))
