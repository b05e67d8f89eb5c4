/**
 * A keyed 64-bit hash of an address's canonical form (`canonicalAddress`:
 * lower-cased local part without `+tag`, Gmail dots and googlemail.com
 * folded), computed without building the canonical string for plain ASCII
 * addresses. Equal to hashing `canonicalAddress(parseEmail(address))` as a
 * string (test/stats/emailHash.test.ts proves it on generated addresses).
 *
 * Why not an HMAC: HMAC-SHA-256 from node:crypto costs ~17 µs per email on
 * the reference machine against ~1.6 µs for a whole offer validation, so it
 * alone would make validation ten times slower; parsing the address again
 * for `canonicalAddress` costs ~0.4 µs (25%). This hash reads the address the
 * engine already normalised and costs tens of nanoseconds (bench/stats.ts).
 * It is not a cryptographic PRF, and need not be: its values are never
 * stored, only HyperLogLog registers (a per-bucket maximum of leading zeros)
 * are, and the secret key keeps anyone holding those files from computing
 * which bucket a given address would fall into.
 *
 * The mix is two FNV-1a style lanes with different odd multipliers over
 * UTF-16 code units, seeded by the key, finished with MurmurHash3's fmix32
 * avalanche; the key also enters the finish.
 */
import { canonicalAddress } from "../engine/email/canonical.ts"
import type { ParsedEmail } from "../engine/email/parseEmail.ts"

/** 128 bits of key as four 32-bit words. */
export interface HashKey {
  readonly seed1: number
  readonly seed2: number
  readonly finish1: number
  readonly finish2: number
}

/** A key from at least 16 bytes (e.g. SHA-256 of the stats secret). */
export const hashKeyFromBytes = (bytes: Uint8Array): HashKey => {
  if (bytes.length < 16) throw new RangeError("a hash key needs at least 16 bytes")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return {
    seed1: view.getUint32(0),
    seed2: view.getUint32(4),
    finish1: view.getUint32(8),
    finish2: view.getUint32(12)
  }
}

const MULTIPLIER_1 = 0x01000193
const MULTIPLIER_2 = 0x5bd1e995
const CHAR_AT = 64
const CHAR_DOT = 46
const CHAR_PLUS = 43
const CHAR_QUOTE = 34
const GMAIL = "gmail.com"
const GOOGLEMAIL = "googlemail.com"

const fmix32 = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The two halves of the last hash computed (module scratch: no tuple per email). */
export const lastHash = { high: 0, low: 0 }

const finish = (key: HashKey, lane1: number, lane2: number): void => {
  lastHash.high = fmix32((lane1 ^ key.finish1) + Math.imul(lane2, 0x9e3779b1))
  lastHash.low = fmix32((lane2 ^ key.finish2) + Math.imul(lane1, 0x85ebca77))
}

/** Hashes `text` as is into `lastHash`. */
export const hashString = (key: HashKey, text: string): void => {
  let lane1 = key.seed1
  let lane2 = key.seed2
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    lane1 = Math.imul(lane1 ^ c, MULTIPLIER_1)
    lane2 = Math.imul(lane2 ^ c, MULTIPLIER_2)
  }
  finish(key, lane1, lane2)
}

/**
 * Hashes the canonical form of `address` (`localPart@domain` as the parser
 * normalised it: NFC local part, lower-case ASCII domain) into `lastHash`.
 * Plain ASCII local parts are lower-cased and cut at `+` on the fly; a
 * non-ASCII one is noticed after the loop (one OR per unit, no branch) and
 * hashed again through `canonicalAddress`.
 */
export const hashCanonicalAddress = (key: HashKey, address: string): void => {
  const at = address.lastIndexOf("@")
  const end = address.length
  const first = address.charCodeAt(0)
  // A quoted local part may unquote, and a leading "+" keeps every tag: both take the string path.
  if (first === CHAR_QUOTE || first === CHAR_PLUS) {
    hashSlow(key, address, at)
    return
  }
  const plus = address.indexOf("+")
  const localEnd = plus > 0 && plus < at ? plus : at
  const domainLength = end - at - 1
  const gmail =
    (domainLength === GMAIL.length && address.startsWith(GMAIL, at + 1)) ||
    (domainLength === GOOGLEMAIL.length && address.startsWith(GOOGLEMAIL, at + 1))
  let lane1 = key.seed1
  let lane2 = key.seed2
  let seen = 0
  for (let i = 0; i < localEnd; i++) {
    let c = address.charCodeAt(i)
    seen |= c
    if (c === CHAR_DOT && gmail) continue
    if (c - 65 < 26 && c >= 65) c += 32
    lane1 = Math.imul(lane1 ^ c, MULTIPLIER_1)
    lane2 = Math.imul(lane2 ^ c, MULTIPLIER_2)
  }
  if (seen >= 0x80) {
    hashSlow(key, address, at)
    return
  }
  lane1 = Math.imul(lane1 ^ CHAR_AT, MULTIPLIER_1)
  lane2 = Math.imul(lane2 ^ CHAR_AT, MULTIPLIER_2)
  const domain = gmail ? GMAIL : address
  const from = gmail ? 0 : at + 1
  const to = gmail ? GMAIL.length : end
  for (let i = from; i < to; i++) {
    const c = domain.charCodeAt(i)
    lane1 = Math.imul(lane1 ^ c, MULTIPLIER_1)
    lane2 = Math.imul(lane2 ^ c, MULTIPLIER_2)
  }
  finish(key, lane1, lane2)
}

/** Quoted or non-ASCII local parts: build the canonical string (rare). */
const hashSlow = (key: HashKey, address: string, at: number): void => {
  const parsed = { localPart: address.slice(0, at), domain: address.slice(at + 1) } as ParsedEmail
  hashString(key, canonicalAddress(parsed))
}
