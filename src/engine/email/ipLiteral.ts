/**
 * Address literals of RFC 5321 section 4.1.3, only used with `allowIpLiteral`:
 *
 *     IPv4-address-literal = Snum 3("." Snum)                  ; Snum: 1-3 digits, 0-255
 *     IPv6-address-literal = "IPv6:" IPv6-addr
 *     IPv6-addr   = IPv6-full / IPv6-comp / IPv6v4-full / IPv6v4-comp
 *     IPv6-full   = 8 groups of 1-4 hex digits
 *     IPv6-comp   = at most 6 groups with one "::"
 *     IPv6v4-full = 6 groups ":" IPv4-address-literal
 *     IPv6v4-comp = at most 4 groups with one "::", then IPv4-address-literal
 *
 * General address literals (`[tag:content]`) have no registered tag besides IPv6 and are rejected.
 */
import { CHAR_CLASS, CHAR_CLOSE_BRACKET, CHAR_COLON, CHAR_DOT, DIGIT, HEX } from "./charTable.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"

const isDigit = (c: number): boolean => c < 0x80 && (CHAR_CLASS[c]! & DIGIT) !== 0
const isHex = (c: number): boolean => c < 0x80 && (CHAR_CLASS[c]! & HEX) !== 0

/** Parses a dotted quad in `s[start, end)`; returns it without leading zeros, or undefined. */
const parseIPv4 = (s: string, start: number, end: number): string | undefined => {
  let out = ""
  let i = start
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (s.charCodeAt(i) !== CHAR_DOT) return undefined
      i++
    }
    let value = 0
    let digits = 0
    while (i < end && isDigit(s.charCodeAt(i))) {
      value = value * 10 + (s.charCodeAt(i) - 0x30)
      digits++
      i++
    }
    if (digits === 0 || digits > 3 || value > 255) return undefined
    out += part > 0 ? `.${value}` : `${value}`
  }
  return i === end ? out : undefined
}

/** Checks `s[start, end)` against the RFC 5321 IPv6 forms (counting an embedded IPv4 as 2 groups). */
const isIPv6 = (s: string, start: number, end: number): boolean => {
  let groups = 0
  let compressed = false
  let i = start
  if (s.charCodeAt(i) === CHAR_COLON) {
    if (s.charCodeAt(i + 1) !== CHAR_COLON) return false
    compressed = true
    i += 2
    if (i === end) return true
  }
  for (;;) {
    let j = i
    while (j < end && s.charCodeAt(j) !== CHAR_COLON && s.charCodeAt(j) !== CHAR_DOT) j++
    if (j < end && s.charCodeAt(j) === CHAR_DOT) {
      if (parseIPv4(s, i, end) === undefined) return false
      groups += 2
      break
    }
    if (j === i || j - i > 4) return false
    for (let k = i; k < j; k++) if (!isHex(s.charCodeAt(k))) return false
    groups++
    if (j === end) break
    if (s.charCodeAt(j + 1) === CHAR_COLON) {
      if (compressed) return false
      compressed = true
      i = j + 2
      if (i === end) break
    } else {
      i = j + 1
      if (i === end) return false
    }
  }
  return compressed ? groups <= 6 : groups === 8
}

/**
 * Validates `s[start, end)`, which begins with `[`, as an address literal and returns its
 * normalised form: IPv4 without leading zeros, IPv6 with the tag spelt `IPv6:` and hex digits in
 * lower case.
 */
export const parseIpLiteral = (s: string, start: number, end: number): FormatFailure | string => {
  const innerStart = start + 1
  const innerEnd = end - 1
  if (innerEnd <= innerStart || s.charCodeAt(innerEnd) !== CHAR_CLOSE_BRACKET) return FAIL.invalidIpLiteral
  if (innerEnd - innerStart > 5 && s.slice(innerStart, innerStart + 5).toLowerCase() === "ipv6:") {
    if (!isIPv6(s, innerStart + 5, innerEnd)) return FAIL.invalidIpLiteral
    return `[IPv6:${s.slice(innerStart + 5, innerEnd).toLowerCase()}]`
  }
  const v4 = parseIPv4(s, innerStart, innerEnd)
  return v4 === undefined ? FAIL.invalidIpLiteral : `[${v4}]`
}
