/**
 * A set of mail domains answering "is this host on the list, and which entry
 * matched?". An entry always matches itself; a parent of the host matches
 * when it is one of the list's covering entries and the list's `covers` rule
 * accepts it (`x.mail.example` under `mail.example`).
 *
 * Parents are found in one right-to-left pass over the host, hashing as it
 * goes (the technique of tldts' suffix lookup): at each dot the hash of the
 * parent to its right is probed in a small table of the covering entries'
 * hashes, and only a hit is sliced out and confirmed. So a host allocates
 * nothing unless a parent really is listed; the walk never tests the bare
 * TLD, and `covers` must answer `false` for public suffixes, so an entry such
 * as `edu.pl` can never capture a country's universities. Hosts are
 * lower-case ASCII, as the email parser produces.
 */

/** Multiplier of the polynomial hash over code units, taken right to left. */
const multiplier = 0x01000193
/** Fibonacci hashing: spreads the hash's high bits over the table index. */
const spread = 0x9e3779b1

/** The same right-to-left hash the walk computes, for one whole entry. */
const reverseHash = (domain: string): number => {
  let hash = 0
  for (let i = domain.length - 1; i >= 0; i--) hash = (Math.imul(hash, multiplier) + domain.charCodeAt(i)) | 0
  return hash
}

/** The listed domains: a `Set`, or a `PackedDomainSet` for a large list. */
export interface DomainEntries extends Iterable<string> {
  readonly size: number
  has(domain: string): boolean
}

export class DomainList {
  readonly #entries: DomainEntries
  readonly #covers: (parent: string) => boolean
  /** Open addressing: hashes of the covering entries (0 marks an empty slot; hash 0 is stored as 1). */
  readonly #parentHashes: Int32Array
  readonly #shift: number

  /**
   * @param entries the listed domains, each matching itself.
   * @param coveringCandidates the domains that may cover their subdomains.
   * @param covers the final word on a candidate parent found in a host.
   */
  constructor(entries: DomainEntries, coveringCandidates: Iterable<string>, covers: (parent: string) => boolean) {
    this.#entries = entries
    this.#covers = covers
    const candidates = [...new Set(coveringCandidates)]
    // At most a quarter full, so a miss almost always stops at its first slot.
    let bits = 4
    while (1 << bits < candidates.length * 4) bits++
    this.#parentHashes = new Int32Array(1 << bits)
    this.#shift = 32 - bits
    const mask = this.#parentHashes.length - 1
    for (const candidate of candidates) {
      const hash = reverseHash(candidate) || 1
      let slot = Math.imul(hash, spread) >>> this.#shift
      while (this.#parentHashes[slot] !== 0 && this.#parentHashes[slot] !== hash) slot = (slot + 1) & mask
      this.#parentHashes[slot] = hash
    }
  }

  get size(): number {
    return this.#entries.size
  }

  /** Whether `host` itself is listed (covering parents not considered). */
  has(host: string): boolean {
    return this.#entries.has(host)
  }

  /** The listed domains (each matching itself). */
  entries(): Iterable<string> {
    return this.#entries
  }

  /** The entry that lists `host` (the host itself or a covering parent), or `null`. */
  match(host: string): string | null {
    if (this.#entries.has(host)) return host
    return this.#matchParent(host)
  }

  /** The longest covering parent of `host`, scanning right to left. */
  #matchParent(host: string): string | null {
    const table = this.#parentHashes
    const mask = table.length - 1
    let hash = 0
    let dots = 0
    let found: string | null = null
    for (let i = host.length - 1; i > 0; i--) {
      const code = host.charCodeAt(i)
      if (code === 0x2e && dots++ > 0) {
        // host[i + 1..] is a parent of two labels or more: probe it.
        const probe = hash || 1
        for (let slot = Math.imul(probe, spread) >>> this.#shift; ; slot = (slot + 1) & mask) {
          const stored = table[slot]!
          if (stored === 0) break
          if (stored === probe) {
            const parent = host.slice(i + 1)
            // Keep scanning: a longer parent found later would be more specific. Shorter ones come first here.
            if (this.#covers(parent)) found = parent
            break
          }
        }
      }
      hash = (Math.imul(hash, multiplier) + code) | 0
    }
    return found
  }
}
