/**
 * What parsing an address or a domain answers, and the syntax it is parsed
 * under: the types every part of the parser shares (`parseEmail.ts`,
 * `address.ts`, `quotedLocalPart.ts`, `idn.ts`), in a module that imports
 * none of them.
 */
import type { EmailFormatReason, FormatFailure } from "./reasons.ts"

export interface EmailSyntaxOptions {
  /** Accept an RFC 5321 quoted local part such as `"john doe"@example.com`. Default false. */
  readonly allowQuotedLocalPart?: boolean
  /** Accept an address literal domain such as `[192.0.2.1]` or `[IPv6:2001:db8::1]`. Default false. */
  readonly allowIpLiteral?: boolean
  /** Accept special-use and reserved names (`example.com`, `.test`, `.local`, `.onion`; see `specialUse.ts`). Default false. */
  readonly allowSpecialUseDomains?: boolean
}

export interface ParsedEmail {
  /** The local part as given, in Unicode NFC. */
  readonly localPart: string
  /** ASCII, lower case, A-labels (punycode), no trailing dot; for IP literals the bracketed literal. */
  readonly domain: string
  /** The domain with U-labels, for display (=== domain when plain ASCII). */
  readonly unicodeDomain: string
  /** The domain had non-ASCII characters or `xn--` labels. */
  readonly isInternational: boolean
  readonly isIpLiteral: boolean
  /** `${localPart}@${domain}` */
  readonly address: string
}

export type EmailParse =
  | { readonly ok: true; readonly email: ParsedEmail }
  | { readonly ok: false; readonly reason: EmailFormatReason; readonly message: string }

/**
 * What the parser itself answers for an address: the parsed email, or the failure. `EmailParse`
 * wraps the email for callers; the per-email path reads this form, one object fewer per email.
 */
export type AddressParse = ParsedEmail | FormatFailure

export type DomainParse =
  | { readonly ok: true; readonly domain: string; readonly unicodeDomain: string; readonly isInternational: boolean }
  | { readonly ok: false; readonly reason: EmailFormatReason; readonly message: string }
