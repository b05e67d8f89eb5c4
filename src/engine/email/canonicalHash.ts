/**
 * A keyed 64-bit hash of an address's canonical form (`canonicalAddress`:
 * lower-cased local part without `+tag`, Gmail dots and googlemail.com
 * folded), computed without building the canonical string for plain ASCII
 * addresses. Equal to hashing `canonicalAddress(parseEmail(address))` as a
 * string (test/engine/email/canonicalHash.test.ts proves it on generated addresses).
 *
 * Why not an HMAC: measured with `npm run bench:stats` (shared 2-core
 * machine, CPU time), HMAC-SHA-256 from node:crypto costs ~17 µs per email
 * against ~1.2 µs for a whole offer validation, so it alone would make
 * validation 15 times slower; parsing the address again for
 * `canonicalAddress` costs ~0.4 µs. This hash reads the address the engine
 * already normalised and costs ~0.15-0.2 µs.
 * It is not a cryptographic PRF, and need not be: its values are never
 * stored, only HyperLogLog registers (a per-bucket maximum of leading zeros)
 * are, and the secret key keeps anyone holding those files from computing
 * which bucket a given address would fall into.
 *
 * The mix is two FNV-1a style lanes with different odd multipliers over
 * pairs of UTF-16 code units, seeded by the key, finished with MurmurHash3's
 * fmix32 avalanche; the key also enters the finish.
 */
import { canonicalAddress } from "./canonical.ts"
import type { ParsedEmail } from "./parseEmail.ts"
import { plainAt } from "./plainAddress.ts"

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
const CHAR_PLUS = 43
const CHAR_QUOTE = 34
const CHAR_AT = 64
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

const finish = (key: HashKey, a: number, b: number): void => {
  lastHash.high = fmix32((a ^ key.finish1) + Math.imul(b, 0x9e3779b1))
  lastHash.low = fmix32((b ^ key.finish2) + Math.imul(a, 0x85ebca77))
}

/** ASCII upper case to lower case; anything else unchanged. */
const lower = (c: number): number => ((c - 65) >>> 0 < 26 ? c + 32 : c)

/*
 * The hash of a canonical address mixes its local part and its domain as two
 * segments (the "@" implied), two UTF-16 units per step: lane A takes the
 * pair as (first | second << 16), lane B swapped, so each unit reaches the
 * low half of a lane (a multiply only carries bits upwards). An odd last
 * unit is mixed alone, and each segment ends with its length, so segments
 * and tails are unambiguous. Pairs halve the multiply chain (bench/stats.ts).
 */

/** Hashes `text` (a canonical address: local part, "@", domain) as is into `lastHash`. */
export const hashString = (key: HashKey, text: string): void => {
  const at = text.lastIndexOf("@")
  let a = key.seed1
  let b = key.seed2
  let from = 0
  for (const to of [Math.max(at, 0), text.length]) {
    let i = from
    for (; i + 1 < to; i += 2) {
      const c0 = text.charCodeAt(i)
      const c1 = text.charCodeAt(i + 1)
      a = Math.imul(a ^ (c0 | (c1 << 16)), MULTIPLIER_1)
      b = Math.imul(b ^ (c1 | (c0 << 16)), MULTIPLIER_2)
    }
    if (i < to) {
      const c0 = text.charCodeAt(i)
      a = Math.imul(a ^ c0, MULTIPLIER_1)
      b = Math.imul(b ^ (c0 << 16), MULTIPLIER_2)
    }
    a = Math.imul(a ^ (to - from), MULTIPLIER_1)
    b = Math.imul(b ^ (to - from), MULTIPLIER_2)
    from = to + 1
  }
  finish(key, a, b)
}

/**
 * Hashes the canonical form of `address` (`localPart@domain` as the parser
 * normalised it: NFC local part, lower-case ASCII domain) into `lastHash`.
 * A plain ASCII local part is lower-cased and cut at `+` on the fly; quoted,
 * non-ASCII and Gmail local parts (dots removed) take the string path.
 */
export const hashCanonicalAddress = (key: HashKey, address: string): void => {
  let at = address.length - 1
  while (at >= 0 && address.charCodeAt(at) !== CHAR_AT) at--
  hashAt(key, address, at, false)
}

/**
 * For an address of the plain ASCII form (`PLAIN_ADDRESS`: a dot-atom-like
 * local part, labels of letters, digits and hyphens) in any case, hashes what
 * `hashCanonicalAddress` hashes for it lower-cased, and answers true; answers
 * false, hashing nothing, for any other text. The form is checked in the
 * same pass as the hash, with no lower-cased copy (a job hashes each of its
 * million emails so, `jobs/duplicates.ts`).
 */
export const hashPlainAddress = (key: HashKey, email: string): boolean => {
  const at = plainAt(email)
  if (at < 0) return false
  hashAt(key, email, at, true)
  return true
}

/** `hashPlainAddress` of an email of the plain form whose `@` is at `at` (`plainAt`, or `acceptedPlainAt`), found already. */
export const hashPlainAddressAt = (key: HashKey, email: string, at: number): void => hashAt(key, email, at, true)

/** Whether `address[at + 1..]`, ASCII case aside, is `domain`. */
const domainIs = (address: string, at: number, domain: string): boolean => {
  if (address.length - at - 1 !== domain.length) return false
  for (let i = 0; i < domain.length; i++) {
    if (lower(address.charCodeAt(at + 1 + i)) !== domain.charCodeAt(i)) return false
  }
  return true
}

/**
 * `hashCanonicalAddress` of `address`, its `@` at `at` (-1 without one).
 * With `lowerDomain`, the domain is read lower-cased, as the local part
 * always is: for a plain address in any case, that is the hash of it
 * lower-cased. Without, the domain is hashed as it is (the parser's form:
 * an address literal keeps its `IPv6:` tag).
 */
const hashAt = (key: HashKey, address: string, at: number, lowerDomain: boolean): void => {
  const end = address.length
  const first = address.charCodeAt(0)
  const domainLength = end - at - 1
  const gmail = domainIs(address, at, GMAIL) || domainIs(address, at, GOOGLEMAIL)
  // A quoted local part may unquote, and a leading "+" keeps every tag.
  if (first === CHAR_QUOTE || first === CHAR_PLUS || gmail) {
    hashSlow(key, address, at, lowerDomain)
    return
  }
  let localEnd = Math.min(at, 0)
  while (localEnd < at && address.charCodeAt(localEnd) !== CHAR_PLUS) localEnd++
  let a = key.seed1
  let b = key.seed2
  let seen = 0
  let i = 0
  for (; i + 1 < localEnd; i += 2) {
    const c0 = address.charCodeAt(i)
    const c1 = address.charCodeAt(i + 1)
    seen |= c0 | c1
    const l0 = lower(c0)
    const l1 = lower(c1)
    a = Math.imul(a ^ (l0 | (l1 << 16)), MULTIPLIER_1)
    b = Math.imul(b ^ (l1 | (l0 << 16)), MULTIPLIER_2)
  }
  if (i < localEnd) {
    const c0 = address.charCodeAt(i)
    seen |= c0
    a = Math.imul(a ^ lower(c0), MULTIPLIER_1)
    b = Math.imul(b ^ (lower(c0) << 16), MULTIPLIER_2)
  }
  if (seen >= 0x80) {
    hashSlow(key, address, at, lowerDomain)
    return
  }
  a = Math.imul(a ^ localEnd, MULTIPLIER_1)
  b = Math.imul(b ^ localEnd, MULTIPLIER_2)
  for (i = at + 1; i + 1 < end; i += 2) {
    const c0 = lowerDomain ? lower(address.charCodeAt(i)) : address.charCodeAt(i)
    const c1 = lowerDomain ? lower(address.charCodeAt(i + 1)) : address.charCodeAt(i + 1)
    a = Math.imul(a ^ (c0 | (c1 << 16)), MULTIPLIER_1)
    b = Math.imul(b ^ (c1 | (c0 << 16)), MULTIPLIER_2)
  }
  if (i < end) {
    const c0 = lowerDomain ? lower(address.charCodeAt(i)) : address.charCodeAt(i)
    a = Math.imul(a ^ c0, MULTIPLIER_1)
    b = Math.imul(b ^ (c0 << 16), MULTIPLIER_2)
  }
  a = Math.imul(a ^ domainLength, MULTIPLIER_1)
  b = Math.imul(b ^ domainLength, MULTIPLIER_2)
  finish(key, a, b)
}

/** Quoted, Gmail and non-ASCII local parts: build the canonical string (rare). */
const hashSlow = (key: HashKey, address: string, at: number, lowerDomain: boolean): void => {
  const domain = address.slice(at + 1)
  const parsed = { localPart: address.slice(0, at), domain: lowerDomain ? domain.toLowerCase() : domain } as ParsedEmail
  hashString(key, canonicalAddress(parsed))
}
