/**
 * Special-use and reserved domain names, which no one can be given a
 * mailbox under: the IANA Special-Use Domain Names registry and the RFCs
 * behind it — `test`, `example`, `invalid`, `localhost` (RFC 2606, RFC
 * 6761), `local` (RFC 6762), `onion` (RFC 7686), `home.arpa` (RFC 8375)
 * and `arpa` as a whole (RFC 3172: infrastructure only), `alt` (RFC 9476)
 * — plus `internal` (reserved by ICANN for private use, 2024), the names
 * ICANN will never delegate because of name collisions (`corp`, `home`,
 * `mail`, 2018), the private-use names RFC 6762 appendix G reports in wide
 * use (`lan`, `intranet`, `private`, `localdomain`), and the second-level
 * examples IANA reserves (`example.com`, `.net`, `.org`, `.edu`).
 */

const reservedTopLevel = new Set([
  ...["test", "example", "invalid", "localhost", "local", "onion", "arpa", "alt", "internal"],
  ...["corp", "home", "mail", "lan", "intranet", "private", "localdomain"]
])

/** The top-level labels whose second-level `example` is reserved (`example.com`). */
const exampleParents = new Set(["com", "net", "org", "edu"])

/** Per label length, a bit per first letter (a-z) of the reserved names that long, so most domains are answered without a slice. */
const firstLetters = new Uint32Array(64)
for (const name of reservedTopLevel) firstLetters[name.length]! |= 1 << (name.charCodeAt(0) - 97)

/**
 * Whether the domain whose last label is `s[tldStart, end)` and whose
 * label before it starts at `previousStart` may be a reserved name, from
 * lengths and first letters alone (any case): the scanner asks this of
 * every domain, so that `isSpecialUseDomain` runs only for the few that
 * may be (measured: bench/library.ts).
 */
export const maybeSpecialUse = (s: string, previousStart: number, tldStart: number, end: number): boolean => {
  const length = end - tldStart
  const first = (s.charCodeAt(tldStart) | 0x20) - 97
  if (length < 64 && first >= 0 && first < 26 && (firstLetters[length]! & (1 << first)) !== 0) return true
  return length === 3 && tldStart - previousStart === 8 && (s.charCodeAt(previousStart) | 0x20) === 101
}

/** True when an ASCII lower-case domain is, or is under, a special-use or reserved name. */
export const isSpecialUseDomain = (domain: string): boolean => {
  const dot = domain.lastIndexOf(".")
  const length = domain.length - dot - 1
  const first = domain.charCodeAt(dot + 1) - 97
  if (length < 64 && first >= 0 && first < 26 && (firstLetters[length]! & (1 << first)) !== 0) {
    if (reservedTopLevel.has(domain.slice(dot + 1))) return true
  }
  return (
    length === 3 &&
    dot >= 7 &&
    domain.charCodeAt(dot - 1) === 101 &&
    domain.startsWith("example.", dot - 7) &&
    (dot === 7 || domain.charCodeAt(dot - 8) === 46) &&
    exampleParents.has(domain.slice(dot + 1))
  )
}
