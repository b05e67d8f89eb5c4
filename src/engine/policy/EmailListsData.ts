/**
 * The compiled, serialisable form of the email policy lists: what
 * `npm run build` writes to `dist/data/email-lists.json.gz` (see
 * `scripts/data/emailLists.ts`) and what `loadEmailLists` reads; the same
 * lists, with the disposable domains packed, are in `email-lists.bin`
 * (`emailListsBuffer.ts`), which `loadBuiltInEmailLists` reads.
 *
 * Each list is one string of entries joined by `\n`, lower-case, trimmed,
 * deduplicated, sorted and (for domains) ASCII: the file stays small and
 * `JSON.parse` reads one string per list instead of ~130k array elements.
 */

export const emailListsDataFormat = "campusgate-email-lists/1"

/** Where a list comes from: the npm package, its version and the file read from it. */
export interface EmailListSource {
  readonly package: string
  readonly version: string
  readonly file: string
}

/** How the compiler cleaned a list: entries read, kept, and why the others were dropped. */
export interface EmailListReport {
  readonly read: number
  readonly kept: number
  readonly duplicate: number
  readonly invalid: number
  /** Entries that are themselves an ICANN public suffix (`edu.pl`, `com.ar`): never a mail provider. */
  readonly publicSuffix: number
}

export interface EmailListData {
  readonly source: EmailListSource
  readonly report: EmailListReport
  /** Entries joined by `\n`; the empty string for an empty list. */
  readonly entries: string
}

/** The list names, one per concept the runtime answers. */
export const emailListNames = [
  /** Disposable (throwaway) mail domains; the domain itself only. */
  "disposable",
  /** Disposable mail domains whose every subdomain is disposable too. */
  "disposableWildcard",
  /** Free mail providers (anyone can sign up), including many disposable ones. */
  "freeMail",
  /** The few hundred most common mail providers: targets for "did you mean". */
  "commonMailProviders",
  /** Local parts that name a role, team or robot rather than a person (`admin`, `no-reply`). */
  "roleAccounts"
] as const

export type EmailListName = (typeof emailListNames)[number]

export interface EmailListsData {
  readonly format: typeof emailListsDataFormat
  readonly lists: { readonly [name in EmailListName]: EmailListData }
}

/** Splits a list's `entries` string. */
export const listEntries = (list: EmailListData): Array<string> => (list.entries === "" ? [] : list.entries.split("\n"))

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * Checks the shape of parsed JSON before use. The file is our own build
 * output, so this guards against a stale or truncated file, not hostile input:
 * it names the first thing wrong instead of failing later with a `TypeError`.
 */
export const asEmailListsData = (value: unknown): EmailListsData => {
  if (!isRecord(value) || value.format !== emailListsDataFormat) {
    throw new Error(`email lists: expected format "${emailListsDataFormat}" (rebuild with \`npm run build\`)`)
  }
  const lists = value.lists
  if (!isRecord(lists)) throw new Error("email lists: missing `lists`")
  for (const name of emailListNames) {
    const list = lists[name]
    if (!isRecord(list) || typeof list.entries !== "string" || !isRecord(list.source)) {
      throw new Error(`email lists: list "${name}" is missing or malformed`)
    }
  }
  return value as unknown as EmailListsData
}
