/**
 * The local part (before the @) as an RFC 5322 dot-atom, extended by RFC 6531 to any Unicode
 * character from U+0080 up that is visible and assigned.
 */
import { Buffer } from "node:buffer"
import { ATEXT, CHAR_AT, CHAR_CLASS, CHAR_DOT, CHAR_QUOTE, isAsciiControl, NON_ASCII_UNIT } from "./charTable.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"

/** Flag returned by the scanners: the range contains code units from U+0080 up. */
export const NON_ASCII = 1

/** Maximum octets of a local part (RFC 5321 section 4.5.3.1.1). */
export const MAX_LOCAL_OCTETS = 64

/** Why an ASCII character outside `atext` is rejected in a local part. */
export const badLocalChar = (c: number): FormatFailure => {
  if (isAsciiControl(c)) return FAIL.controlChar
  if (c === 0x28 || c === 0x29) return FAIL.comments
  if (c === 0x20) return FAIL.localWhitespace
  if (c === CHAR_QUOTE) return FAIL.localStrayQuote
  if (c === CHAR_AT) return FAIL.multipleAt
  return FAIL.localInvalidChar
}

/**
 * Checks `s[start, end)` (non-empty) as a dot-atom. Returns a failure, or 0 when the range is
 * plain ASCII, or `NON_ASCII` when it also holds characters that `checkUnicodeText` must vet.
 */
export const scanDotAtom = (s: string, start: number, end: number): FormatFailure | number => {
  const table = CHAR_CLASS
  let flags = 0
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    const kind = table[c]!
    if ((kind & ATEXT) !== 0) continue
    if (c === CHAR_DOT) {
      if (i === start) return FAIL.localLeadingDot
      if (s.charCodeAt(i - 1) === CHAR_DOT) return FAIL.localDoubleDot
    } else if ((kind & NON_ASCII_UNIT) !== 0) {
      flags = NON_ASCII
    } else {
      return badLocalChar(c)
    }
  }
  return s.charCodeAt(end - 1) === CHAR_DOT ? FAIL.localTrailingDot : flags
}

/**
 * Non-ASCII characters that may not appear in a local part: controls (Cc), format characters
 * (Cf), surrogates (Cs, only possible unpaired), private use (Co), unassigned code points and
 * noncharacters (Cn), and separators (Zl, Zp and every space but U+0020, which the ASCII scan
 * handles by context).
 */
const DISALLOWED = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u

const isUnicodeSpace = (cp: number): boolean =>
  cp === 0xa0 ||
  cp === 0x1680 ||
  (cp >= 0x2000 && cp <= 0x200a) ||
  cp === 0x2028 ||
  cp === 0x2029 ||
  cp === 0x202f ||
  cp === 0x205f ||
  cp === 0x3000

/** Vets the non-ASCII characters of a local part whose ASCII characters were already checked. */
export const checkUnicodeText = (text: string): FormatFailure | undefined => {
  const found = DISALLOWED.exec(text)
  if (found === null) return undefined
  const cp = found[0].codePointAt(0) ?? 0
  if (cp < 0xa0) return FAIL.controlChar
  if (cp >= 0xd800 && cp <= 0xdfff) return FAIL.localMalformed
  if (isUnicodeSpace(cp)) return FAIL.localWhitespace
  return FAIL.localInvisible
}

/** A vetted non-ASCII local part: its NFC form and that form's UTF-8 length. */
export interface UnicodeLocal {
  readonly text: string
  readonly octets: number
}

/**
 * Finishes a local part that contains non-ASCII characters: vets them, normalises to NFC and
 * re-checks the normalised text with `rescan` (NFC can turn a character into ASCII punctuation,
 * e.g. U+037E GREEK QUESTION MARK into `;`).
 */
export const finishUnicodeLocal = (
  raw: string,
  rescan: (s: string, start: number, end: number) => FormatFailure | number
): FormatFailure | UnicodeLocal => {
  const bad = checkUnicodeText(raw)
  if (bad !== undefined) return bad
  const text = raw.normalize("NFC")
  if (text !== raw) {
    const again = rescan(text, 0, text.length)
    if (typeof again !== "number") return again
    const badAgain = checkUnicodeText(text)
    if (badAgain !== undefined) return badAgain
  }
  return { text, octets: Buffer.byteLength(text, "utf8") }
}
