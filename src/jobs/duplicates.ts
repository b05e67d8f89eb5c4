/**
 * Duplicate detection within a job: an email is a duplicate when its
 * canonical address (`canonicalAddress`: case, `+tag` and Gmail dots folded)
 * was seen earlier in the same job. Addresses are kept as 53-bit hashes, not
 * as strings, so a million addresses cost 16-32 MB rather than hundreds. Two different addresses share a hash with
 * probability about n²/2⁵⁴ (1 in 18,000 for a million-email job); the cost of
 * such a collision is one miscounted duplicate, never a wrong verdict.
 */
import { canonicalAddress } from "../engine/email/canonical.ts"
import { parseEmail } from "../engine/email/parseEmail.ts"

/**
 * A 53-bit hash of a string: two independent 32-bit multiply-xorshift lanes
 * over the UTF-16 code units, the second cut to 21 bits, joined into one
 * integer that is exact as a JavaScript number.
 */
export const hash53 = (text: string): number => {
  let a = 0x9e3779b9 ^ text.length
  let b = 0x85ebca6b ^ text.length
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995)
    b ^= b >>> 13
  }
  a ^= a >>> 16
  a = Math.imul(a, 0x7feb352d)
  a ^= a >>> 15
  a = Math.imul(a, 0x846ca68b)
  a ^= a >>> 16
  b ^= b >>> 15
  b = Math.imul(b, 0x2c1b3c6d)
  b ^= b >>> 12
  return (b & 0x1fffff) * 0x100000000 + (a >>> 0)
}

/**
 * A plain ASCII address: dot-atom local part, no quotes, no address
 * literal, no trailing dot. Once the engine has accepted such an address,
 * its canonical form is plain string work (`plainCanonical`).
 */
const PLAIN = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$/

/** `canonicalAddress` of a plain ASCII address the engine accepted, without parsing it again. */
export const plainCanonical = (email: string): string => {
  const lowered = email.toLowerCase()
  const at = lowered.lastIndexOf("@")
  const plus = lowered.indexOf("+")
  let local = plus > 0 && plus < at ? lowered.slice(0, plus) : lowered.slice(0, at)
  const domain = lowered.slice(at + 1)
  if (domain === "gmail.com" || domain === "googlemail.com") {
    local = local.replaceAll(".", "")
    return `${local}@gmail.com`
  }
  return plus > 0 && plus < at ? `${local}@${domain}` : lowered
}

/** The hash of an email's canonical address, or `undefined` when it is not an email. */
export const canonicalHash = (email: string): number | undefined => {
  const parsed = parseEmail(email)
  return parsed.ok ? hash53(canonicalAddress(parsed.email)) : undefined
}

/**
 * A set of 53-bit hashes in one open-addressing table (linear probing, at
 * most half full, doubled as it fills). Unlike a `Set<number>`, adding
 * allocates nothing per entry (a 53-bit number is a heap object in V8):
 * 8-byte slots, at most 32 bytes an address, and no garbage for the
 * collector to trace while a job runs.
 */
export class HashSet53 {
  private slots = new Float64Array(1024)
  private count = 0

  get size(): number {
    return this.count
  }

  /** Adds the hash; false when it was already present. */
  add(hash: number): boolean {
    const stored = hash + 1 // 0 marks an empty slot
    const mask = this.slots.length - 1
    for (let i = (hash >>> 0) & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i]!
      if (slot === stored) return false
      if (slot === 0) {
        this.slots[i] = stored
        if (++this.count * 2 > this.slots.length) this.grow()
        return true
      }
    }
  }

  private grow(): void {
    const old = this.slots
    this.slots = new Float64Array(old.length * 2)
    const mask = this.slots.length - 1
    for (const stored of old) {
      if (stored === 0) continue
      let i = ((stored - 1) >>> 0) & mask
      while (this.slots[i] !== 0) i = (i + 1) & mask
      this.slots[i] = stored
    }
  }
}

export class DuplicateSet {
  private readonly seen = new HashSet53()

  /**
   * Records the email; true when its canonical address was seen before.
   * `accepted`: the engine found its format valid, so a plain ASCII address
   * need not be parsed again (measured: the second parse was about 6% of a
   * job's time, `--cpu-prof` of `npm run bench:jobs`).
   */
  isRepeat(email: string, accepted = false): boolean {
    const hash = accepted && PLAIN.test(email) ? hash53(plainCanonical(email)) : canonicalHash(email)
    return hash !== undefined && !this.seen.add(hash)
  }

  get size(): number {
    return this.seen.size
  }
}
