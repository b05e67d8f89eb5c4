/**
 * "Did you mean …?" for a mistyped email domain: `gmial.com` → `gmail.com`,
 * `mit.ed` → `mit.edu`, `ox.ac.ku` → `ox.ac.uk`, `harvard.edu.` →
 * `harvard.edu`.
 *
 * General rules, no list of typos; every suggestion is one the caller knows
 * (institution domains, common mail providers):
 * 1. tidy-ups: surrounding spaces, leading/trailing and doubled dots;
 * 2. one edit (Damerau: swap two adjacent characters, delete one, insert or
 *    substitute one of `[a-z0-9.-]`) anywhere in the domain — ranked by how
 *    few alternatives each kind has, so a hit means more: swap, delete,
 *    insert, substitute; ties go to the alphabetically first;
 * 3. when the suffix is not on the public suffix list (`eud`, `ku`): the last
 *    one to three labels replaced by the closest common academic or mail
 *    suffix within two edits.
 *
 * Guarantees: deterministic; never throws on any string (over-long input is
 * answered `null` at once); `null` when the domain is already known or
 * nothing is close. A suggestion is a hint for a person to confirm, never a
 * correction to apply. When nothing is close every one-edit variant is
 * tested (~77 per character): with a `KnownDomains` index those tests are
 * hash arithmetic rather than strings (figures there).
 */
import type { KnownDomains } from "./KnownDomains.ts"
import { closestBySuffix, type IsKnownDomain } from "./suffixSuggestion.ts"

export type { IsKnownDomain } from "./suffixSuggestion.ts"

const maxDomainLength = 253
const none = -1
const dot = 0x2e
const hyphen = 0x2d
const alphabet: ReadonlyArray<number> = Array.from("abcdefghijklmnopqrstuvwxyz0123456789-.", (char) =>
  char.charCodeAt(0)
)

/** Removes spaces and stray dots a person types around or inside a domain by accident. */
const tidy = (domain: string): string =>
  domain
    .trim()
    .replace(/\.{2,}/g, ".")
    .replace(/^\.+|\.+$/g, "")

const codeAt = (domain: string, index: number): number =>
  index >= 0 && index < domain.length ? domain.charCodeAt(index) : none

const isSeparator = (code: number): boolean => code === dot || code === hyphen

/** Whether two characters may stand side by side in a domain: a dot never touches a dot or a hyphen. */
const canJoin = (left: number, right: number): boolean =>
  !((left === dot && isSeparator(right)) || (right === dot && isSeparator(left)))

/** Whether `code` may stand between `before` and `after` (`none` at either end of the domain). */
const fits = (code: number, before: number, after: number): boolean =>
  (before === none ? !isSeparator(code) : canJoin(before, code)) &&
  (after === none ? !isSeparator(code) : canJoin(code, after))

/**
 * Tests one-edit variants of a domain: `knownVariant(from, to, first,
 * second)` answers the domain with `[from, to)` replaced by the characters
 * `first` and `second` (char codes, or -1 for none) when that variant is
 * known, else `null`. `KnownDomains` is one (hash arithmetic, strings only for
 * hits); `PredicateProbe` adapts a plain predicate.
 */
interface VariantProbe {
  knownVariant(from: number, to: number, first: number, second: number): string | null
}

/** Builds every variant as a string and asks the predicate (~100 ns each: V8 must flatten and hash it). */
class PredicateProbe implements VariantProbe {
  readonly #domain: string
  readonly #isKnown: IsKnownDomain
  constructor(domain: string, isKnown: IsKnownDomain) {
    this.#domain = domain
    this.#isKnown = isKnown
  }
  knownVariant(from: number, to: number, first: number, second: number): string | null {
    const middle =
      first === none ? "" : second === none ? String.fromCharCode(first) : String.fromCharCode(first, second)
    const variant = this.#domain.slice(0, from) + middle + this.#domain.slice(to)
    return variant.includes(".") && this.#isKnown(variant) ? variant : null
  }
}

/** The alphabetically first of two candidates, either possibly `null`. */
const earlier = (best: string | null, candidate: string | null): string | null =>
  candidate === null ? best : best === null || candidate < best ? candidate : best

/** The best known domain one edit away, trying the kinds of edit in rank order. */
const closestByOneEdit = (domain: string, probe: VariantProbe): string | null => {
  const n = domain.length
  let best: string | null = null
  for (let i = 0; i + 1 < n; i++) {
    const a = domain.charCodeAt(i)
    const b = domain.charCodeAt(i + 1)
    if (a !== b && fits(b, codeAt(domain, i - 1), a) && fits(a, b, codeAt(domain, i + 2))) {
      best = earlier(best, probe.knownVariant(i, i + 2, b, a))
    }
  }
  if (best !== null) return best

  for (let i = 0; i < n; i++) {
    const before = codeAt(domain, i - 1)
    const after = codeAt(domain, i + 1)
    if (domain.charCodeAt(i) === before) continue // deleting either of a doubled character gives the same result
    const joins =
      before === none
        ? after !== none && !isSeparator(after)
        : after === none
          ? !isSeparator(before)
          : canJoin(before, after)
    if (joins) best = earlier(best, probe.knownVariant(i, i + 1, none, none))
  }
  if (best !== null) return best

  for (let i = 0; i <= n; i++) {
    const before = codeAt(domain, i - 1)
    const after = codeAt(domain, i)
    for (const code of alphabet) {
      // Inserting a copy of the preceding character repeats an insertion already tried one place earlier.
      if (code !== before && fits(code, before, after)) best = earlier(best, probe.knownVariant(i, i, code, none))
    }
  }
  if (best !== null) return best

  for (let i = 0; i < n; i++) {
    const before = codeAt(domain, i - 1)
    const after = codeAt(domain, i + 1)
    const current = domain.charCodeAt(i)
    for (const code of alphabet) {
      if (code !== current && fits(code, before, after)) best = earlier(best, probe.knownVariant(i, i + 1, code, none))
    }
  }
  return best
}

/**
 * A known domain the person probably meant, or `null`. `asciiDomain` is the
 * email's domain as typed (lower-case ASCII, IDNs as `xn--`). `known` decides
 * what counts as real: a `KnownDomains` index (fast: build it once per
 * dataset) or any predicate (simple, several times slower for unknown domains).
 */
export const suggestDomain = (asciiDomain: string, known: IsKnownDomain | KnownDomains): string | null => {
  if (asciiDomain.length === 0 || asciiDomain.length > maxDomainLength + 2) return null
  const isKnown: IsKnownDomain = typeof known === "function" ? known : (domain) => known.has(domain)
  const typed = asciiDomain.toLowerCase()
  const domain = tidy(typed)
  if (domain.length === 0 || domain.length > maxDomainLength) return null
  if (isKnown(domain)) return domain === typed ? null : domain
  let probe: VariantProbe
  if (typeof known === "function") probe = new PredicateProbe(domain, known)
  else {
    known.prepare(domain)
    probe = known
  }
  return closestByOneEdit(domain, probe) ?? closestBySuffix(domain, isKnown)
}
