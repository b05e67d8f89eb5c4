/**
 * Role accounts: local parts that name a function, team or robot (`admin`,
 * `no-reply`, `sales.team`) rather than a person.
 *
 * Matching is case-insensitive and ignores a `+tag` (`Admin+x` is `admin`)
 * and surrounding quotes. Separators `.`, `-` and `_` are interchangeable:
 * `no_reply`, `no.reply`, `no-reply` and `noreply` all match whichever of them
 * the list spells. Dropping separators altogether is only trusted when at
 * least `minJoinedLength` characters remain, so initials such as `m.d` or
 * `i-t` do not become the roles `md` and `it`; shorter ones must match with
 * their separators in place (`co.op` is `co-op`).
 *
 * A lookup is one or two `Map` probes and at most one new string (the input
 * without separators); ~60 ns per local part on the built-in list
 * (`isRoleAccount`, figures in the part's hand-over report). Before them, a
 * filter answers most people at once (`RoleFilter`): a job judges a million
 * local parts, almost none of them roles, and the probes were ~4% of an
 * offer job's CPU (`perf` of the daemon on bench:jobs), their misses on a
 * map of the list's spellings and the strings they made.
 */

const minJoinedLength = 5

const isSeparator = (code: number): boolean => code === 0x2d || code === 0x2e || code === 0x5f

/** `sales.team` → `salesteam`, or the input itself when it has no separator. */
const withoutSeparators = (value: string): string => {
  let out = ""
  let segmentStart = 0
  for (let i = 0; i < value.length; i++) {
    if (isSeparator(value.charCodeAt(i))) {
      out += value.slice(segmentStart, i)
      segmentStart = i + 1
    }
  }
  return segmentStart === 0 ? value : out + value.slice(segmentStart)
}

/** `sales.team` → `sales-team`: one spelling for any run of separators. */
const withHyphens = (value: string): string => value.replace(/[-._]+/g, "-")

/**
 * One bit per hash of a spelling lower-cased and without separators: every
 * local part that `match` could find has the hash of such a spelling (a
 * listed entry, or one derived from it by dropping or unifying separators,
 * all of which read the same once separators are gone), so a local part
 * whose bit is clear is no role. 2^16 bits (8 KB) stay in cache; a list of
 * a few thousand spellings leaves most bits clear. A local part with a code
 * unit beyond ASCII is not hashed (its lower case is Unicode's) and always
 * takes the map; so does a spelling with one, which only such a local part
 * can match.
 */
class RoleFilter {
  static readonly #BITS = 1 << 16
  readonly #bits = new Int32Array(RoleFilter.#BITS >>> 5)

  /** The hash of `value[from, to)` lower-cased without separators, or -1 when a code unit is not ASCII. */
  static hash(value: string, from: number, to: number): number {
    let h = 0x811c9dc5
    for (let i = from; i < to; i++) {
      let c = value.charCodeAt(i)
      if (c >= 0x80) return -1
      if (isSeparator(c)) continue
      if ((c - 65) >>> 0 < 26) c += 32
      h = Math.imul(h ^ c, 0x01000193)
    }
    return (h ^ (h >>> 15)) & (RoleFilter.#BITS - 1)
  }

  add(spelling: string): void {
    const hash = RoleFilter.hash(spelling, 0, spelling.length)
    if (hash >= 0) this.#bits[hash >>> 5]! |= 1 << (hash & 31)
  }

  /** False when no spelling can match `value[from, to)`; true when one may (or it has non-ASCII). */
  mayMatch(value: string, from: number, to: number): boolean {
    const hash = RoleFilter.hash(value, from, to)
    return hash < 0 || (this.#bits[hash >>> 5]! & (1 << (hash & 31))) !== 0
  }
}

export class RoleAccounts {
  /** Distinct list entries. */
  readonly size: number
  /** Every accepted spelling → the list entry it stands for. */
  readonly #spellings = new Map<string, string>()
  readonly #filter = new RoleFilter()

  constructor(entries: Iterable<string>) {
    const list = [...new Set(Array.from(entries, (entry) => entry.trim().toLowerCase()))].filter((e) => e !== "")
    this.size = list.length
    // Entries as listed win over derived spellings, so a match names the closest entry.
    for (const entry of list) this.#spellings.set(entry, entry)
    for (const entry of list) {
      const joined = withoutSeparators(entry)
      const spelling = joined.length >= minJoinedLength ? joined : withHyphens(entry)
      if (!this.#spellings.has(spelling)) this.#spellings.set(spelling, entry)
    }
    for (const spelling of this.#spellings.keys()) this.#filter.add(spelling)
  }

  /** The list entry `localPart` stands for, or `null` when it names a person (as far as the list knows). */
  match(localPart: string): string | null {
    // The part the map is asked for: unquoted, up to a `+`.
    let from = 0
    let to = localPart.length
    if (to > 1 && localPart.charCodeAt(0) === 0x22 && localPart.charCodeAt(to - 1) === 0x22) {
      from = 1
      to--
    }
    const tag = localPart.indexOf("+", from)
    if (tag !== -1 && tag < to) to = tag
    if (!this.#filter.mayMatch(localPart, from, to)) return null
    const base = localPart.slice(from, to).toLowerCase()
    const direct = this.#spellings.get(base)
    if (direct !== undefined) return direct
    const joined = withoutSeparators(base)
    if (joined === base) return null
    return this.#spellings.get(joined.length >= minJoinedLength ? joined : withHyphens(base)) ?? null
  }

  has(localPart: string): boolean {
    return this.match(localPart) !== null
  }
}
