/**
 * The domains "did you mean" may suggest (institution domains, common mail
 * providers), indexed so that `suggestDomain` can test the ~77 one-edit
 * variants per character of a domain without building them as strings.
 *
 * Why: building a variant and hashing it in a `Set` costs ~100 ns in V8 (the
 * new string must be flattened and hashed), so through a plain predicate a
 * 27-character domain with no suggestion took ~500 µs. Here each variant's
 * polynomial hash is derived arithmetically from prefix and suffix hashes of
 * the typed domain and tested against a Bloom filter; only filter hits (real
 * matches, plus ~0.2% of misses at 24k domains) are built and confirmed
 * exactly. The same case takes ~50 µs. Figures in the hand-over report of
 * the policy part (Node 24, shared 2-core machine).
 *
 * Guarantees: `has` is exact; `knownVariant` never answers a domain that is
 * not in the set; nothing is allocated per probe. Domains are compared as
 * given: pass lower-case ASCII (IDNs as `xn--`). Not reentrant: `prepare`
 * sets the domain that `knownVariant` edits (JavaScript is single-threaded
 * and `suggestDomain` calls nothing in between).
 */

/** Hash multiplier: an odd prime, so multiplication is invertible modulo 2^32. */
const multiplier = 0x01000193
/** Two multipliers deriving the filter's two bit positions from one hash (the first is the golden ratio × 2^32). */
const spreadA = 0x9e3779b1
const spreadB = 0x85ebca6b

const hashOf = (text: string): number => {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, multiplier) + text.charCodeAt(i)) | 0
  return hash
}

/** Longest domain a probe is prepared for (RFC 1035: 253 characters), plus room for one insertion. */
const maxLength = 256

export class KnownDomains {
  readonly #domains: ReadonlySet<string>
  /**
   * A two-bit Bloom filter of the domains' hashes, 32 bits per domain: at
   * 24k domains it is 128 KB (cache-resident) and lets through ~0.2% of
   * misses, each then rejected by one exact `Set` check.
   */
  readonly #filter: Int32Array
  readonly #shift: number
  // Scratch for the domain being probed: prefix hashes, suffix hashes, powers of the multiplier.
  readonly #prefix = new Int32Array(maxLength + 1)
  readonly #suffix = new Int32Array(maxLength + 1)
  readonly #power = new Int32Array(maxLength + 3)
  #domain = ""

  constructor(domains: Iterable<string>) {
    this.#domains = new Set(domains)
    let bits = 10
    while (1 << bits < this.#domains.size * 32) bits++
    this.#filter = new Int32Array(1 << (bits - 5))
    this.#shift = 32 - bits
    for (const domain of this.#domains) {
      const hash = hashOf(domain)
      const a = Math.imul(hash, spreadA) >>> this.#shift
      const b = Math.imul(hash, spreadB) >>> this.#shift
      this.#filter[a >>> 5]! |= 1 << (a & 31)
      this.#filter[b >>> 5]! |= 1 << (b & 31)
    }
    this.#power[0] = 1
    for (let k = 1; k < this.#power.length; k++) this.#power[k] = Math.imul(this.#power[k - 1]!, multiplier)
  }

  get size(): number {
    return this.#domains.size
  }

  has(domain: string): boolean {
    return this.#domains.has(domain)
  }

  /** Prepares `knownVariant` for edits of `domain` (at most 255 characters). */
  prepare(domain: string): void {
    if (domain.length >= maxLength) throw new RangeError(`domain longer than ${maxLength - 1} characters`)
    const n = domain.length
    this.#domain = domain
    this.#prefix[0] = 0
    for (let i = 0; i < n; i++) {
      this.#prefix[i + 1] = (Math.imul(this.#prefix[i]!, multiplier) + domain.charCodeAt(i)) | 0
    }
    this.#suffix[n] = 0
    for (let j = n - 1; j >= 0; j--) {
      this.#suffix[j] = (Math.imul(domain.charCodeAt(j), this.#power[n - 1 - j]!) + this.#suffix[j + 1]!) | 0
    }
  }

  #mayHave(hash: number): boolean {
    const a = Math.imul(hash, spreadA) >>> this.#shift
    if ((this.#filter[a >>> 5]! & (1 << (a & 31))) === 0) return false
    const b = Math.imul(hash, spreadB) >>> this.#shift
    return (this.#filter[b >>> 5]! & (1 << (b & 31))) !== 0
  }

  /**
   * The prepared domain with `[from, to)` replaced by the characters `first`
   * and `second` (char codes, or -1 for none), if that variant is a known
   * domain; otherwise `null`.
   */
  knownVariant(from: number, to: number, first: number, second: number): string | null {
    const tail = this.#domain.length - to
    const inserted = first < 0 ? 0 : second < 0 ? 1 : 2
    const middle = first < 0 ? 0 : second < 0 ? first : (Math.imul(first, multiplier) + second) | 0
    const hash =
      (Math.imul(this.#prefix[from]!, this.#power[inserted + tail]!) +
        Math.imul(middle, this.#power[tail]!) +
        this.#suffix[to]!) |
      0
    if (!this.#mayHave(hash)) return null
    const chars = first < 0 ? "" : second < 0 ? String.fromCharCode(first) : String.fromCharCode(first, second)
    const variant = this.#domain.slice(0, from) + chars + this.#domain.slice(to)
    return this.#domains.has(variant) ? variant : null
  }
}
