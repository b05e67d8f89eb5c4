/**
 * Internationalised domains: UTS-46 conversion of Unicode domains with `domainToASCII` from
 * `node:url`, and verification of `xn--` labels (A-labels) by decoding them and converting back.
 * This is the slow path; plain ASCII domains never get here.
 */
import { domainToASCII } from "node:url"
import { CHAR_CLASS, CHAR_DOT, CHAR_HYPHEN, LDH } from "./charTable.ts"
import { badDomainChar, HAS_A_LABEL, HAS_UPPER, NON_ASCII_DOMAIN, scanAsciiDomain } from "./domain.ts"
import type { DomainParse } from "./parseTypes.ts"
import { decodePunycode } from "./punycode.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"

const hasNonAscii = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return true
  return false
}

/**
 * Checks every `xn--` label of a lower-case ASCII domain: it must decode as Punycode to a label
 * with at least one non-ASCII character, must not start or end with a hyphen, and must be
 * exactly what UTS-46 makes of the decoded label (this rejects disallowed characters, text that
 * is not NFC, and labels that are not in their lower-case form). Returns the Unicode domain.
 */
export const verifyALabels = (ascii: string): FormatFailure | string => {
  const labels = ascii.split(".")
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i]!
    if (!label.startsWith("xn--")) continue
    const decoded = decodePunycode(label.slice(4))
    if (decoded === undefined || !hasNonAscii(decoded)) return FAIL.badALabel
    if (decoded.charCodeAt(0) === CHAR_HYPHEN || decoded.charCodeAt(decoded.length - 1) === CHAR_HYPHEN) {
      return FAIL.labelHyphen
    }
    if (domainToASCII(decoded) !== label) return FAIL.badALabel
    labels[i] = decoded
  }
  return labels.join(".")
}

const SPACE = /\p{Z}/u
/** Format characters other than the joiners ZWNJ and ZWJ, which UTS-46 checks in context. */
const INVISIBLE = /(?![\u200c\u200d])\p{Cf}/u

/** Screens a raw Unicode domain before handing it to UTS-46 processing. */
const screenUnicodeDomain = (raw: string): FormatFailure | undefined => {
  let lastDot = -1
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c < 0x80) {
      if (c === CHAR_DOT) lastDot = i
      else if ((CHAR_CLASS[c]! & LDH) === 0) return badDomainChar(c)
    } else if (c <= 0x9f) {
      return FAIL.controlChar
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = raw.charCodeAt(i + 1)
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return FAIL.idnMalformed
      i++
    }
  }
  if (SPACE.test(raw)) return FAIL.domainWhitespace
  if (INVISIBLE.test(raw)) return FAIL.domainInvisible
  // `domainToASCII` treats a numeric last label as an IPv4 address and fails without a reason.
  if (lastDot >= 0 && lastDot < raw.length - 1) {
    let digits = true
    for (let i = lastDot + 1; i < raw.length && digits; i++) {
      const c = raw.charCodeAt(i)
      digits = c >= 0x30 && c <= 0x39
    }
    if (digits) return FAIL.numericTld
  }
  return undefined
}

/** Converts and checks a domain that contains non-ASCII characters. */
export const resolveUnicodeDomain = (raw: string): DomainParse => {
  const screened = screenUnicodeDomain(raw)
  if (screened !== undefined) return screened
  const ascii = domainToASCII(raw)
  if (ascii === "") return FAIL.idnRejected
  const flags = scanAsciiDomain(ascii, 0, ascii.length)
  if (typeof flags !== "number") return flags
  if ((flags & (HAS_UPPER | NON_ASCII_DOMAIN)) !== 0) return FAIL.idnRejected
  const unicodeDomain = verifyALabels(ascii)
  if (typeof unicodeDomain !== "string") return unicodeDomain
  return { ok: true, domain: ascii, unicodeDomain, isInternational: true }
}

/**
 * Results of the slow path by raw domain text. Sign-ups cluster on few domains, and UTS-46
 * processing costs microseconds, so a small memo pays; it is emptied when full rather than kept
 * in LRU order, which bounds memory at no per-hit cost. Entries are frozen because `parseDomain`
 * hands them out as they are.
 */
const slowPathMemo = new Map<string, DomainParse>()
const MEMO_LIMIT = 2048

const memoised = (raw: string, compute: (raw: string) => DomainParse): DomainParse => {
  const known = slowPathMemo.get(raw)
  if (known !== undefined) return known
  const result = Object.freeze(compute(raw))
  if (slowPathMemo.size >= MEMO_LIMIT) slowPathMemo.clear()
  slowPathMemo.set(raw, result)
  return result
}

/** An ASCII domain with at least one `xn--` label. */
const resolveALabelDomain = (raw: string): DomainParse => {
  const domain = raw.toLowerCase()
  const unicodeDomain = verifyALabels(domain)
  if (typeof unicodeDomain !== "string") return unicodeDomain
  return { ok: true, domain, unicodeDomain, isInternational: true }
}

/**
 * Checks `s[start, end)` as a domain name (no IP literal) and returns its ASCII and Unicode
 * forms. Used by `parseDomain` and by `parseEmail` once the domain is known not to be plain
 * ASCII without A-labels.
 */
export const resolveDomain = (s: string, start: number, end: number): DomainParse => {
  const flags = scanAsciiDomain(s, start, end)
  if (typeof flags !== "number") return flags
  const raw = start === 0 && end === s.length ? s : s.slice(start, end)
  if ((flags & NON_ASCII_DOMAIN) !== 0) return memoised(raw, resolveUnicodeDomain)
  if ((flags & HAS_A_LABEL) !== 0) return memoised(raw, resolveALabelDomain)
  const domain = (flags & HAS_UPPER) !== 0 ? raw.toLowerCase() : raw
  return { ok: true, domain, unicodeDomain: domain, isInternational: false }
}
