/**
 * Institution search over the whole index: accent- and case-insensitive,
 * every query word a prefix of some word of the institution's name, other
 * names, acronyms or domain labels ("tech univ munich" finds the Technical
 * University of Munich, "TUM" and "tum" find it by acronym and domain), with
 * country and type filters.
 *
 * The words of all institutions are kept once, sorted, so the words a query
 * word is a prefix of are one contiguous range (two binary searches), and
 * how many institutions hold them is a difference of prefix sums. The query
 * word with the fewest institutions gives the candidates; each candidate is
 * checked against the other words by a binary search in its own sorted word
 * ids. Ranking: whole words (more for a domain's own label: `mit`), words
 * in the main name, how many datasets list it, then shorter names. Built on the first search of a table (a few hundred milliseconds),
 * never at start-up; a search then takes well under a millisecond
 * (measured: bench/search.ts).
 */
import type { Institution, InstitutionType } from "../../domain/Institution.ts"
import { nameWords } from "../../domain/nameKey.ts"
import type { InstitutionTable } from "./InstitutionTable.ts"

export interface InstitutionQuery {
  /** Free text; empty lists every institution passing the filters, by name. */
  readonly q?: string | undefined
  readonly country?: string | undefined
  readonly type?: InstitutionType | undefined
  readonly limit: number
  /** How many matches to skip (the page's start). */
  readonly offset?: number | undefined
}

export interface InstitutionPage {
  readonly institutions: ReadonlyArray<Institution>
  /** Matches in all. */
  readonly total: number
}

/** The words an institution is found by: from its names, and the first label of each domain. */
const wordsOf = (institution: Institution): { readonly main: Set<string>; readonly other: Set<string> } => {
  const main = new Set(institution.name === null ? [] : nameWords(institution.name))
  const other = new Set<string>()
  for (const name of institution.names) for (const word of nameWords(name)) if (!main.has(word)) other.add(word)
  for (const domain of institution.domains) {
    const label = domain.slice(0, domain.indexOf("."))
    if (!main.has(label)) other.add(label)
  }
  return { main, other }
}

const lowerBound = (sorted: ReadonlyArray<string>, word: string): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < word) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Whether the sorted ids `ids[from, to)` hold one in `[lo, hi)`. */
const holdsIn = (ids: Int32Array, from: number, to: number, lo: number, hi: number): boolean => {
  let a = from
  let b = to
  while (a < b) {
    const mid = (a + b) >>> 1
    if (ids[mid]! < lo) a = mid + 1
    else b = mid
  }
  return a < to && ids[a]! < hi
}

export class InstitutionSearch {
  readonly #institutions: ReadonlyArray<Institution>
  /** Every word, sorted. */
  readonly #words: ReadonlyArray<string>
  /**
   * `#postingStart[w]..#postingStart[w+1]` in `#postings`: the institutions
   * holding word `w`, each as `index * 2 + 1` when the word is in its main
   * name, else `index * 2`.
   */
  readonly #postingStart: Int32Array
  readonly #postings: Int32Array
  /** Per institution, its main-name word ids and its other word ids, each sorted. */
  readonly #mainStart: Int32Array
  readonly #otherStart: Int32Array
  readonly #ids: Int32Array
  /** Institutions in name order, for listings without words. */
  #byName: Int32Array | undefined
  /** Marks of the current search's candidates, by generation, and their best score for a one-word query. */
  readonly #seen: Int32Array
  readonly #best: Int32Array
  /** Per institution, the rank it starts with (datasets listing it, at most 3) and its name's length (at most 999). */
  readonly #baseScore: Uint8Array
  readonly #nameLength: Uint16Array
  #generation = 0

  private constructor(institutions: ReadonlyArray<Institution>) {
    this.#institutions = institutions
    const perInstitution = institutions.map(wordsOf)
    const all = new Set<string>()
    for (const { main, other } of perInstitution) {
      for (const word of main) all.add(word)
      for (const word of other) all.add(word)
    }
    const words = [...all].sort()
    const idOf = new Map(words.map((word, id) => [word, id]))
    const counts = new Int32Array(words.length + 1)
    let total = 0
    for (const { main, other } of perInstitution) {
      for (const word of main) counts[idOf.get(word)!]!++
      for (const word of other) counts[idOf.get(word)!]!++
      total += main.size + other.size
    }
    const postingStart = new Int32Array(words.length + 1)
    for (let w = 0; w < words.length; w++) postingStart[w + 1] = postingStart[w]! + counts[w]!
    const postings = new Int32Array(total)
    const fill = postingStart.slice(0, words.length)
    const mainStart = new Int32Array(institutions.length + 1)
    const otherStart = new Int32Array(institutions.length)
    const ids = new Int32Array(total)
    let at = 0
    perInstitution.forEach(({ main, other }, i) => {
      mainStart[i] = at
      const mainIds = [...main].map((w) => idOf.get(w)!).sort((a, b) => a - b)
      const otherIds = [...other].map((w) => idOf.get(w)!).sort((a, b) => a - b)
      for (const id of mainIds) ids[at++] = id
      otherStart[i] = at
      for (const id of otherIds) ids[at++] = id
      for (const id of mainIds) postings[fill[id]!++] = i * 2 + 1
      for (const id of otherIds) postings[fill[id]!++] = i * 2
    })
    mainStart[institutions.length] = at
    this.#words = words
    this.#postingStart = postingStart
    this.#postings = postings
    this.#mainStart = mainStart
    this.#otherStart = otherStart
    this.#ids = ids
    this.#seen = new Int32Array(institutions.length)
    this.#best = new Int32Array(institutions.length)
    this.#baseScore = Uint8Array.from(institutions, (i) => Math.min(i.sources.length, 3))
    this.#nameLength = Uint16Array.from(institutions, (i) => Math.min(i.name?.length ?? 999, 999))
  }

  static of(table: InstitutionTable): InstitutionSearch {
    let search = built.get(table)
    if (search === undefined) {
      search = new InstitutionSearch(table.institutions)
      built.set(table, search)
    }
    return search
  }

  get size(): number {
    return this.#institutions.length
  }

  search(query: InstitutionQuery): InstitutionPage {
    const words = query.q === undefined ? [] : [...new Set(nameWords(query.q))]
    const offset = query.offset ?? 0
    const passes = (i: number): boolean => {
      const institution = this.#institutions[i]!
      return (
        (query.country === undefined || institution.country === query.country) &&
        (query.type === undefined || institution.type === query.type)
      )
    }
    if (words.length === 0) {
      const order = this.#nameOrder()
      const matches: Array<number> = []
      for (const i of order) if (passes(i)) matches.push(i)
      return this.#page(matches, offset, query.limit)
    }
    // Each word's range of dictionary words it is a prefix of; the narrowest gives the candidates.
    const ranges = words.map((word) => {
      const lo = lowerBound(this.#words, word)
      // A single ASCII letter or digit is a word of its own ("u", "3"), not the start of thousands.
      const hi =
        word.length === 1 && word < "\u0080"
          ? lo + (this.#words[lo] === word ? 1 : 0)
          : lowerBound(this.#words, `${word}\uffff`)
      return { lo, hi, exact: this.#words[lo] === word, size: this.#postingStart[hi]! - this.#postingStart[lo]! }
    })
    if (ranges.some((range) => range.size === 0)) return { institutions: [], total: 0 }
    const filtered = query.country !== undefined || query.type !== undefined
    const generation = ++this.#generation
    const seen = this.#seen
    const postings = this.#postings
    const postingStart = this.#postingStart
    const keys = new Float64Array(ranges.reduce((n, r) => Math.min(n, r.size), Number.POSITIVE_INFINITY))
    let count = 0
    const nameLength = this.#nameLength
    // Score, then shorter names, then index order (stable across calls).
    const key = (i: number, score: number): number =>
      score * 2 ** 37 + (999 - nameLength[i]!) * 2 ** 20 + (2 ** 20 - 1 - i)
    if (ranges.length === 1) {
      // One word: its postings say where each institution holds it, so no per-candidate search.
      const { lo, hi, exact } = ranges[0]!
      const best = this.#best
      const candidates: Array<number> = []
      for (let w = lo; w < hi; w++) {
        const whole = exact && w === lo
        for (let p = postingStart[w]!; p < postingStart[w + 1]!; p++) {
          const i = postings[p]! >> 1
          const score = (whole ? 3 : 1) + (postings[p]! & 1) + (whole && this.#isDomainLabel(i, words[0]!) ? 2 : 0)
          if (seen[i] !== generation) {
            seen[i] = generation
            best[i] = filtered && !passes(i) ? -1 : score
            if (best[i]! >= 0) candidates.push(i)
          } else if (best[i]! >= 0 && score > best[i]!) best[i] = score
        }
      }
      const base = this.#baseScore
      for (const i of candidates) keys[count++] = key(i, best[i]! + base[i]!)
    } else {
      // The narrowest word gives the candidates; each is checked against the others.
      const pivot = ranges.reduce((a, b) => (b.size < a.size ? b : a))
      for (let p = postingStart[pivot.lo]!; p < postingStart[pivot.hi]!; p++) {
        const i = postings[p]! >> 1
        if (seen[i] === generation) continue
        seen[i] = generation
        if (filtered && !passes(i)) continue
        const score = this.#score(i, ranges)
        if (score >= 0) keys[count++] = key(i, score)
      }
    }
    const top = topKeys(keys.subarray(0, count), offset + query.limit)
    const matches = new Int32Array(top.length)
    for (let k = 0; k < top.length; k++) matches[k] = 2 ** 20 - 1 - (top[k]! % 2 ** 20)
    return this.#page(matches, offset, query.limit, count)
  }

  /**  /**
   * The score of institution `i` for the query word ranges, or -1 when a
   * word matches none of its words: per word, 3 for a whole word (an
   * acronym, a domain label), else 1, and 1 more in the main name; plus one
   * per dataset that lists it (the better known first).
   */
  #score(i: number, ranges: ReadonlyArray<{ lo: number; hi: number; exact: boolean }>): number {
    const ids = this.#ids
    const mainFrom = this.#mainStart[i]!
    const otherFrom = this.#otherStart[i]!
    const end = this.#mainStart[i + 1]!
    let score = this.#baseScore[i]!
    for (const { lo, hi, exact } of ranges) {
      const inMain = holdsIn(ids, mainFrom, otherFrom, lo, hi)
      if (!inMain && !holdsIn(ids, otherFrom, end, lo, hi)) return -1
      const whole = exact && (holdsIn(ids, mainFrom, otherFrom, lo, lo + 1) || holdsIn(ids, otherFrom, end, lo, lo + 1))
      score += (whole ? 3 : 1) + (inMain ? 1 : 0) + (whole && this.#isDomainLabel(i, this.#words[lo]!) ? 2 : 0)
    }
    return score
  }

  /** Whether `word` is the first label of one of institution `i`'s domains (`mit` of `mit.edu`). */
  #isDomainLabel(i: number, word: string): boolean {
    for (const domain of this.#institutions[i]!.domains) {
      if (domain.length > word.length && domain.charCodeAt(word.length) === 46 && domain.startsWith(word)) return true
    }
    return false
  }

  #nameOrder(): Int32Array {
    if (this.#byName === undefined) {
      const keys = this.#institutions.map((institution) => (institution.name ?? institution.id).toLowerCase())
      const order = Array.from(this.#institutions, (_, i) => i)
      order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b))
      this.#byName = Int32Array.from(order)
    }
    return this.#byName
  }

  #page(matches: ArrayLike<number>, offset: number, limit: number, total = matches.length): InstitutionPage {
    const institutions: Array<Institution> = []
    for (let k = offset; k < Math.min(matches.length, offset + limit); k++) {
      institutions.push(this.#institutions[matches[k]!]!)
    }
    return { institutions, total }
  }
}

const built = new WeakMap<InstitutionTable, InstitutionSearch>()

/**
 * The `n` largest keys, largest first. A page needs only the matches up to
 * its end, so a common prefix ("uni", thousands of matches) keeps a small
 * heap instead of sorting them all (measured: bench/search.ts).
 */
const topKeys = (keys: Float64Array, n: number): Float64Array => {
  if (n <= 0) return new Float64Array(0)
  if (keys.length <= n * 4) return keys.slice().sort().reverse().subarray(0, n)
  // A min-heap of the n largest so far.
  const heap = new Float64Array(n)
  let size = 0
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!
    if (size < n) {
      let i = size++
      heap[i] = key
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (heap[parent]! <= heap[i]!) break
        ;[heap[parent], heap[i]] = [heap[i]!, heap[parent]!]
        i = parent
      }
    } else if (key > heap[0]!) {
      heap[0] = key
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        const right = left + 1
        let smallest = i
        if (left < n && heap[left]! < heap[smallest]!) smallest = left
        if (right < n && heap[right]! < heap[smallest]!) smallest = right
        if (smallest === i) break
        ;[heap[smallest], heap[i]] = [heap[i]!, heap[smallest]!]
        i = smallest
      }
    }
  }
  return heap.subarray(0, size).sort().reverse()
}
