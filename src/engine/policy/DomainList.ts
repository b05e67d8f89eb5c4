/**
 * A set of mail domains answering "is this host on the list, and which entry
 * matched?". An entry always matches itself; a parent of the host matches
 * when the list's `covers` rule says the parent's subdomains are included
 * (`x.mail.example` under `mail.example`).
 *
 * The walk goes from the longest parent down and never tests the bare TLD;
 * `covers` must answer `false` for public suffixes, so a list entry such as
 * `edu.pl` can never capture a country's universities (which suffixes count
 * is the list's choice, see `EmailLists.ts`). Lookups allocate only the
 * parent strings they test and take a lower-case ASCII host, as the email
 * parser produces.
 */

export class DomainList {
  readonly #entries: ReadonlySet<string>
  readonly #covers: (parent: string) => boolean

  constructor(entries: ReadonlySet<string>, covers: (parent: string) => boolean) {
    this.#entries = entries
    this.#covers = covers
  }

  get size(): number {
    return this.#entries.size
  }

  /** The entry that lists `host` (the host itself or a covering parent), or `null`. */
  match(host: string): string | null {
    if (this.#entries.has(host)) return host
    let dot = host.indexOf(".")
    while (dot !== -1) {
      const next = host.indexOf(".", dot + 1)
      if (next === -1) break
      const parent = host.slice(dot + 1)
      if (this.#covers(parent)) return parent
      dot = next
    }
    return null
  }
}
