/**
 * The hosts whose verdicts a thread keeps (`rowVerdicts.ts`), numbered once
 * for every target: a host's text and entry are kept once however many
 * targets judge it (a job of a target group, then one of an offer), and
 * each target keeps its verdicts by number. Started afresh when full;
 * `generation` then changes, and every target's verdicts by number with it.
 *
 * A job asks for the number of every email's host: a million look-ups for
 * ~113k hosts in bench:jobs' mix. In a `Map` of the hosts' strings each
 * look-up read three places far apart (the bucket, the entry, the key's
 * text), and was 8-12% of an offer job's CPU (perf of the daemon). Here a
 * host's slot holds its hash and number side by side, and its text lies in
 * one byte array, so a look-up reads the slot and then the text it
 * compares; and the kept hosts are three typed arrays (~4.5 MB for 113k
 * hosts), not 113k strings in a map for the collector to trace. Measured in
 * process on bench:jobs' 1M emails against the three-group offer (separate
 * processes alternating, one core): warm passes 1.86-1.89 s against
 * 1.94-2.14 s with the map, the first pass 3.4-3.8 s against 3.9-4.2 s.
 */

/** The hash of a host (ASCII; `text[from..]`), or -1 when it has a code unit beyond ASCII; exported for tests. */
export const hashOf = (text: string, from = 0): number => {
  let h = 0x811c9dc5
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) return -1
    h = Math.imul(h ^ c, 0x01000193)
  }
  // MurmurHash3's finish, so that the low bits that pick a slot depend on every character.
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) & 0x7fffffff
}

const MIN_SLOTS = 1024
const MIN_TEXT_BYTES = 16 * 1024

export class HostNumbers {
  readonly #max: number
  #generation = 0
  #size = 0
  /** Open addressing with linear probing, at most half full: each slot a host's hash and its number + 1 (0: empty). */
  #slots = new Int32Array(2 * MIN_SLOTS)
  /** The hosts' text one after another, host n from `#ends[n - 1]` (0 for the first) to `#ends[n]`. */
  #text = new Uint8Array(MIN_TEXT_BYTES)
  #ends = new Int32Array(MIN_SLOTS / 2)

  constructor(max: number) {
    this.#max = max
  }

  /** Which numbering this is: it changes each time the hosts are numbered afresh. */
  get generation(): number {
    return this.#generation
  }

  /** How many hosts are numbered. */
  get size(): number {
    return this.#size
  }

  /** The number of the host `text[from..]` (by default all of `text`: an email's domain is found in place), or -1. */
  find(text: string, from = 0): number {
    const hash = hashOf(text, from)
    if (hash < 0) return -1
    const slots = this.#slots
    const mask = (slots.length >>> 1) - 1
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const numbered = slots[2 * slot + 1]!
      if (numbered === 0) return -1
      if (slots[2 * slot] === hash && this.#is(numbered - 1, text, from)) return numbered - 1
    }
  }

  /**
   * Numbers `host` (not numbered yet), starting afresh first when full; -1
   * for a host it does not keep (one beyond ASCII: an international domain,
   * which is judged in full every time).
   */
  add(host: string): number {
    const hash = hashOf(host)
    if (hash < 0) return -1
    if (this.#size >= this.#max) this.#clear()
    if (2 * (this.#size + 1) > this.#slots.length >>> 1) this.#growSlots()
    const number = this.#size++
    this.#place(hash, number)
    this.#keepText(number, host)
    return number
  }

  /** Whether host `number`'s text is `host[from..]`. */
  #is(number: number, host: string, from: number): boolean {
    const start = number === 0 ? 0 : this.#ends[number - 1]!
    if (this.#ends[number]! - start !== host.length - from) return false
    const text = this.#text
    for (let i = from; i < host.length; i++) if (text[start + i - from] !== host.charCodeAt(i)) return false
    return true
  }

  #place(hash: number, number: number): void {
    const slots = this.#slots
    const mask = (slots.length >>> 1) - 1
    let slot = hash & mask
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask
    slots[2 * slot] = hash
    slots[2 * slot + 1] = number + 1
  }

  #keepText(number: number, host: string): void {
    const start = number === 0 ? 0 : this.#ends[number - 1]!
    const end = start + host.length
    if (end > this.#text.length) {
      const text = new Uint8Array(Math.max(2 * this.#text.length, end))
      text.set(this.#text.subarray(0, start))
      this.#text = text
    }
    for (let i = 0; i < host.length; i++) this.#text[start + i] = host.charCodeAt(i)
    if (number >= this.#ends.length) {
      const ends = new Int32Array(2 * this.#ends.length)
      ends.set(this.#ends)
      this.#ends = ends
    }
    this.#ends[number] = end
  }

  /** Twice the slots, every host placed again by its hash. */
  #growSlots(): void {
    const old = this.#slots
    this.#slots = new Int32Array(2 * old.length)
    for (let slot = 0; slot < old.length >>> 1; slot++) {
      const numbered = old[2 * slot + 1]!
      if (numbered !== 0) this.#place(old[2 * slot]!, numbered - 1)
    }
  }

  #clear(): void {
    this.#slots.fill(0)
    this.#size = 0
    this.#generation++
  }
}
