/**
 * The email policy lists at run time: disposable domains, free mail
 * providers and role accounts, answering the flags of a validation result's
 * `emailPolicy` detail. Built once at load (~4 MB of heap for the built-in
 * lists: the disposable domains packed, `PackedDomainSet.ts`, and read
 * packed from the compiled file, `emailListsBuffer.ts`);
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

export class EmailLists {
  readonly sources: EmailListSources
  readonly counts: EmailListCounts
  readonly #disposable: DomainList
  readonly #listedDisposable: PackedDomainSet
  readonly #disposableWildcards: ReadonlySet<string>
  readonly #freeMail: DomainList
  readonly #commonMailProviders: ReadonlySet<string>
  readonly #roleAccounts: RoleAccounts

  /**
   * `disposable`: the packed disposable domains as `packDisposable` makes
   * them from `data` (the compiled file holds them, `emailListsBuffer.ts`);
   * when given, `data`'s disposable entries are not read.
   */
  /** The compiled form the lists were read from (`fromBuffer`), which their packed domains are views of. */
  readonly bytes: Uint8Array | undefined

  /** The lists of a compiled buffer (`emailListsBuffer.ts`), read in place: shared memory stays shared (`JobThreads.ts`). */
  static fromBuffer(bytes: Uint8Array): EmailLists {
    const { data, disposable } = decodeEmailLists(bytes)
    return new EmailLists(data, disposable, bytes)
  }

  constructor(data: EmailListsData, disposable?: PackedDomainSet, bytes?: Uint8Array) {
    this.bytes = bytes
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
    this.#listedDisposable = disposable ?? packDisposable(data, wildcard)
    this.#disposable = new DomainList(this.#listedDisposable, wildcard, (parent) => wildcard.has(parent))
    this.#disposableWildcards = wildcard
    this.#freeMail = new DomainList(freeMail, freeMail, isProviderDomain)
    this.#commonMailProviders = new Set(listEntries(lists.commonMailProviders))
    this.#roleAccounts = new RoleAccounts(listEntries(lists.roleAccounts))
    this.sources = {
      disposable: lists.disposable.source,
      disposableWildcard: lists.disposableWildcard.source,
      freeMail: lists.freeMail.source,
      commonMailProviders: lists.commonMailProviders.source,
      roleAccounts: lists.roleAccounts.source
    }
    this.counts = {
      disposable: this.#disposable.size,
      disposableWildcard: wildcard.size,
      freeMail: freeMail.size,
      commonMailProviders: this.#commonMailProviders.size,
      roleAccounts: this.#roleAccounts.size
    }
  }

  /** The disposable-list entry matching a lower-case ASCII host (itself or a wildcard parent), or `null`. */
  matchDisposable(asciiDomain: string): string | null {
    return this.#disposable.match(asciiDomain)
  }

  isDisposable(asciiDomain: string): boolean {
    return this.#disposable.match(asciiDomain) !== null
  }

  /** The free-mail entry matching a lower-case ASCII host (itself or its provider's domain), or `null`. */
  matchFreeMail(asciiDomain: string): string | null {
    return this.#freeMail.match(asciiDomain)
  }

  isFreeMail(asciiDomain: string): boolean {
    return this.#freeMail.match(asciiDomain) !== null
  }

  /** Whether the host itself is on the disposable list (wildcard parents not considered). */
  isListedDisposable(asciiDomain: string): boolean {
    return this.#disposable.has(asciiDomain)
  }

  /**
   * Whether a domain strictly below `domain` (lower-case ASCII) may be on
   * the disposable list itself: when not, no host below it is
   * (`isListedDisposable`), and a caller that knows a host's parent need not
   * ask (`PackedDomainSet.mayHaveEntryBelow`).
   */
  mayHaveListedDisposableBelow(domain: string): boolean {
    return this.#listedDisposable.mayHaveEntryBelow(domain)
  }

  /** The domains that make every host below them disposable. */
  disposableWildcards(): Iterable<string> {
    return this.#disposableWildcards
  }

  /** The free-mail list's domains. */
  freeMailDomains(): Iterable<string> {
    return this.#freeMail.entries()
  }

  /** The most common mail providers: the targets for "did you mean". */
  commonMailProviders(): Iterable<string> {
    return this.#commonMailProviders
  }

  /** Whether the exact domain is one of the most common mail providers: a target for "did you mean". */
  isCommonMailProvider(asciiDomain: string): boolean {
    return this.#commonMailProviders.has(asciiDomain)
  }

  /** The role-list entry a local part stands for (`No_Reply+x` → `no-reply`), or `null`. */
  matchRoleAccount(localPart: string): string | null {
    return this.#roleAccounts.match(localPart)
  }

  isRoleAccount(localPart: string): boolean {
    return this.#roleAccounts.match(localPart) !== null
  }
}

/** Builds the runtime lists from compiled data (the built-in file, or test data). */
export const loadEmailLists = (data: EmailListsData): EmailLists => new EmailLists(data)

/**
 * Loads the lists' binary form, `dist/data/email-lists.bin` (the lists of
^ * `email-lists.json.gz` with the disposable domains packed ready, ~5 ms instead
 * of ~100 ms); throws `BuiltInDataMissing` before `npm run build`.
 */
export const loadBuiltInEmailLists = (): EmailLists => EmailLists.fromBuffer(readBuiltInShared(builtInEmailListsFile))
