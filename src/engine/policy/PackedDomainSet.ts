/**
 * A large set of domains in a fraction of a `Set`'s memory: their text in
 * one string, where each entry starts, and a hash table of entry numbers.
 * The built-in email lists took 9.3 MB of every engine's heap (each thread
 * holds an engine) with the ~120k disposable domains each a string in a
 * `Set`, and take 2.8 MB with them packed (`used_heap_size` after full
 * collections, around `loadBuiltInEmailLists`). A probe hashes the domain,
 * as a `Set` does, and compares it with the entry at that place in the
 * text; nothing is allocated (140-300 ns a probe for either, on the shared
 * 2-core machine, 200k probes of which a fifth listed). Its parts are
 * what the compiled email lists store (`emailListsBuffer.ts`), so a start
 * takes them as they are instead of hashing every entry again.
 */

/** FNV-1a over the code units. */
const hashOf = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash
}

/** Fibonacci hashing: spreads the hash's high bits over the table index. */
const spread = 0x9e3779b1

const SEPARATOR = "\n"

/** The parents' filter (`mayHaveEntryBelow`): 2^20 bits, 128 KB, a few percent set by the built-in lists. */
const PARENT_BITS = 20
const PARENT_SHIFT = 32 - PARENT_BITS

/** FNV-1a over the code units of `text[start, end)`, last to first, as the parents' filter takes a parent's. */
const reverseHash = (text: string, start: number, end: number): number => {
  let hash = 0x811c9dc5
  for (let i = end - 1; i >= start; i--) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash
}

/** A set's state as it is: the entries' text, where each starts, and the hash table (`PackedDomainSet.parts`). */
export interface PackedDomainParts {
  readonly text: string
  readonly starts: Int32Array
  readonly table: Int32Array
}

const isParts = (value: Iterable<string> | PackedDomainParts): value is PackedDomainParts =>
  value instanceof Object && "table" in value && value.table instanceof Int32Array

export class PackedDomainSet implements Iterable<string> {
  /** The entries, each followed by `SEPARATOR`. */
  readonly #text: string
  /** Where entry i starts in `#text`; one more, past the end. */
  readonly #starts: Int32Array
  /** Open addressing: entry number + 1 (0 marks an empty slot), at most half full. */
  readonly #table: Int32Array
  readonly #shift: number
  /** A bit per hash of every entry's parents (`mayHaveEntryBelow`), made on first use. */
  #parents: Int32Array | undefined

  /**
   * `domains` must not contain `SEPARATOR` (a host cannot); repeats are kept
   * once. Or the `parts` of a set built before, checked for their shape.
   */
  constructor(domains: Iterable<string> | PackedDomainParts) {
    if (isParts(domains)) {
      const { text, starts, table } = domains
      PackedDomainSet.checkParts(text.length, starts, table)
      this.#text = text
      this.#starts = starts
      this.#table = table
      this.#shift = 32 - Math.log2(table.length)
      return
    }
    const entries = [...new Set(domains)]
    this.#text = entries.length === 0 ? "" : `${entries.join(SEPARATOR)}${SEPARATOR}`
    this.#starts = new Int32Array(entries.length + 1)
    let bits = 4
    while (1 << bits < entries.length * 2) bits++
    this.#table = new Int32Array(1 << bits)
    this.#shift = 32 - bits
    const mask = this.#table.length - 1
    let start = 0
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      if (entry.includes(SEPARATOR)) throw new Error(`A domain cannot contain a line break: ${JSON.stringify(entry)}`)
      this.#starts[i] = start
      start += entry.length + 1
      let slot = Math.imul(hashOf(entry), spread) >>> this.#shift
      while (this.#table[slot] !== 0) slot = (slot + 1) & mask
      this.#table[slot] = i + 1
    }
    this.#starts[entries.length] = start
  }

  /**
   * Throws unless `starts` and `table` have the shape of a set's parts whose
   * text is `textLength` long: what the constructor checks, askable before
   * the text is read (`emailListsBuffer.ts` reads it on first use).
   */
  static checkParts(textLength: number, starts: Int32Array, table: Int32Array): void {
    const size = table.length
    if (size < 16 || (size & (size - 1)) !== 0 || starts.length === 0 || starts[starts.length - 1] !== textLength) {
      throw new Error("packed domain set: malformed parts")
    }
  }

  /** The set's state, to store and give back to the constructor. */
  parts(): PackedDomainParts {
    return { text: this.#text, starts: this.#starts, table: this.#table }
  }

  get size(): number {
    return this.#starts.length - 1
  }

  has(domain: string): boolean {
    const table = this.#table
    const mask = table.length - 1
    for (let slot = Math.imul(hashOf(domain), spread) >>> this.#shift; ; slot = (slot + 1) & mask) {
      const entry = table[slot]!
      if (entry === 0) return false
      const start = this.#starts[entry - 1]!
      if (this.#starts[entry]! - start - 1 === domain.length && this.#text.startsWith(domain, start)) return true
    }
  }

  /**
   * Whether an entry may lie strictly below `domain` (`x.mail.example` below
   * `mail.example` or `example`): false only when none does, so a caller can
   * skip asking about the hosts below it; true too when a parent's hash
   * shares its bit. The filter is made on first use, in one pass over the
   * text that allocates nothing per entry (a set of the ~120k disposable
   * domains' parents took 190-650 ms).
   */
  mayHaveEntryBelow(domain: string): boolean {
    this.#parents ??= this.#parentFilter()
    const bit = Math.imul(reverseHash(domain, 0, domain.length), spread) >>> PARENT_SHIFT
    return (this.#parents[bit >>> 5]! & (1 << (bit & 31))) !== 0
  }

  #parentFilter(): Int32Array {
    const parents = new Int32Array(1 << (PARENT_BITS - 5))
    const text = this.#text
    const starts = this.#starts
    for (let e = 0; e + 1 < starts.length; e++) {
      const start = starts[e]!
      // The entry's last character is before its separator; each dot ends the hash of the parent after it.
      let hash = 0x811c9dc5
      for (let i = starts[e + 1]! - 2; i > start; i--) {
        const code = text.charCodeAt(i)
        if (code === 0x2e) {
          const bit = Math.imul(hash, spread) >>> PARENT_SHIFT
          parents[bit >>> 5]! |= 1 << (bit & 31)
        }
        hash = Math.imul(hash ^ code, 0x01000193)
      }
    }
    return parents
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.size; i++) yield this.#text.slice(this.#starts[i], this.#starts[i + 1]! - 1)
  }
}
