/**
 * Role accounts: local parts that name a function, team or robot (`admin`,
 * `no-reply`, `sales.team`) rather than a person.
 *
 * Matching is case-insensitive and ignores a `+tag` (`Admin+x` is `admin`)
 * and surrounding quotes. Separators `.`, `-` and `_` are interchangeable:
 * `no_reply`, `no.reply`, `no-reply` and `noreply` all match whichever of them
 * the list spells. Dropping separators altogether is only trusted when at
 * least `minJoinedLength` letters remain, so initials such as `m.d` or `i-t`
 * do not become the roles `md` and `it`; shorter ones must match with their
 * separators (`co.op` is `co-op`).
 */

const minJoinedLength = 5

const separators = /[-._]/g
const isSeparator = (code: number): boolean => code === 0x2d || code === 0x2e || code === 0x5f

/** `sales.team` → `sales-team`: one spelling for any run of separators. */
const dashed = (value: string): string => value.replace(/[-._]+/g, "-")
const joined = (value: string): string => value.replace(separators, "")

const hasSeparator = (value: string): boolean => {
  for (let i = 0; i < value.length; i++) if (isSeparator(value.charCodeAt(i))) return true
  return false
}

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
      const compact = joined(entry)
      if (compact.length >= minJoinedLength && !this.#spellings.has(compact)) this.#spellings.set(compact, entry)
      const canonical = dashed(entry)
      if (!this.#spellings.has(canonical)) this.#spellings.set(canonical, entry)
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
    if (!hasSeparator(base)) return null
    // The spelling closest to the input first: separators kept (as hyphens), then dropped.
    const withHyphens = this.#spellings.get(dashed(base))
    if (withHyphens !== undefined) return withHyphens
    const compact = joined(base)
    return compact.length >= minJoinedLength ? (this.#spellings.get(compact) ?? null) : null
  }

  has(localPart: string): boolean {
    return this.match(localPart) !== null
  }
}
