/**
 * The email policy lists at run time: disposable domains, free mail
 * providers and role accounts, answering the flags of a validation result's
 * `emailPolicy` detail. Built once, on the first question (~4 MB of heap
 * for the built-in lists: the disposable domains packed, `PackedDomainSet.ts`,
 * and read packed from the compiled file, `emailListsBuffer.ts`);
 * a domain lookup is one hash probe plus an allocation-free parent walk
 * (~70 ns), see `DomainList.ts`.
 *
 * Which parents of a host match:
 * - disposable: the host itself, or a parent on the wildcard list
 *   (`x.33mail.com`). Wildcard entries may be shared zones from the public
 *   suffix list's private section (`ddns.net`): the list names them precisely
 *   because every subdomain there is throwaway. ICANN suffixes never cover.
 * - free mail: the host itself, or a parent that is one provider's domain
 *   (`mail.yahoo.com`). A private-section suffix (`spb.ru`) is a registry of
 *   unrelated owners — swot lists St Petersburg universities under it — so it
 *   matches only itself.
 * - role accounts: see `RoleAccounts.ts`.
 */
import { getPublicSuffix } from "tldts"
import { builtInEmailListsFile, readBuiltInShared } from "../data/builtInData.ts"
import { DomainList } from "./DomainList.ts"
import { type EmailListName, type EmailListSource, type EmailListsData, listEntries } from "./EmailListsData.ts"
import { decodeEmailLists } from "./emailListsBuffer.ts"
import { PackedDomainSet } from "./PackedDomainSet.ts"
import { RoleAccounts } from "./RoleAccounts.ts"

export type EmailListSources = { readonly [name in EmailListName]: EmailListSource }
/** Entries loaded per list; `disposable` includes the wildcard entries, which also match themselves. */
export type EmailListCounts = { readonly [name in EmailListName]: number }

/** The wildcard entries that may cover their subdomains: never an ICANN public suffix. */
const disposableWildcards = (data: EmailListsData): Set<string> =>
  new Set(listEntries(data.lists.disposableWildcard).filter((domain) => getPublicSuffix(domain) !== domain))

/** The domains listed disposable themselves: the disposable list and the wildcard entries, packed. */
export const packDisposable = (data: EmailListsData, wildcard = disposableWildcards(data)): PackedDomainSet => {
  const disposable = new Set(listEntries(data.lists.disposable))
  for (const domain of wildcard) disposable.add(domain)
  return new PackedDomainSet(disposable)
}

/** What the lists answer from, made from their data on first use (`EmailLists`). */
interface BuiltLists {
  readonly disposable: DomainList
  readonly listedDisposable: PackedDomainSet
  readonly disposableWildcards: ReadonlySet<string>
  readonly freeMail: DomainList
  readonly commonMailProviders: ReadonlySet<string>
  readonly roleAccounts: RoleAccounts
  readonly counts: EmailListCounts
}

const buildLists = (data: EmailListsData, disposable: (() => PackedDomainSet) | undefined): BuiltLists => {
  const { lists } = data
  const wildcard = disposableWildcards(data)
  const freeMail = new Set(listEntries(lists.freeMail))
  // Asked only when a parent of a host is on the list (rare), so the ~9k entries are not all
  // checked against the suffix list at load; memoised per entry, so bounded by the list.
  const providerDomains = new Map<string, boolean>()
  const isProviderDomain = (parent: string): boolean => {
    if (!freeMail.has(parent)) return false
    let verdict = providerDomains.get(parent)
    if (verdict === undefined) {
      verdict = getPublicSuffix(parent, { allowPrivateDomains: true }) !== parent
      providerDomains.set(parent, verdict)
    }
    return verdict
  }
  const listedDisposable = disposable?.() ?? packDisposable(data, wildcard)
  const disposableList = new DomainList(listedDisposable, wildcard, (parent) => wildcard.has(parent))
  const commonMailProviders = new Set(listEntries(lists.commonMailProviders))
  const roleAccounts = new RoleAccounts(listEntries(lists.roleAccounts))
  return {
    disposable: disposableList,
    listedDisposable,
    disposableWildcards: wildcard,
    freeMail: new DomainList(freeMail, freeMail, isProviderDomain),
    commonMailProviders,
    roleAccounts,
    counts: {
      disposable: disposableList.size,
      disposableWildcard: wildcard.size,
      freeMail: freeMail.size,
      commonMailProviders: commonMailProviders.size,
      roleAccounts: roleAccounts.size
    }
  }
}

/**
 * The lists, built from their data on the first question (or `counts`): a
 * daemon's start reads and checks the compiled file (`emailListsBuffer.ts`)
 * but answers its first `/healthz` before any email is asked about, and the
 * ~9k free-mail domains, ~1k role accounts and the disposable domains' text
 * took 40-110 ms of that start (`npm run bench:start`); the host directory's
 * keys, made once the first response has gone (`warmEngineContext`), build
 * them then.
 */
export class EmailLists {
  readonly sources: EmailListSources
  /** The compiled form the lists were read from (`fromBuffer`), which their packed domains are views of. */
  readonly bytes: Uint8Array | undefined
  readonly #data: EmailListsData
  readonly #disposable: (() => PackedDomainSet) | undefined
  #built: BuiltLists | undefined

  /** The lists of a compiled buffer (`emailListsBuffer.ts`), read in place: shared memory stays shared (`JobThreads.ts`). */
  static fromBuffer(bytes: Uint8Array): EmailLists {
    const { data, disposable } = decodeEmailLists(bytes)
    return new EmailLists(data, disposable, bytes)
  }

  /**
   * `disposable`: makes the packed disposable domains as `packDisposable`
   * makes them from `data` (the compiled file holds them,
   * `emailListsBuffer.ts`); when given, `data`'s disposable entries are not
   * read.
   */
  constructor(data: EmailListsData, disposable?: () => PackedDomainSet, bytes?: Uint8Array) {
    this.bytes = bytes
    this.#data = data
    this.#disposable = disposable
    const { lists } = data
    this.sources = {
      disposable: lists.disposable.source,
      disposableWildcard: lists.disposableWildcard.source,
      freeMail: lists.freeMail.source,
      commonMailProviders: lists.commonMailProviders.source,
      roleAccounts: lists.roleAccounts.source
    }
  }

  get #lists(): BuiltLists {
    this.#built ??= buildLists(this.#data, this.#disposable)
    return this.#built
  }

  /** Entries loaded per list. */
  get counts(): EmailListCounts {
    return this.#lists.counts
  }

  /** The disposable-list entry matching a lower-case ASCII host (itself or a wildcard parent), or `null`. */
  matchDisposable(asciiDomain: string): string | null {
    return this.#lists.disposable.match(asciiDomain)
  }

  isDisposable(asciiDomain: string): boolean {
    return this.#lists.disposable.match(asciiDomain) !== null
  }

  /** The free-mail entry matching a lower-case ASCII host (itself or its provider's domain), or `null`. */
  matchFreeMail(asciiDomain: string): string | null {
    return this.#lists.freeMail.match(asciiDomain)
  }

  isFreeMail(asciiDomain: string): boolean {
    return this.#lists.freeMail.match(asciiDomain) !== null
  }

  /** Whether the host itself is on the disposable list (wildcard parents not considered). */
  isListedDisposable(asciiDomain: string): boolean {
    return this.#lists.disposable.has(asciiDomain)
  }

  /**
   * Whether a domain strictly below `domain` (lower-case ASCII) may be on
   * the disposable list itself: when not, no host below it is
   * (`isListedDisposable`), and a caller that knows a host's parent need not
   * ask (`PackedDomainSet.mayHaveEntryBelow`).
   */
  mayHaveListedDisposableBelow(domain: string): boolean {
    return this.#lists.listedDisposable.mayHaveEntryBelow(domain)
  }

  /** The domains that make every host below them disposable. */
  disposableWildcards(): Iterable<string> {
    return this.#lists.disposableWildcards
  }

  /** The free-mail list's domains. */
  freeMailDomains(): Iterable<string> {
    return this.#lists.freeMail.entries()
  }

  /** The most common mail providers: the targets for "did you mean". */
  commonMailProviders(): Iterable<string> {
    return this.#lists.commonMailProviders
  }

  /** Whether the exact domain is one of the most common mail providers: a target for "did you mean". */
  isCommonMailProvider(asciiDomain: string): boolean {
    return this.#lists.commonMailProviders.has(asciiDomain)
  }

  /** The role-list entry a local part stands for (`No_Reply+x` → `no-reply`), or `null`. */
  matchRoleAccount(localPart: string): string | null {
    return this.#lists.roleAccounts.match(localPart)
  }

  isRoleAccount(localPart: string): boolean {
    return this.#lists.roleAccounts.match(localPart) !== null
  }
}

/** Builds the runtime lists from compiled data (the built-in file, or test data). */
export const loadEmailLists = (data: EmailListsData): EmailLists => new EmailLists(data)

/**
 * Loads the lists' binary form, `dist/data/email-lists.bin` (the lists of
 * `email-lists.json.gz` with the disposable domains packed ready, ~5 ms instead
 * of ~100 ms), read and checked now, built on first use; throws
 * `BuiltInDataMissing` before `npm run build`.
 */
export const loadBuiltInEmailLists = (): EmailLists => EmailLists.fromBuffer(readBuiltInShared(builtInEmailListsFile))
