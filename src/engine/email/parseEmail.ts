/**
 * Email address syntax: parse, check against Campusgate's sign-up policy, normalise.
 * The policy, the reason codes and their precedence are documented in `docs/email-policy.md`.
 *
 * Plain ASCII addresses take a fast path: a single forward `charCodeAt` pass with a lookup table
 * (local part up to the first @, then the domain), two string slices and one small object
 * (`parseAddress`; `parseEmail` wraps it in a second).
 */
import { completeLocalThenAddress } from "./address.ts"
import {
  ATEXT,
  CHAR_AT,
  CHAR_CLASS,
  CHAR_DOT,
  CHAR_OPEN_BRACKET,
  CHAR_QUOTE,
  isEdgeSpace,
  NON_ASCII_UNIT
} from "./charTable.ts"
import { resolveDomain } from "./idn.ts"
import { badLocalChar, scanDotAtom } from "./localPart.ts"
import type { AddressParse, DomainParse, EmailParse, EmailSyntaxOptions } from "./parseTypes.ts"
import { parseQuotedAddress } from "./quotedLocalPart.ts"
import { FAIL, type FormatFailure } from "./reasons.ts"
import { isSpecialUseDomain } from "./specialUse.ts"

export type { AddressParse, DomainParse, EmailParse, EmailSyntaxOptions, ParsedEmail } from "./parseTypes.ts"
export { EMAIL_FORMAT_REASONS, type EmailFormatReason } from "./reasons.ts"

/**
 * The syntax that accepts the most addresses: what any target may accept.
 * An input it refuses is no address at all (usage counts no unique email for
 * it, and a job names no duplicate of it).
 */
export const WIDEST_SYNTAX: EmailSyntaxOptions = Object.freeze({
  allowQuotedLocalPart: true,
  allowIpLiteral: true,
  allowSpecialUseDomains: true
})

/** Longer inputs are rejected before any analysis (a valid address is at most 254 octets). */
const MAX_INPUT_LENGTH = 1024

const edgeFailure = (s: string, blank: FormatFailure, edge: FormatFailure): FormatFailure | undefined => {
  const len = s.length
  const first = s.charCodeAt(0)
  const last = s.charCodeAt(len - 1)
  // Printable ASCII at both ends is by far the common case.
  if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f) return undefined
  if (!isEdgeSpace(first) && !isEdgeSpace(last)) return undefined
  for (let i = 0; i < len; i++) if (!isEdgeSpace(s.charCodeAt(i))) return edge
  return blank
}

/** A problem found before the first @ is reported as MISSING_AT when the input has no @ at all. */
const unlessNoAt = (input: string, from: number, failure: FormatFailure): FormatFailure =>
  input.indexOf("@", from) < 0 ? FAIL.missingAt : failure

/**
 * Parses and checks an email address. Never throws: every input, including non-strings at
 * runtime, gives either the parsed address or a reason code with a one-sentence message.
 */
export function parseEmail(input: string, options?: EmailSyntaxOptions): EmailParse {
  const parsed = parseAddress(input, options)
  return isFormatFailure(parsed) ? parsed : { ok: true, email: parsed }
}

/** Whether `parseAddress` refused the input. */
export const isFormatFailure = (parsed: AddressParse): parsed is FormatFailure => "ok" in parsed

/**
 * `parseEmail`'s answer unwrapped: the parsed email itself, or the failure (`isFormatFailure`).
 * The per-email path reads this form: one object fewer per email (measured: bench/library.ts).
 */
export function parseAddress(input: string, options?: EmailSyntaxOptions): AddressParse {
  if (typeof input !== "string") return FAIL.notAString
  const len = input.length
  if (len === 0) return FAIL.empty
  if (len > MAX_INPUT_LENGTH) return FAIL.inputTooLong
  const edge = edgeFailure(input, FAIL.blank, FAIL.edgeWhitespace)
  if (edge !== undefined) return edge
  if (input.charCodeAt(0) === CHAR_QUOTE) return parseQuotedAddress(input, options)

  // Dot-atom local part, scanned up to the first @ (a later @ fails in the domain scan).
  const table = CHAR_CLASS
  let nonAscii = false
  let at = 0
  for (; at < len; at++) {
    const c = input.charCodeAt(at)
    const kind = table[c]!
    if ((kind & ATEXT) !== 0) continue
    if (c === CHAR_DOT) {
      if (at === 0) return unlessNoAt(input, 1, FAIL.localLeadingDot)
      if (input.charCodeAt(at - 1) === CHAR_DOT) return unlessNoAt(input, at, FAIL.localDoubleDot)
    } else if (c === CHAR_AT) {
      break
    } else if ((kind & NON_ASCII_UNIT) !== 0) {
      nonAscii = true
    } else {
      return unlessNoAt(input, at, badLocalChar(c))
    }
  }
  if (at === len) return FAIL.missingAt
  if (at === 0) return FAIL.missingLocal
  if (at === len - 1) return FAIL.missingDomain
  if (input.charCodeAt(at - 1) === CHAR_DOT) return FAIL.localTrailingDot
  return completeLocalThenAddress(input, at, !nonAscii, scanDotAtom, options)
}

/**
 * Parses and checks a bare domain name with the same rules as the domain of an address
 * (IP literals are not accepted). Never throws.
 */
export function parseDomain(input: string): DomainParse {
  if (typeof input !== "string" || input.length === 0) return FAIL.noDomainGiven
  if (input.length > MAX_INPUT_LENGTH) return FAIL.domainInputTooLong
  const edge = edgeFailure(input, FAIL.domainBlank, FAIL.domainEdgeWhitespace)
  if (edge !== undefined) return edge
  if (input.charCodeAt(0) === CHAR_OPEN_BRACKET) return FAIL.ipLiteralNotAllowed
  if (input.indexOf("@") >= 0) return FAIL.domainHasAt
  const resolved = resolveDomain(input, 0, input.length)
  return resolved.ok && isSpecialUseDomain(resolved.domain) ? FAIL.specialUse : resolved
}
