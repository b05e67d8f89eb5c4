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

const reservedSecondLevel = new Set(["example.com", "example.net", "example.org", "example.edu"])

/** True when an ASCII lower-case domain is, or is under, a special-use or reserved name. */
export const isSpecialUseDomain = (domain: string): boolean => {
  const dot = domain.lastIndexOf(".")
  if (reservedTopLevel.has(domain.slice(dot + 1))) return true
  return dot > 0 && reservedSecondLevel.has(domain.slice(domain.lastIndexOf(".", dot - 1) + 1))
}
