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
 * (`isRoleAccount`, figures in the part's hand-over report).
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

export class RoleAccounts {
  /** Distinct list entries. */
  readonly size: number
  /** Every accepted spelling → the list entry it stands for. */
  readonly #spellings = new Map<string, string>()

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
  }

  /** The list entry `localPart` stands for, or `null` when it names a person (as far as the list knows). */
  match(localPart: string): string | null {
    let base = localPart
    if (base.length > 1 && base.charCodeAt(0) === 0x22 && base.charCodeAt(base.length - 1) === 0x22) {
      base = base.slice(1, -1)
    }
    const plus = base.indexOf("+")
    if (plus !== -1) base = base.slice(0, plus)
    base = base.toLowerCase()
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
