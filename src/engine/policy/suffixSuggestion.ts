/**
 * The suffix half of "did you mean": when a domain's suffix is not on the
 * public suffix list (`stanford.eud`, `ox.ac.ku`), try the last one to three
 * labels replaced by a common academic or mail suffix within two edits, and
 * keep the closest replacement the caller knows. A known suffix is left
 * alone: `mit.com` is somebody else's domain, not a typo of `mit.edu`.
 */
import { parse } from "tldts"
import { damerauDistance } from "./editDistance.ts"

export type IsKnownDomain = (domain: string) => boolean

const maxSuffixLabels = 3
const maxSuffixDistance = 2

/**
 * Suffixes a mistyped one is compared with, in preference order (the earlier
 * wins a tie): academic suffixes by how many institutions use them, then the
 * generic and country TLDs of mail providers.
 */
export const commonSuffixes: ReadonlyArray<string> = [
  "edu",
  "ac.uk",
  "edu.au",
  "edu.cn",
  "ac.jp",
  "ac.in",
  "edu.in",
  "edu.br",
  "edu.mx",
  "edu.tr",
  "ac.kr",
  "edu.pk",
  "edu.my",
  "edu.sg",
  "edu.hk",
  "edu.tw",
  "ac.nz",
  "ac.za",
  "ac.il",
  "ac.at",
  "ac.th",
  "ac.id",
  "edu.pl",
  "edu.co",
  "edu.ar",
  "com",
  "org",
  "net",
  "co.uk",
  "com.au",
  "com.br",
  "co.jp",
  "de",
  "fr",
  "uk",
  "it",
  "es",
  "nl",
  "ca",
  "au",
  "ch",
  "se",
  "be",
  "at",
  "dk",
  "no",
  "fi",
  "ie",
  "pl",
  "ru",
  "jp",
  "cn",
  "in",
  "br",
  "us",
  "nz"
]

/** When the suffix is unknown (`stanford.eud`), the known domain with the closest common suffix instead. */
export const closestBySuffix = (domain: string, isKnown: IsKnownDomain): string | null => {
  if (parse(domain).isIcann === true) return null
  let best: string | null = null
  let bestDistance = maxSuffixDistance + 1
  // Walk tails of 1..3 labels from the right; `cut` is the dot before the tail.
  let cut = domain.length
  for (let labels = 1; labels <= maxSuffixLabels; labels++) {
    cut = domain.lastIndexOf(".", cut - 1)
    if (cut <= 0) break
    const head = domain.slice(0, cut + 1)
    const tail = domain.slice(cut + 1)
    // Common suffixes are in preference order: on equal distance, the earlier one wins.
    for (const suffix of commonSuffixes) {
      const distance = damerauDistance(tail, suffix, bestDistance - 1)
      if (distance < bestDistance && isKnown(head + suffix)) {
        best = head + suffix
        bestDistance = distance
      }
    }
  }
  return best
}
