/**
 * Duplicate detection within a job: an email is a duplicate when its
 * canonical address (`canonicalAddress`: case, `+tag` and Gmail dots folded)
 * was seen earlier in the same job, and the result names that earlier row.
 * Addresses are kept as 53-bit hashes (`canonicalHash.ts`, the hash usage
 * statistics use too) with the row they first came in, not as strings, so a
 * million addresses cost 24-48 MB rather than hundreds. Two different
 * addresses share a hash with
 * probability about n²/2⁵⁴ (1 in 18,000 for a million-email job); the cost of
 * such a collision is one miscounted duplicate, never a wrong verdict.
 */

import type { MadeHashes } from "../domain/OfferUsage.ts"
import { canonicalAddress } from "../engine/email/canonical.ts"
import {
  type HashKey,
  hashKeyFromBytes,
  hashPlainAddressAt,
  hashString,
  lastHash
} from "../engine/email/canonicalHash.ts"
import { parseEmail, WIDEST_SYNTAX } from "../engine/email/parseEmail.ts"
import { acceptedPlainAt, type PlainForms, plainAt } from "../engine/email/plainAddress.ts"

/**
 * The key of a job's duplicate hashes where the deployment counts no usage:
 * any fixed key will do, since these hashes live only in memory, for one job.
 */
export const DUPLICATES_KEY: HashKey = hashKeyFromBytes(new TextEncoder().encode("campusgate-dups!"))

/**
 * The key a job's duplicate hashes are made with, on every thread and on
 * resume: the deployment's unique-email key where it counts usage, so that
 * an offer job hashes each address once for its duplicates and its usage
 * count (`PlainHashes`), else `DUPLICATES_KEY`.
 */
export const duplicatesKey = (uniqueEmailKey: HashKey | undefined): HashKey => uniqueEmailKey ?? DUPLICATES_KEY

/** A hash cut to 53 bits: exact as a JavaScript number. */
const cut53 = (high: number, low: number): number => (high & 0x1fffff) * 0x100000000 + low

/**
 * A batch's emails read once, before they are evaluated. The hashes under
 * `key` of those of the plain ASCII form (`PLAIN_ADDRESS`), read as they
 * are (`hashPlainAddress`): an email's duplicate hash, and for an offer job
 * its unique-email hash too (`MadeHashes`: what `hashCanonicalAddress`
 * makes of the address parsed from it). And the `acceptedPlainAt` of each
 * (`PlainForms`), which the evaluation reads instead of scanning the email
 * again (measured: that scan was 3-8% of a job thread's pass, bench:jobs:batches).
 * An email of the plain form holds nothing JSON escapes, so a row can quote
 * it as it is (`encodeBatch`).
 */
export class PlainHashes implements MadeHashes, PlainForms {
  readonly key: HashKey
  readonly made: Uint8Array
  readonly high: Uint32Array
  readonly low: Uint32Array
  readonly acceptedAt: Int32Array

  constructor(key: HashKey, emails: ReadonlyArray<string>) {
    this.key = key
    this.made = new Uint8Array(emails.length)
    this.high = new Uint32Array(emails.length)
    this.low = new Uint32Array(emails.length)
    this.acceptedAt = new Int32Array(emails.length)
    for (let i = 0; i < emails.length; i++) {
      const email = emails[i]!
      // An email accepted as it is has the plain form (with the same `@`); the few others are read for it again.
      const accepted = acceptedPlainAt(email)
      this.acceptedAt[i] = accepted
      const at = accepted >= 0 ? accepted : plainAt(email)
      if (at < 0) continue
      hashPlainAddressAt(key, email, at)
      this.made[i] = 1
      this.high[i] = lastHash.high
      this.low[i] = lastHash.low
    }
  }

  /** The 53-bit hash of email `i`, undefined when it is not of the plain form. */
  hash53(i: number): number | undefined {
    return this.made[i] === 1 ? cut53(this.high[i]!, this.low[i]!) : undefined
  }
}

/**
 * The 53-bit hash under `key` of an email's canonical address, parsed, or
 * `undefined` when it is not an email: for the emails a batch's plain
 * hashes (`PlainHashes`) do not cover, and a resumed job's earlier rows.
 * Parsed under the widest syntax, so that an address only some target's
 * syntax accepts (a quoted local part, an address literal, a special-use
 * name) has its duplicates found too, whatever the job's target.
 */
export const canonicalHash = (email: string, key: HashKey = DUPLICATES_KEY): number | undefined => {
  const parsed = parseEmail(email, WIDEST_SYNTAX)
  if (!parsed.ok) return undefined
  hashString(key, canonicalAddress(parsed.email))
  return cut53(lastHash.high, lastHash.low)
}

/** Slots a table starts with at least, and at most when sized for the entries expected. */
const MIN_SLOTS = 1024
const MAX_PRESIZED_SLOTS = 1 << 23

/** The slots that hold `entries` at most half full (a power of two, within the bounds above). */
const slotsFor = (entries: number): number => {
  let slots = MIN_SLOTS
  while (slots < entries * 2 && slots < MAX_PRESIZED_SLOTS) slots *= 2
  return slots
}

/**
 * A map from 53-bit hashes to row numbers in one open-addressing table
 * (linear probing, at most half full, doubled as it fills). Unlike a
 * `Map<number, number>`, adding allocates nothing per entry (a 53-bit
 * number is a heap object in V8): 12-byte slots, at most 48 bytes an
 * address, and no garbage for the collector to trace while a job runs.
 *
 * Sized at once for the entries expected (a job's items), it never grows
 * for them: growing to a million entries copied every entry about twice and
 * held the old table beside the new one at each step (24 MB beside 12 MB at
 * the last). A table's pages become resident as slots are written, so room
 * for items that repeat costs address space, not memory.
 */
export class HashMap53 {
  private keys: Float64Array
  private values: Uint32Array
  private count = 0

  constructor(expected = 0) {
    const slots = slotsFor(expected)
    this.keys = new Float64Array(slots)
    this.values = new Uint32Array(slots)
  }

  get size(): number {
    return this.count
  }

  /** Adds `hash` → `value` unless the hash is present; answers the value it already had, else undefined. */
  addIfAbsent(hash: number, value: number): number | undefined {
    const stored = hash + 1 // 0 marks an empty slot
    const mask = this.keys.length - 1
    for (let i = (hash >>> 0) & mask; ; i = (i + 1) & mask) {
      const slot = this.keys[i]!
      if (slot === stored) return this.values[i]
      if (slot === 0) {
        this.keys[i] = stored
        this.values[i] = value
        if (++this.count * 2 > this.keys.length) this.grow()
        return undefined
      }
    }
  }

  private grow(): void {
    const oldKeys = this.keys
    const oldValues = this.values
    this.keys = new Float64Array(oldKeys.length * 2)
    this.values = new Uint32Array(oldKeys.length * 2)
    const mask = this.keys.length - 1
    for (let j = 0; j < oldKeys.length; j++) {
      const stored = oldKeys[j]!
      if (stored === 0) continue
      let i = ((stored - 1) >>> 0) & mask
      while (this.keys[i] !== 0) i = (i + 1) & mask
      this.keys[i] = stored
      this.values[i] = oldValues[j]!
    }
  }
}

export class DuplicateSet {
  private readonly seen: HashMap53
  private readonly key: HashKey

  /**
   * `expected`: the addresses it will hold at most (a job's items), so that
   * it need not grow; `key`: the job's (`duplicatesKey`).
   */
  constructor(expected = 0, key: HashKey = DUPLICATES_KEY) {
    this.seen = new HashMap53(expected)
    this.key = key
  }

  /**
   * Records the email of row `row` (1-based); answers the row where its
   * canonical address came first when it was seen before, else undefined
   * (a resumed job's earlier rows; a batch's are hashed as it is encoded).
   */
  firstRow(email: string, row: number): number | undefined {
    const hash = canonicalHash(email, this.key)
    return hash === undefined ? undefined : this.seen.addIfAbsent(hash, row)
  }

  /** `firstRow` for an address hashed elsewhere (`canonicalHash`, on the thread that evaluated it). */
  firstRowOfHash(hash: number, row: number): number | undefined {
    return this.seen.addIfAbsent(hash, row)
  }

  get size(): number {
    return this.seen.size
  }
}
