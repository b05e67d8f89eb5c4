/**
 * The host directory's keys (`HostDirectory.ts`), looked up by a host's
 * suffix in place — `host[at..]` — without slicing it: one pass over a host
 * gives the hash of every suffix, and the walk from the whole host to its
 * shortest suffix allocates nothing.
 *
 * Open addressing in one array holding, per slot, a key's hash, the key's
 * text and its value: a probe compares hashes in the slot's own cache line,
 * and a match reads the key's text and the value, neither found through the
 * other, so the two reads overlap. A `Map` reads a bucket, then its entries,
 * then each entry's key (its length, in the string itself) — a read more for
 * a host that is a key, and two or three for each suffix that is not, which
 * is most of the directory's probes (a host below a listed domain, an
 * unknown host). The key's text always decides; a hash only chooses where to
 * look. Measured with bench/library.ts's emails, 1M, CPU time per 25k, the
 * least of 7 passes per chunk summed, each checkout in a process of its own:
 * 1.03-1.07x the `Map`'s with the value naming its key. Then a match read the
 * value, then the key through it, then the key's text: a CPU profile put a
 * third of the walk on each of those three reads. With the key in the slot,
 * the key's text and the value are read at once.
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

/** Elements per slot: the key's hash, the key, the value. */
const SLOT = 3

export class SuffixTable<V> {
  /**
   * Per slot, three elements: the key's hash (a small integer), the key
   * (`undefined`: an empty slot) and its value, so a probe reads one cache
   * line and a match's key and value are read side by side.
   */
  #slots: Array<number | string | V | undefined>
  #shift: number
  #size = 0

  constructor() {
    this.#slots = new Array<number | string | V | undefined>(SLOT << MIN_BITS).fill(undefined)
    this.#shift = 32 - MIN_BITS
  }

  get size(): number {
    return this.#size
  }

  /** The value of the key equal to `host[at..]` whose hash (`suffixHash(host, at)`) is `hash`, if any. */
  get(host: string, at: number, hash: number): V | undefined {
    const slots = this.#slots
    const mask = (1 << (32 - this.#shift)) - 1
    const small = hash & SMALL
    for (let slot = Math.imul(hash, SPREAD) >>> this.#shift; ; slot = (slot + 1) & mask) {
      const i = SLOT * slot
      const key = slots[i + 1] as string | undefined
      if (key === undefined) return undefined
      if (slots[i] === small && (at === 0 ? key === host : key.length === host.length - at && host.endsWith(key))) {
        return slots[i + 2] as V
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

  /** Sets the value of `key`, adding the key if it is new. */
  set(key: string, value: V): void {
    const hash = suffixHash(key, 0)
    const small = hash & SMALL
    const slots = this.#slots
    const mask = (1 << (32 - this.#shift)) - 1
    let slot = Math.imul(hash, SPREAD) >>> this.#shift
    for (; ; slot = (slot + 1) & mask) {
      const there = slots[SLOT * slot + 1] as string | undefined
      if (there === undefined) break
      if (slots[SLOT * slot] === small && there === key) {
        slots[SLOT * slot + 2] = value
        return
      }
    }
    slots[SLOT * slot] = small
    slots[SLOT * slot + 1] = key
    slots[SLOT * slot + 2] = value
    this.#size++
    if (this.#size > 1 << (31 - this.#shift)) this.#grow()
  }

  /** The values. */
  *values(): IterableIterator<V> {
    const slots = this.#slots
    for (let i = 1; i < slots.length; i += SLOT) if (slots[i] !== undefined) yield slots[i + 1] as V
  }

  /** Twice the slots, every key placed again. */
  #grow(): void {
    const old = this.#slots
    const bits = 32 - this.#shift + 1
    const slots = new Array<number | string | V | undefined>(SLOT << bits).fill(undefined)
    const mask = (1 << bits) - 1
    const shift = 32 - bits
    for (let i = 1; i < old.length; i += SLOT) {
      const key = old[i] as string | undefined
      if (key === undefined) continue
      let slot = Math.imul(suffixHash(key, 0), SPREAD) >>> shift
      while (slots[SLOT * slot + 1] !== undefined) slot = (slot + 1) & mask
      slots[SLOT * slot] = old[i - 1]
      slots[SLOT * slot + 1] = key
      slots[SLOT * slot + 2] = old[i + 1]
    }
    this.#slots = slots
    this.#shift = shift
  }
}
