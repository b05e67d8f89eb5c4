/**
 * A canonical identity for counting unique people, e.g. to stop one person from claiming an
 * offer several times through `john+1@…`, `John@…` and `j.o.h.n@gmail.com`.
 */
import { CHAR_QUOTE } from "./charTable.ts"
import { scanDotAtom } from "./localPart.ts"
import type { ParsedEmail } from "./parseEmail.ts"
import { unquote } from "./quotedLocalPart.ts"

const GMAIL = "gmail.com"
const GOOGLEMAIL = "googlemail.com"

/** A quoted local part whose content is also a valid dot-atom is the same mailbox unquoted. */
const unquoteIfPlain = (local: string): string => {
  if (local.charCodeAt(0) !== CHAR_QUOTE) return local
  const inner = unquote(local)
  return inner.length > 0 && typeof scanDotAtom(inner, 0, inner.length) === "number" ? inner : local
}

/**
 * Canonical identity for counting unique people: NFC, lower-cased local part, sub-address tag
 * (`+tag`) removed; for gmail.com/googlemail.com also dots removed and googlemail.com folded into
 * gmail.com. Never used for matching institutions.
 */
export function canonicalAddress(email: ParsedEmail): string {
  let local = unquoteIfPlain(email.localPart)
  const quoted = local.charCodeAt(0) === CHAR_QUOTE
  if (!quoted) {
    const plus = local.indexOf("+")
    if (plus > 0) local = local.slice(0, plus)
  }
  local = local.toLowerCase().normalize("NFC")
  let domain = email.domain
  if (domain === GMAIL || domain === GOOGLEMAIL) {
    domain = GMAIL
    if (!quoted) local = local.replaceAll(".", "")
  }
  return `${local}@${domain}`
}
