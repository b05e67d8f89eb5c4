/**
 * The second half of parsing an address: the scanned local part's finish (octet limit, NFC), the
 * domain after the @ (host name or, with the option, IP literal), the overall length limit, and
 * the assembled `ParsedEmail` (unwrapped: `AddressParse`).
 */
import { CHAR_OPEN_BRACKET } from "./charTable.ts"
import { HAS_UPPER, MAYBE_SPECIAL_USE, scanAsciiDomain } from "./domain.ts"
import { resolveDomain } from "./idn.ts"
import { parseIpLiteral } from "./ipLiteral.ts"
import { finishUnicodeLocal, MAX_LOCAL_OCTETS } from "./localPart.ts"
import type { AddressParse, EmailSyntaxOptions } from "./parseTypes.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"
import { isSpecialUseDomain } from "./specialUse.ts"

/** RFC 5321 section 4.5.3.1.3 path limit (256) less the angle brackets. */
export const MAX_ADDRESS_OCTETS = 254

/**
 * Completes an address whose local part `input[0, at)` has passed its scan: one that is plain
 * ASCII (`ascii`) as it is, another vetted and normalised to NFC (`finishUnicodeLocal`, which
 * re-checks the normalised text with `rescan`); either within the local part's octet limit.
 */
export const completeLocalThenAddress = (
  input: string,
  at: number,
  ascii: boolean,
  rescan: (s: string, start: number, end: number) => FormatFailure | number,
  options: EmailSyntaxOptions | undefined
): AddressParse => {
  if (ascii) {
    if (at > MAX_LOCAL_OCTETS) return FAIL.localTooLong
    return completeAddress(input, at, input.slice(0, at), at, true, options)
  }
  const raw = input.slice(0, at)
  const local = finishUnicodeLocal(raw, rescan)
  if ("ok" in local) return local
  if (local.octets > MAX_LOCAL_OCTETS) return FAIL.localTooLong
  return completeAddress(input, at, local.text, local.octets, local.text === raw, options)
}

/**
 * Checks the domain `input[at + 1, end)` of an address whose local part (before index `at`) is
 * already checked, and builds the result. `sameLocal` tells that `localPart` is exactly
 * `input.slice(0, at)`, so that an address needing no normalisation can reuse `input`.
 */
export const completeAddress = (
  input: string,
  at: number,
  localPart: string,
  localOctets: number,
  sameLocal: boolean,
  options: EmailSyntaxOptions | undefined
): AddressParse => {
  const len = input.length
  const domainStart = at + 1
  let domain: string
  let unicodeDomain: string
  let isInternational = false
  let isIpLiteral = false
  let sameDomain = false
  let maybeSpecial = true
  if (input.charCodeAt(domainStart) === CHAR_OPEN_BRACKET) {
    if (options?.allowIpLiteral !== true) return FAIL.ipLiteralNotAllowed
    const literal = parseIpLiteral(input, domainStart, len)
    if (typeof literal !== "string") return literal
    domain = unicodeDomain = literal
    isIpLiteral = true
  } else {
    const scanned = scanAsciiDomain(input, domainStart, len)
    if (typeof scanned !== "number") return scanned
    const flags = scanned & ~MAYBE_SPECIAL_USE
    maybeSpecial = (scanned & MAYBE_SPECIAL_USE) !== 0
    if (flags === 0) {
      domain = unicodeDomain = input.slice(domainStart)
      sameDomain = true
    } else if (flags === HAS_UPPER) {
      domain = unicodeDomain = input.slice(domainStart).toLowerCase()
    } else {
      const resolved = resolveDomain(input, domainStart, len)
      if (!resolved.ok) return resolved
      domain = resolved.domain
      unicodeDomain = resolved.unicodeDomain
      isInternational = resolved.isInternational
      maybeSpecial = true
    }
  }
  if (localOctets + 1 + domain.length > MAX_ADDRESS_OCTETS) return FAIL.addressTooLong
  if (maybeSpecial && !isIpLiteral && options?.allowSpecialUseDomains !== true && isSpecialUseDomain(domain)) {
    return FAIL.specialUse
  }
  const address = sameLocal && sameDomain ? input : `${localPart}@${domain}`
  return { localPart, domain, unicodeDomain, isInternational, isIpLiteral, address }
}
