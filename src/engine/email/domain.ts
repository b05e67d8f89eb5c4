/**
 * The ASCII domain scanner: RFC 1123 LDH labels separated by single dots, at least one dot, a
 * top-level label that is not all digits and, unless it is an A-label (`xn--`), starts and ends
 * with a letter (the form of every top-level domain: RFC 1123 section 2.1, RFC 3696 section 2),
 * labels of at most 63 and a domain of at most 253 characters. Non-ASCII input is only detected here and handed on to `idn.ts`.
 */
import {
  CHAR_AT,
  CHAR_CLASS,
  CHAR_DOT,
  CHAR_HYPHEN,
  isAsciiControl,
  LOWER_OR_DIGIT,
  NON_ASCII_UNIT,
  UPPER
} from "./charTable.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"
import { maybeSpecialUse } from "./specialUse.ts"

/** Flags returned by `scanAsciiDomain` for an acceptable ASCII domain. */
export const HAS_UPPER = 1
/** A label starts with `xn--` (either case) and must be checked as an A-label. */
export const HAS_A_LABEL = 2
/** The scan stopped at a code unit from U+0080 up; nothing after it was checked. */
export const NON_ASCII_DOMAIN = 4
/** The domain may be a special-use name by its last labels' lengths and first letters (see `specialUse.ts`). */
export const MAYBE_SPECIAL_USE = 8

export const MAX_DOMAIN_LENGTH = 253
export const MAX_LABEL_LENGTH = 63

/** Why an ASCII character outside LDH and the dot is rejected in a domain. */
export const badDomainChar = (c: number): FormatFailure => {
  if (isAsciiControl(c)) return FAIL.controlChar
  if (c === 0x28 || c === 0x29) return FAIL.comments
  if (c === 0x20) return FAIL.domainWhitespace
  if (c === CHAR_AT) return FAIL.multipleAt
  return FAIL.domainInvalidChar
}

/** True when the label `s[start, end)` begins with `xn--`, in any letter case. */
const isALabelPrefix = (s: string, start: number, end: number): boolean =>
  end - start >= 4 &&
  s.charCodeAt(start + 3) === CHAR_HYPHEN &&
  s.charCodeAt(start + 2) === CHAR_HYPHEN &&
  (s.charCodeAt(start) | 0x20) === 0x78 &&
  (s.charCodeAt(start + 1) | 0x20) === 0x6e

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39

/** True when the label `s[start, end)` is all ASCII digits. */
const isNumericLabel = (s: string, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x30 || c > 0x39) return false
  }
  return true
}

/**
 * Scans `s[start, end)` as a domain. Returns a failure, or flags: `HAS_UPPER`, `HAS_A_LABEL`,
 * `MAYBE_SPECIAL_USE`, or `NON_ASCII_DOMAIN` (the caller must then use the internationalised path
 * for the whole range).
 */
export const scanAsciiDomain = (s: string, start: number, end: number): FormatFailure | number => {
  if (start >= end) return FAIL.emptyDomain
  const table = CHAR_CLASS
  let flags = 0
  let labelStart = start
  let previousStart = start
  let dots = 0
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    const kind = table[c]!
    if ((kind & LOWER_OR_DIGIT) !== 0) continue
    if (c === CHAR_DOT) {
      if (i === labelStart) return i === start ? FAIL.domainLeadingDot : FAIL.domainDoubleDot
      if (s.charCodeAt(i - 1) === CHAR_HYPHEN) return FAIL.labelHyphen
      if (i - labelStart > MAX_LABEL_LENGTH) return FAIL.labelTooLong
      if (isALabelPrefix(s, labelStart, i)) flags |= HAS_A_LABEL
      dots++
      previousStart = labelStart
      labelStart = i + 1
    } else if ((kind & UPPER) !== 0) {
      flags |= HAS_UPPER
    } else if (c === CHAR_HYPHEN) {
      if (i === labelStart) return FAIL.labelHyphen
    } else if ((kind & NON_ASCII_UNIT) !== 0) {
      return flags | NON_ASCII_DOMAIN
    } else {
      return badDomainChar(c)
    }
  }
  if (labelStart === end) return FAIL.domainTrailingDot
  if (s.charCodeAt(end - 1) === CHAR_HYPHEN) return FAIL.labelHyphen
  if (end - labelStart > MAX_LABEL_LENGTH) return FAIL.labelTooLong
  if (isALabelPrefix(s, labelStart, end)) flags |= HAS_A_LABEL
  if (dots === 0) return FAIL.domainNeedsDot
  if (isNumericLabel(s, labelStart, end)) return FAIL.numericTld
  if ((isDigit(s.charCodeAt(labelStart)) || isDigit(s.charCodeAt(end - 1))) && !isALabelPrefix(s, labelStart, end)) {
    return FAIL.invalidTld
  }
  if (end - start > MAX_DOMAIN_LENGTH) return FAIL.domainTooLong
  return maybeSpecialUse(s, previousStart, labelStart, end) ? flags | MAYBE_SPECIAL_USE : flags
}
