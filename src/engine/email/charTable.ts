/**
 * A precomputed class table for every UTF-16 code unit (64 KiB), so the hot loops classify a
 * character with one array read and one bit test, without a range check first and without
 * regular expressions. Only the 128 ASCII entries are hot; the rest just carry `NON_ASCII_UNIT`.
 */

/** RFC 5322 `atext`: letters, digits and ``!#$%&'*+-/=?^_`{|}~``. */
export const ATEXT = 1
/** Letters, digits and hyphen (RFC 1123 host name characters). */
export const LDH = 2
/** `A`-`Z`. */
export const UPPER = 4
/** `0`-`9`. */
export const DIGIT = 8
/** RFC 5321 `qtextSMTP`: printable ASCII and space, without `"` and `\`. */
export const QTEXT = 16
/** Hexadecimal digits, either case. */
export const HEX = 32
/** `a`-`z` and `0`-`9`: the characters a lower-case domain label is mostly made of. */
export const LOWER_OR_DIGIT = 64
/** Any code unit from U+0080 up, surrogates included. */
export const NON_ASCII_UNIT = 128

export const CHAR_DOT = 0x2e
export const CHAR_AT = 0x40
export const CHAR_HYPHEN = 0x2d
export const CHAR_QUOTE = 0x22
export const CHAR_BACKSLASH = 0x5c
export const CHAR_COLON = 0x3a
export const CHAR_OPEN_BRACKET = 0x5b
export const CHAR_CLOSE_BRACKET = 0x5d

const build = (): Uint8Array => {
  const table = new Uint8Array(0x10000)
  const mark = (from: number, to: number, bits: number): void => {
    for (let c = from; c <= to; c++) table[c] = (table[c] ?? 0) | bits
  }
  mark(0x41, 0x5a, ATEXT | LDH | UPPER)
  mark(0x61, 0x7a, ATEXT | LDH | LOWER_OR_DIGIT)
  mark(0x30, 0x39, ATEXT | LDH | DIGIT | HEX | LOWER_OR_DIGIT)
  mark(0x41, 0x46, HEX)
  mark(0x61, 0x66, HEX)
  mark(CHAR_HYPHEN, CHAR_HYPHEN, ATEXT | LDH)
  for (const ch of "!#$%&'*+/=?^_`{|}~") mark(ch.charCodeAt(0), ch.charCodeAt(0), ATEXT)
  mark(0x20, 0x7e, QTEXT)
  table[CHAR_QUOTE] = (table[CHAR_QUOTE] ?? 0) & ~QTEXT
  table[CHAR_BACKSLASH] = (table[CHAR_BACKSLASH] ?? 0) & ~QTEXT
  table.fill(NON_ASCII_UNIT, 0x80)
  return table
}

export const CHAR_CLASS: Uint8Array = build()

/** True for C0 controls and DEL. */
export const isAsciiControl = (c: number): boolean => c < 0x20 || c === 0x7f

/**
 * White space a user may paste around an address: ASCII space, tab, line feed, vertical tab,
 * form feed and carriage return, plus Unicode spaces and the invisible characters that usually
 * come with them (zero-width space, byte-order mark).
 */
export const isEdgeSpace = (c: number): boolean => {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d)
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    c === 0x180e ||
    (c >= 0x2000 && c <= 0x200b) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  )
}
