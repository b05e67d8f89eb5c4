/**
 * The stable reason codes of the email syntax parser and the failure values it returns.
 *
 * Every failure is a frozen, shared object: producing one allocates nothing, and callers may
 * compare `reason` codes but must not rely on object identity. `docs/email-policy.md` documents
 * each code.
 */

/** Every reason code, in documentation order. */
export const EMAIL_FORMAT_REASONS = [
  "EMPTY",
  "LEADING_OR_TRAILING_WHITESPACE",
  "MISSING_AT",
  "MISSING_LOCAL_PART",
  "MISSING_DOMAIN",
  "LOCAL_PART_TOO_LONG",
  "ADDRESS_TOO_LONG",
  "DOMAIN_TOO_LONG",
  "LABEL_TOO_LONG",
  "INVALID_LOCAL_PART",
  "DOT_PLACEMENT",
  "QUOTED_LOCAL_PART_NOT_ALLOWED",
  "INVALID_QUOTED_LOCAL_PART",
  "IP_LITERAL_NOT_ALLOWED",
  "INVALID_IP_LITERAL",
  "INVALID_DOMAIN",
  "INVALID_DOMAIN_LABEL",
  "DOMAIN_NEEDS_DOT",
  "NUMERIC_TLD",
  "INVALID_TLD",
  "SPECIAL_USE_DOMAIN",
  "INVALID_IDN",
  "COMMENTS_NOT_ALLOWED",
  "CONTROL_CHARACTER"
] as const

export type EmailFormatReason = (typeof EMAIL_FORMAT_REASONS)[number]

/** A rejected input: a stable code and one plain English sentence. */
export interface FormatFailure {
  readonly ok: false
  readonly reason: EmailFormatReason
  readonly message: string
}

const failure = (reason: EmailFormatReason, message: string): FormatFailure =>
  Object.freeze({ ok: false as const, reason, message })

/** The catalogue of failures; several entries may share a code and differ in wording. */
export const FAIL = {
  notAString: failure("EMPTY", "No email address was given."),
  empty: failure("EMPTY", "The email address is empty."),
  blank: failure("EMPTY", "The email address contains only white space."),
  edgeWhitespace: failure(
    "LEADING_OR_TRAILING_WHITESPACE",
    "The email address starts or ends with white space, which must be removed."
  ),
  noDomainGiven: failure("EMPTY", "No domain was given."),
  domainBlank: failure("EMPTY", "The domain contains only white space."),
  domainEdgeWhitespace: failure(
    "LEADING_OR_TRAILING_WHITESPACE",
    "The domain starts or ends with white space, which must be removed."
  ),
  missingAt: failure("MISSING_AT", "The email address needs an @ between the name and the domain."),
  missingLocal: failure("MISSING_LOCAL_PART", "There is nothing before the @."),
  missingDomain: failure("MISSING_DOMAIN", "There is no domain after the @."),
  emptyDomain: failure("MISSING_DOMAIN", "The domain is empty."),

  inputTooLong: failure("ADDRESS_TOO_LONG", "The input is far longer than any email address can be."),
  localTooLong: failure("LOCAL_PART_TOO_LONG", "The part before the @ is longer than 64 bytes."),
  addressTooLong: failure(
    "ADDRESS_TOO_LONG",
    "The email address is longer than 254 bytes once international characters are encoded."
  ),
  domainInputTooLong: failure("DOMAIN_TOO_LONG", "The input is far longer than any domain can be."),
  domainTooLong: failure(
    "DOMAIN_TOO_LONG",
    "The domain is longer than 253 characters once international characters are encoded."
  ),
  labelTooLong: failure(
    "LABEL_TOO_LONG",
    "A part of the domain between dots is longer than 63 characters once international characters are encoded."
  ),

  localInvalidChar: failure("INVALID_LOCAL_PART", "The part before the @ contains a character that is not allowed."),
  localWhitespace: failure("INVALID_LOCAL_PART", "The part before the @ contains white space."),
  localStrayQuote: failure("INVALID_LOCAL_PART", "The part before the @ contains a quotation mark."),
  multipleAt: failure("INVALID_LOCAL_PART", "The email address contains more than one @."),
  localMalformed: failure("INVALID_LOCAL_PART", "The part before the @ contains malformed Unicode text."),
  localInvisible: failure(
    "INVALID_LOCAL_PART",
    "The part before the @ contains an invisible, unassigned or private-use character."
  ),

  localLeadingDot: failure("DOT_PLACEMENT", "The part before the @ must not start with a dot."),
  localTrailingDot: failure("DOT_PLACEMENT", "The part before the @ must not end with a dot."),
  localDoubleDot: failure("DOT_PLACEMENT", "The part before the @ must not contain two dots in a row."),
  domainLeadingDot: failure("DOT_PLACEMENT", "The domain must not start with a dot."),
  domainTrailingDot: failure("DOT_PLACEMENT", "The domain must not end with a dot."),
  domainDoubleDot: failure("DOT_PLACEMENT", "The domain must not contain two dots in a row."),

  quotedNotAllowed: failure("QUOTED_LOCAL_PART_NOT_ALLOWED", "Quoted text before the @ is not accepted."),
  quotedUnclosed: failure("INVALID_QUOTED_LOCAL_PART", "The quoted part before the @ is not closed."),
  quotedTrailingText: failure(
    "INVALID_QUOTED_LOCAL_PART",
    "The quoted part before the @ must be the whole local part, with nothing after the closing quote."
  ),
  quotedBadEscape: failure(
    "INVALID_QUOTED_LOCAL_PART",
    "A backslash in the quoted part may only escape a printable ASCII character."
  ),

  ipLiteralNotAllowed: failure("IP_LITERAL_NOT_ALLOWED", "An IP address in brackets is not accepted as the domain."),
  invalidIpLiteral: failure("INVALID_IP_LITERAL", "The bracketed domain is not a valid IPv4 or IPv6 address literal."),

  domainInvalidChar: failure("INVALID_DOMAIN", "The domain contains a character that is not allowed."),
  domainHasAt: failure("INVALID_DOMAIN", "A domain name must not contain an @."),
  domainWhitespace: failure("INVALID_DOMAIN", "The domain contains white space."),
  domainInvisible: failure("INVALID_DOMAIN", "The domain contains an invisible formatting character."),
  labelHyphen: failure("INVALID_DOMAIN_LABEL", "A part of the domain starts or ends with a hyphen."),
  domainNeedsDot: failure("DOMAIN_NEEDS_DOT", "The domain needs at least one dot, as in example.com."),
  numericTld: failure("NUMERIC_TLD", "The last part of the domain must not be a number."),
  invalidTld: failure(
    "INVALID_TLD",
    "The last part of the domain is not a possible top-level domain: it must start and end with a letter."
  ),
  specialUse: failure(
    "SPECIAL_USE_DOMAIN",
    "The domain is reserved for testing, examples or local networks (such as example.com, .test, .local or .onion); no one has a mailbox there."
  ),

  idnRejected: failure("INVALID_IDN", "The domain is not a valid internationalised domain name."),
  idnMalformed: failure("INVALID_IDN", "The domain contains malformed Unicode text."),
  badALabel: failure("INVALID_IDN", "A part of the domain starting with xn-- is not valid punycode."),

  comments: failure("COMMENTS_NOT_ALLOWED", "Comments in parentheses are not allowed."),
  controlChar: failure(
    "CONTROL_CHARACTER",
    "Control characters such as tabs and line breaks are not allowed inside the text."
  )
} as const satisfies Record<string, FormatFailure>
