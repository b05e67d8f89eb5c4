/**
 * The plain form of an address, which nearly every input has: an ASCII
 * local part of `atext` and dots, an `@`, and a domain of non-empty labels
 * of letters, digits and hyphens (`PLAIN_ADDRESS`). Read character by
 * character with the parser's own table (`charTable.ts`), it lets a caller
 * skip work for such an address: the duplicate hash reads it as it is
 * (`canonicalHash.ts`), and a job answers it from its host's verdict without
 * parsing it again (`acceptedPlainAt`, `app/rowVerdicts.ts`).
 */

import { MAX_ADDRESS_OCTETS } from "./address.ts"
import { ATEXT, CHAR_AT, CHAR_CLASS, CHAR_DOT, LDH } from "./charTable.ts"
import { MAX_LOCAL_OCTETS } from "./localPart.ts"

/**
 * The plain form as a pattern (the tests hold `plainAt` to it): any of these
 * characters before the `@`, labels of letters, digits and hyphens after it.
 */
export const PLAIN_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$/

/** The index of the `@` of an email of the `PLAIN_ADDRESS` form, else -1. */
export const plainAt = (email: string): number => scan(email, false)

/**
 * The index of the `@` of an email of the plain form that `parseEmail`
 * accepts as it is whenever it accepts its domain, else -1: its local part a
 * dot-atom (no dot first, last or twice in a row) of at most 64 characters,
 * the whole at most 254. Such an email parses, under any syntax options, to
 * that local part and its domain lower-cased (the tests hold the two to
 * each other). One pass, where parsing costs ~1.5x as long.
 */
export const acceptedPlainAt = (email: string): number => (email.length > MAX_ADDRESS_OCTETS ? -1 : scan(email, true))

/**
 * A batch's emails read once, for the callers that would each read them
 * again (`PlainHashes` in jobs/duplicates.ts, `app/rowVerdicts.ts`): each
 * email's `acceptedPlainAt`, by its index.
 */
export interface PlainForms {
  readonly acceptedAt: Int32Array
}

/**
 * The plain form, left to right: `atext` and dots up to the `@` (with
 * `dotAtom`, no dot first, last or twice in a row, and at most 64 of them),
 * then non-empty labels of letters, digits and hyphens. The `@`'s index, or -1.
 */
const scan = (email: string, dotAtom: boolean): number => {
  const length = email.length
  const table = CHAR_CLASS
  // A dot first is a dot after a dot.
  let previous = CHAR_DOT
  let at = 0
  for (; at < length; at++) {
    const c = email.charCodeAt(at)
    if (c === CHAR_AT) break
    if (c === CHAR_DOT) {
      if (dotAtom && previous === CHAR_DOT) return -1
    } else if (c >= 0x80 || (table[c]! & ATEXT) === 0) return -1
    previous = c
  }
  if (at === 0 || at === length) return -1
  if (dotAtom && (previous === CHAR_DOT || at > MAX_LOCAL_OCTETS)) return -1
  let labelEmpty = true
  for (let i = at + 1; i < length; i++) {
    const c = email.charCodeAt(i)
    if (c === CHAR_DOT) {
      if (labelEmpty) return -1
      labelEmpty = true
    } else if (c >= 0x80 || (table[c]! & LDH) === 0) return -1
    else labelEmpty = false
  }
  return labelEmpty ? -1 : at
}
