/**
 * The quoted local part of RFC 5321 section 4.1.2, only used with `allowQuotedLocalPart`:
 *
 *     Quoted-string   = DQUOTE *QcontentSMTP DQUOTE
 *     QcontentSMTP    = qtextSMTP / quoted-pairSMTP
 *     quoted-pairSMTP = %d92 %d32-126
 *     qtextSMTP       = %d32-33 / %d35-91 / %d93-126 / UTF8-non-ascii   (RFC 6531)
 *
 * No folding white space, no obsolete forms such as `"a".b`, no escaped control characters.
 */
import { completeLocalThenAddress } from "./address.ts"
import { CHAR_BACKSLASH, CHAR_CLASS, CHAR_QUOTE, isAsciiControl, QTEXT } from "./charTable.ts"
import { NON_ASCII } from "./localPart.ts"
import type { AddressParse, EmailSyntaxOptions } from "./parseTypes.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"

/**
 * Checks `s[start, end)`, which begins with a double quote, as a whole quoted local part.
 * Returns a failure, or 0 for plain ASCII, or `NON_ASCII` when non-ASCII text must still be vetted.
 */
export const scanQuoted = (s: string, start: number, end: number): FormatFailure | number => {
  const last = end - 1
  let flags = 0
  let i = start + 1
  while (i < end) {
    const c = s.charCodeAt(i)
    if (c === CHAR_QUOTE) return i === last ? flags : FAIL.quotedTrailingText
    if (c === CHAR_BACKSLASH) {
      i++
      if (i >= end) return FAIL.quotedUnclosed
      const escaped = s.charCodeAt(i)
      if (escaped < 0x20 || escaped > 0x7e) return isAsciiControl(escaped) ? FAIL.controlChar : FAIL.quotedBadEscape
    } else if (c < 0x80) {
      // Outside qtext only the quote, the backslash (both handled above) and controls remain.
      if ((CHAR_CLASS[c]! & QTEXT) === 0) return FAIL.controlChar
    } else {
      flags = NON_ASCII
    }
    i++
  }
  return FAIL.quotedUnclosed
}

/**
 * Parses an address whose first character is a double quote. The local part then ends at the
 * last @, since a quoted local part may itself contain @ but a domain never does.
 */
export const parseQuotedAddress = (input: string, options: EmailSyntaxOptions | undefined): AddressParse => {
  const at = input.lastIndexOf("@")
  if (at < 0) return FAIL.missingAt
  if (options?.allowQuotedLocalPart !== true) {
    return at > 1 && input.charCodeAt(at - 1) === CHAR_QUOTE ? FAIL.quotedNotAllowed : FAIL.localStrayQuote
  }
  if (at === input.length - 1) return FAIL.missingDomain
  const scan = scanQuoted(input, 0, at)
  if (typeof scan !== "number") return scan
  return completeLocalThenAddress(input, at, scan === 0, scanQuoted, options)
}

/**
 * The content of a valid quoted local part with its quotes and escapes removed
 * (`"a\"b"` gives `a"b`).
 */
export const unquote = (quoted: string): string => {
  let out = ""
  for (let i = 1; i < quoted.length - 1; i++) {
    const c = quoted.charCodeAt(i)
    if (c === CHAR_BACKSLASH) i++
    out += quoted.charAt(i)
  }
  return out
}
