/**
 * The host directory's keys (`HostDirectory.ts`), looked up by a host's
 * suffix in place — `host[at..]` — without slicing it: one pass over a host
 * gives the hash of every suffix, and the walk from the whole host to its
 * shortest suffix allocates nothing.
 *
 * Open addressing in one array holding, per slot, a key's hash and its value
 * (the key itself, or a record naming it): a probe compares hashes in the
 * slot's own cache line, and a match is a read of the value and its key's
 * text. A `Map` reads a bucket, then its entries, then each entry's key (its
 * length, in the string itself) — a read more for a host that is a key, and
 * two or three for each suffix that is not, which is most of the directory's
 * probes (a host below a listed domain, an unknown host). The key's text
 * always decides; a hash only chooses where to look. Measured with
 * bench/library.ts's emails, 1M, CPU time per 25k, the least of 7 passes
 * per chunk summed, each checkout in a process of its own: 1.03-1.07x the
 * `Map`'s.
 */

/** FNV-1a over the code units of `text[from, end)`, last to first: a suffix's hash is a prefix of the pass. */
const FNV_OFFSET = 0x811c9dc5 | 0
const FNV_PRIME = 0x01000193

export const suffixHash = (text: string, from: number): number => {
  let hash = FNV_OFFSET
  for (let i = text.length - 1; i >= from; i--) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME)
  return hash
}

/** Fibonacci hashing: spreads the hash's high bits over the slot index. */
const SPREAD = 0x9e3779b1 | 0

/** A hash's low 30 bits, as kept in a slot: a small integer, held in the array as it is. */
const SMALL = 0x3fffffff

/** At most one slot in two is used. */
const MIN_BITS = 4

/**
 * Scratch for `SuffixTable.walk`: where each suffix of the host being walked starts, and its hash, shortest
 * first. A key has at most 127 labels (253 octets), so the 256 shortest suffixes hold every one that can match.
 */
const MAX_SUFFIXES = 256
const suffixStarts = new Int32Array(MAX_SUFFIXES)
const suffixHashes = new Int32Array(MAX_SUFFIXES)

/** A value of the table: a key itself, or a record that names its key. */
export type Keyed = string | { readonly key: string }

export class SuffixTable<V extends Keyed> {
  /**
   * Per slot, two elements: the key's hash (a small integer), then its value
   * (`undefined`: an empty slot), so a probe reads one cache line and the
   * value it finds is the next read.
   */
  #slots: Array<number | V | undefined>
  #shift: number
  #size = 0

  constructor() {
    this.#slots = new Array<number | V | undefined>(2 << MIN_BITS).fill(undefined)
    this.#shift = 32 - MIN_BITS
  }

  get size(): number {
    return this.#size
  }

  /** The value of the key equal to `host[at..]` whose hash (`suffixHash(host, at)`) is `hash`, if any. */
  get(host: string, at: number, hash: number): V | undefined {
    const slots = this.#slots
    const mask = (slots.length >> 1) - 1
    const small = hash & SMALL
    for (let slot = Math.imul(hash, SPREAD) >>> this.#shift; ; slot = (slot + 1) & mask) {
      const value = slots[2 * slot + 1] as V | undefined
      if (value === undefined) return undefined
      if (slots[2 * slot] === small) {
        const key = typeof value === "string" ? value : (value as Exclude<V, string>).key
        if (at === 0 ? key === host : key.length === host.length - at && host.endsWith(key)) return value
      }
    }
  }

  /** Where the key `walk` last found starts in its host. */
  foundAt = -1

  /**
   * The value of the longest key that is a suffix of `host` at a label
   * boundary (`host` itself, then what follows each dot), where that key
   * starts in `foundAt`; `undefined` when none is.
   */
  walk(host: string): V | undefined {
    let count = 0
    let hash = FNV_OFFSET
    for (let i = host.length - 1; i >= 0; i--) {
      hash = Math.imul(hash ^ host.charCodeAt(i), FNV_PRIME)
      if ((i === 0 || host.charCodeAt(i - 1) === 0x2e) && count < MAX_SUFFIXES) {
        suffixStarts[count] = i
        suffixHashes[count++] = hash
      }
    }
    for (let k = count - 1; k >= 0; k--) {
      const at = suffixStarts[k]!
      const value = this.get(host, at, suffixHashes[k]!)
      if (value !== undefined) {
        this.foundAt = at
        return value
      }
    }
    return undefined
  }

  /** Sets the value of `key` (`value` is `key` or names it), adding the key if it is new. */
  set(key: string, value: V): void {
    const hash = suffixHash(key, 0)
    const small = hash & SMALL
    const slots = this.#slots
    const mask = (slots.length >> 1) - 1
    let slot = Math.imul(hash, SPREAD) >>> this.#shift
    for (; ; slot = (slot + 1) & mask) {
      const there = slots[2 * slot + 1] as V | undefined
      if (there === undefined) break
      if (
        slots[2 * slot] === small &&
        (typeof there === "string" ? there : (there as Exclude<V, string>).key) === key
      ) {
        slots[2 * slot + 1] = value
        return
      }
    }
    slots[2 * slot] = small
    slots[2 * slot + 1] = value
    this.#size++
    if (this.#size > slots.length >> 2) this.#grow()
  }

  /** The values. */
  *values(): IterableIterator<V> {
    const slots = this.#slots
    for (let i = 1; i < slots.length; i += 2) if (slots[i] !== undefined) yield slots[i] as V
  }

  /** Twice the slots, every key placed again. */
  #grow(): void {
    const old = this.#slots
    const bits = 32 - this.#shift + 1
    const slots = new Array<number | V | undefined>(2 << bits).fill(undefined)
    const mask = (1 << bits) - 1
    const shift = 32 - bits
    for (let i = 1; i < old.length; i += 2) {
      const value = old[i] as V | undefined
      if (value === undefined) continue
      const hash = suffixHash(typeof value === "string" ? value : (value as Exclude<V, string>).key, 0)
      let slot = Math.imul(hash, SPREAD) >>> shift
      while (slots[2 * slot + 1] !== undefined) slot = (slot + 1) & mask
      slots[2 * slot] = hash & SMALL
      slots[2 * slot + 1] = value
    }
    this.#slots = slots
    this.#shift = shift
  }
}
