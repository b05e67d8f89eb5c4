/**
 * Everything the per-email path asks about a host — its institution-index
 * match and whether it is disposable or free mail — answered by one walk
 * over one table of keys (`SuffixTable.ts`), instead of a walk per source.
 *
 * The table's keys are the domains that speak for the hosts below them, or
 * whose facts are worth keeping: the institution table's listed, stoplisted
 * and suffix-rule domains, the free-mail domains and the disposable
 * wildcards. The longest key that is a suffix of a host speaks for it, since
 * no such domain lies in between. What a key says is computed on its first
 * use by asking the sources themselves (`InstitutionTable.lookup`,
 * `EmailLists.isDisposable` / `isFreeMail`), once for the key as a whole
 * host and once for any host below it, so the answers are theirs by
 * construction. The plain disposable domains (~120k, each speaking only for
 * itself) stay out of the table: a host that is not a key is checked against
 * that list directly. Keeping the table to ~50k keys keeps the probe, which is
 * most of the cost, mostly in cache (measured: bench/library.ts).
 *
 * Under a bare suffix rule (`edu`) the matched domain is the host's own
 * label (`newcollege.edu`): such a domain becomes a key itself on first
 * sight (up to a bound), so it too is answered from the table afterwards. A
 * host allocates nothing once its key is known.
 */
import type { HostMatch, InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EmailLists } from "../policy/EmailLists.ts"
import type { InstitutionVerdict } from "./institutionVerdict.ts"
import { SuffixTable } from "./SuffixTable.ts"

/**
 * Facts kept in the table, with room for values callers derive from them (see `HostDirectory.memo`).
 * The fields are laid out in the order the per-email path reads them, its facts then its first
 * remembered value, so that a host's judgement reads one stretch of memory.
 */
class StoredFacts {
  /** `match.kind`, `match.matchedDomain` and whether the match is an abused listed domain, read without following `match`. */
  readonly matchKind: HostMatch["kind"]
  readonly matchedDomain: string | null
  readonly disposable: boolean
  readonly freeMail: boolean
  readonly abused: boolean
  memoOwner: object | null = null
  memo: unknown = null
  /**
   * When the first owner's value is a target group's verdict (`keepVerdictFields`), the fields of it that
   * the per-email path reads, kept in the facts themselves: judging a host then reads the facts and not,
   * after them, the verdict — a dependent read that took ~15% of bench/library.ts's CPU profile.
   */
  verdictRole: InstitutionVerdict["role"] | null = null
  verdictRoleRefused = false
  verdictAbusedRejected = false
  verdictDomain: InstitutionVerdict["domain"] | null = null
  verdictGeography: InstitutionVerdict["geography"] | null = null
  verdictOrganizationType: InstitutionVerdict["organizationType"] | null = null
  verdictReasonCode: InstitutionVerdict["reasonCode"] = undefined
  verdictReason: InstitutionVerdict["reason"] = undefined
  readonly match: HostMatch
  /** Further owners and their values, in pairs, oldest first: an offer's groups take turns on the same facts. */
  memoMore: Array<unknown> | null = null

  constructor(match: HostMatch, disposable: boolean, freeMail: boolean) {
    this.matchKind = match.kind
    this.matchedDomain = match.kind === "none" ? null : match.matchedDomain
    this.disposable = disposable
    this.freeMail = freeMail
    this.abused = match.kind === "listed" && match.entry.abused
    this.match = match
  }
}

/**
 * The facts of a host as kept in the directory, when they hold the verdict fields of `owner`, the first
 * owner of their `memo` (`keepVerdictFields`); else null. The first owner's value is never replaced.
 */
export const keptVerdictFields = (facts: HostFacts, owner: object): StoredFacts | null =>
  facts instanceof StoredFacts && facts.memoOwner === owner && facts.verdictRole !== null ? facts : null

/** Keeps in `facts` the fields of `verdict`, when it is the value of their memo's first owner (`owner`). */
export const keepVerdictFields = (facts: HostFacts, owner: object, verdict: InstitutionVerdict): void => {
  if (!(facts instanceof StoredFacts) || facts.memoOwner !== owner || facts.memo !== verdict) return
  facts.verdictRole = verdict.role
  facts.verdictRoleRefused = verdict.roleRefused
  facts.verdictAbusedRejected = verdict.abusedRejected
  facts.verdictDomain = verdict.domain
  facts.verdictGeography = verdict.geography
  facts.verdictOrganizationType = verdict.organizationType
  facts.verdictReasonCode = verdict.reasonCode
  facts.verdictReason = verdict.reason
}

/** What the per-email path knows about a host. */
export type HostFacts = Pick<
  StoredFacts,
  "match" | "matchKind" | "matchedDomain" | "abused" | "disposable" | "freeMail"
>

const noMatch: HostMatch = { kind: "none" }
const nothing = new StoredFacts(noMatch, false, false)
const nothingButDisposable = new StoredFacts(noMatch, true, false)

/**
 * How many owners' values the facts of one host keep (`HostDirectory.memo`):
 * the groups of an offer and of a few target groups judged in turn, without
 * pushing each other out.
 */
const MEMO_OWNERS = 6

/** By default at most this many domains under bare suffix rules become keys (each ~0.3 KB with its facts and verdicts). */
const defaultMaxLearnedKeys = 50_000

/**
 * A copy of an ASCII `text` (a host) that keeps no reference to the string it
 * was sliced from (an email address): 0.2-0.26 µs for a 50-character host,
 * against 1.3-1.6 µs spreading its character codes.
 */
export const detached = (text: string): string => Buffer.from(text, "latin1").toString("latin1")

/** A label no host or data entry can contain: `${probe}.${key}` stands for "any host below `key`". */
const probe = "\u0000"

/** Whether two matches say the same: the same entry at the same matched domain, or both none (suffix rules: never). */
const sameMatch = (a: HostMatch, b: HostMatch): boolean => {
  if (a.kind === "none" || b.kind === "none") return a.kind === b.kind
  if (a.kind === "suffix" || b.kind === "suffix" || a.kind !== b.kind) return false
  return a.entry === b.entry && a.matchedDomain === b.matchedDomain
}

/**
 * What one key says. As `HostFacts` it holds the facts for a host equal to
 * the key; `below` holds them for the hosts below it that are not on the
 * disposable list themselves, `belowListedDisposable` for those that are.
 */
class KeyRecord extends StoredFacts {
  /** `null` when the key is a suffix rule (`edu`) itself: then the matched domain depends on the host. */
  readonly below: StoredFacts | null
  /**
   * Whether a host below the key may be on the disposable list itself (`EmailLists.mayHaveListedDisposableBelow`):
   * when not, the list is not asked for the hosts below it, most of which (`cs.x.edu`) it does not name.
   */
  readonly listedDisposableBelow: boolean
  #belowListedDisposable: StoredFacts | null = null
  readonly belowDisposable: boolean
  readonly belowFreeMail: boolean

  constructor(exact: HostFacts, below: HostFacts, listedDisposableBelow: boolean) {
    super(exact.match, exact.disposable, exact.freeMail)
    const match = below.match
    const bareRule = match.kind === "suffix" && match.matchedDomain.startsWith(probe)
    // Where the hosts below the key have the key's own facts (most listed domains), they share its record:
    // a host below it then reads no object of its own, nor a verdict remembered apart.
    this.below = bareRule
      ? null
      : sameMatch(exact.match, match) && exact.disposable === below.disposable && exact.freeMail === below.freeMail
        ? this
        : new StoredFacts(match, below.disposable, below.freeMail)
    this.listedDisposableBelow = listedDisposableBelow
    this.belowDisposable = below.disposable
    this.belowFreeMail = below.freeMail
  }

  /** The facts for a host below the key (not a bare suffix rule), given whether that host is itself on the disposable list. */
  factsBelow(below: StoredFacts, listedDisposable: boolean): HostFacts {
    if (!listedDisposable || below.disposable) return below
    this.#belowListedDisposable ??= new StoredFacts(below.match, true, below.freeMail)
    return this.#belowListedDisposable
  }
}

export class HostDirectory {
  readonly #index: InstitutionTable
  readonly #lists: EmailLists
  /**
   * Every key, to its record once met (records are made on first use, so the
   * ones in use sit together in memory), or to itself until then. Made on the
   * first question (`#keys`), not with the directory: ~50k keys take 50-90 ms
   * of a daemon's start on a busy machine, and a start answers `/healthz`
   * before any host is asked about.
   */
  #table: SuffixTable<KeyRecord | string> | undefined
  /** Keys added at run time, under bare suffix rules (see `#underBareRule`). */
  #learnedKeys = 0
  readonly #maxLearnedKeys: number

  constructor(index: InstitutionTable, lists: EmailLists, options?: { readonly maxLearnedKeys?: number }) {
    this.#index = index
    this.#lists = lists
    this.#maxLearnedKeys = options?.maxLearnedKeys ?? defaultMaxLearnedKeys
  }

  get #keys(): SuffixTable<KeyRecord | string> {
    this.#table ??= this.#makeKeys()
    return this.#table
  }

  #makeKeys(): SuffixTable<KeyRecord | string> {
    const keys = new SuffixTable<KeyRecord | string>()
    for (const key of this.#index.entries.keys()) keys.set(key, key)
    for (const key of this.#lists.freeMailDomains()) keys.set(key, key)
    for (const key of this.#lists.disposableWildcards()) keys.set(key, key)
    return keys
  }

  /** The number of keys. */
  get size(): number {
    return this.#keys.size
  }

  /** The facts for a lower-case ASCII host, as the email parser produces it. */
  facts(host: string): HostFacts {
    const keys = this.#keys
    const known = keys.walk(host)
    if (known === undefined) return this.#lists.isListedDisposable(host) ? nothingButDisposable : nothing
    const at = keys.foundAt
    const record = typeof known === "string" ? this.#learn(known) : known
    if (at === 0) return record
    const listedDisposable = record.listedDisposableBelow && this.#lists.isListedDisposable(host)
    if (record.below !== null) return record.factsBelow(record.below, listedDisposable)
    return this.#underBareRule(record, host, at, listedDisposable)
  }

  /**
   * A host under a bare suffix rule, its record found at `host[at..]`: the
   * matched domain is the host's label in front of the rule
   * (`newcollege.edu`). That domain becomes a key of its own, up to
   * `maxLearnedKeys`, so that its facts and verdicts are kept like a listed
   * domain's. Past the bound, the table is asked for the matched domain's
   * match each time: the rule may lend it a sibling's facts (`kaist.edu`,
   * `siblings.ts`), which the rule's record, asked for any host below it,
   * does not hold.
   */
  #underBareRule(record: KeyRecord, host: string, at: number, listedDisposable: boolean): HostFacts {
    const start = host.lastIndexOf(".", at - 2) + 1
    const matchedDomain = host.slice(start)
    if (this.#learnedKeys < this.#maxLearnedKeys) {
      this.#learnedKeys++
      const own = this.#learn(detached(matchedDomain))
      return start === 0 ? own : own.factsBelow(own.below!, listedDisposable)
    }
    return new StoredFacts(
      this.#index.lookup(matchedDomain),
      listedDisposable || record.belowDisposable,
      record.belowFreeMail
    )
  }

  /**
   * A value derived from `facts` by `owner` (say, a target group's verdict
   * on the matched institution), remembered beside the facts for the last
   * `MEMO_OWNERS` owners that asked (the first for good, the others in
   * turn), so a repeated question costs no lookup of its own — an offer's
   * groups included.
   * `derive` must depend on nothing else; for facts not kept in the table it
   * just runs.
   */
  memo<O extends object, A>(facts: HostFacts, owner: O, derive: (owner: O, facts: HostFacts) => A): A {
    if (!(facts instanceof StoredFacts)) return derive(owner, facts)
    if (facts.memoOwner === owner) return facts.memo as A
    const more = facts.memoMore
    if (more !== null) {
      for (let i = 0; i < more.length; i += 2) if (more[i] === owner) return more[i + 1] as A
    }
    const value = derive(owner, facts)
    if (facts.memoOwner === null) {
      facts.memoOwner = owner
      facts.memo = value
    } else if (more === null) {
      facts.memoMore = [owner, value]
    } else {
      if (more.length >= 2 * (MEMO_OWNERS - 1)) more.splice(0, 2)
      more.push(owner, value)
    }
    return value
  }

  /** The number of keys whose facts (as a host, or for the hosts below) remember a value (`memo`). */
  get memoized(): number {
    let count = 0
    for (const record of this.#keys.values()) {
      if (typeof record !== "string" && (record.memoOwner !== null || record.below?.memoOwner != null)) count++
    }
    return count
  }

  /** Asks the sources about `key` (the data's own string) and remembers the answer. */
  #learn(key: string): KeyRecord {
    const record = new KeyRecord(
      this.#ask(key),
      this.#ask(`${probe}.${key}`),
      this.#lists.mayHaveListedDisposableBelow(key)
    )
    this.#keys.set(key, record)
    return record
  }

  #ask(host: string): HostFacts {
    return new StoredFacts(this.#index.lookup(host), this.#lists.isDisposable(host), this.#lists.isFreeMail(host))
  }
}
