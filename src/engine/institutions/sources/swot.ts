/**
 * JetBrains swot's `lib/domains` tree → the domains with their names and
 * the three lists beside them. A domain is a file `<tld>/<...>/<label>.txt`
 * (`ng/edu/unaab.txt` is `unaab.edu.ng`) whose first line is the
 * institution's name and whose other lines are other names; a last line
 * `.group` marks a domain several institutions share.
 */

/** The files beside the domains: hosts that are not institutions, abused domains, academic suffixes. */
export const swotListFiles = ["stoplist.txt", "abused.txt", "tlds.txt"] as const
export type SwotListFile = (typeof swotListFiles)[number]

/** The non-empty, non-comment lines of a swot file, trimmed. */
export const swotLines = (text: string): Array<string> =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"))

/** `ng/edu/unaab.txt` → `unaab.edu.ng`; undefined for a file that is not a domain. */
export const swotDomainOf = (relativePath: string): string | undefined => {
  const parts = relativePath.split("/")
  const file = parts.pop()
  if (file === undefined || !file.endsWith(".txt") || parts.length === 0) return undefined
  return [file.slice(0, -4), ...parts.reverse()].join(".").toLowerCase()
}

/** `[domain, name, ...other names]` for one domain file; the `.group` marker is not a name. */
export const swotEntry = (domain: string, text: string): readonly [string, ...Array<string>] => [
  domain,
  ...swotLines(text).filter((line) => line !== ".group")
]
