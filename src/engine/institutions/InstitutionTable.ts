/**
 * The institution table at run time: listed domains, non-institutions,
 * stoplisted hosts and academic zones in one hash table, answering "which
 * institution is this host?" by walking the host from the longest suffix
 * down (`stu.cs.x.edu.cn` → `cs.x.edu.cn` → `x.edu.cn` → `edu.cn`). The
 * first hit is the most specific and wins, for allow and deny alike.
 *
 * The table is its compiled binary form (`tableBuffer.ts`), read as it is:
 * loading it builds nothing per entry, and a probe hashes the host's suffix
 * in place, allocating nothing until it hits. What a hit refers to (the
 * entry, its institution with the evidence for each fact, its summary) is
 * made on first use and kept, so a host's answer is the same object each
 * time and every thread pays only for the institutions it meets.
 *
 * Every thread that evaluates holds a table (the request thread and each
 * job thread), so its size counts once per thread. The values that
 * institutions repeat are kept once: a string (a country, region, type) is
 * decoded once per table, and a list of sources or a set of facts'
 * evidence once (`Repeats`); no flags and no other names share one frozen
 * empty list; an id that is one of the institution's domains is that
 * domain's string.
 */
import type {
  CountrySource,
  DataSource,
  Evidence,
  FactEvidence,
  HostRole,
  Institution,
  InstitutionType
} from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"
import type { InstitutionSummary } from "../../domain/ValidationResult.ts"
import { type CandidateKnowledge, decodeKnowledge } from "./candidates.ts"
import type { FactEvidenceRow, InstitutionsData, SuffixRuleRow } from "./InstitutionsData.ts"
import { siblingVia, siblingZone } from "./siblings.ts"
import {
  decodeTable,
  ENTRY_WORDS,
  encodeTable,
  entryKind,
  hashFrom,
  NON_INSTITUTION_WORDS,
  ROW_WORDS,
  renameDatasets,
  roleCodes,
  type TableBuffer
} from "./tableBuffer.ts"
import { type InferredType, TypeInference } from "./typeInference.ts"
import { borrowFacts, evidenceOf, inferType, type SuffixRule } from "./zoneRules.ts"

export type { InferredType, SuffixRule }

/** A listed domain: the institution it belongs to, whether it is on the abused list, and whom it serves. */
export interface ListedEntry {
  readonly kind: "listed"
  readonly domain: string
  readonly institution: Institution
  readonly abused: boolean
  /** What the domain's own labels say (`students.x.edu`), else `mixed`. */
  readonly role: HostRole
  readonly summary: InstitutionSummary
}

/** A host that is never an institution although a parent is (swot's stoplist). */
export interface DenyEntry {
  readonly kind: "deny"
  readonly domain: string
  readonly source: DataSource
}

/** An organisation that is not an educational institution: a network, sector body, government body or platform. */
export interface NonInstitutionEntry {
  readonly kind: "non-institution"
  readonly domain: string
  readonly organization: {
    readonly kind: NonInstitutionKind
    readonly name: string | null
    readonly country: string | null
    readonly source: DataSource
    /** How it was recognised: `curated`, `ror`. */
    readonly rule: string
  }
}

export type IndexEntry = ListedEntry | DenyEntry | NonInstitutionEntry

/** Listed domains, non-institutions, stoplisted hosts and zones share one table: one probe per label of a host. */
export type HostEntry = IndexEntry | SuffixRule

/** What a host resolves to. `matchedDomain` is the listed domain, or the registrable domain under a zone. */
export type HostMatch =
  | { readonly kind: "listed"; readonly entry: ListedEntry; readonly matchedDomain: string }
  | { readonly kind: "deny"; readonly entry: DenyEntry; readonly matchedDomain: string }
  | { readonly kind: "non-institution"; readonly entry: NonInstitutionEntry; readonly matchedDomain: string }
  | { readonly kind: "suffix"; readonly rule: SuffixRule; readonly matchedDomain: string }
  | { readonly kind: "none" }

const noMatch: HostMatch = { kind: "none" }

const summarize = (institution: Institution, abused: boolean): InstitutionSummary => ({
  id: institution.id,
  name: institution.name,
  country: institution.country,
  region: institution.region,
  type: institution.type,
  flags:
    abused && !institution.flags.includes("abused") ? [...institution.flags, "abused" as const] : institution.flags,
  sources: institution.sources,
  evidence: institution.evidence
})

/** Frozen, so one value can be shared by every institution that repeats it. */
const noStrings: ReadonlyArray<never> = Object.freeze([])

/** One copy of each list of sources and each set of facts' evidence that institutions repeat, for one table. */
class Repeats {
  readonly #sourceLists = new Map<string, ReadonlyArray<DataSource>>()
  readonly #factEvidence = new Map<string, FactEvidence>()
  readonly #sources: ReadonlyArray<DataSource>
  readonly #evidence: ReadonlyArray<Evidence>

  constructor(sources: ReadonlyArray<DataSource>, evidence: ReadonlyArray<Evidence>) {
    this.#sources = sources
    this.#evidence = evidence
  }

  /** The sources at positions `ids`. */
  sources(ids: ReadonlyArray<number>): ReadonlyArray<DataSource> {
    const key = ids.join()
    let list = this.#sourceLists.get(key)
    if (list === undefined) {
      list = Object.freeze(ids.map((i) => this.#sources[i]!))
      this.#sourceLists.set(key, list)
    }
    return list
  }

  /** The evidence for each fact, by position in the evidence table (-1: the fact is unknown). */
  factEvidence(facts: FactEvidenceRow): FactEvidence {
    const key = facts.join()
    let found = this.#factEvidence.get(key)
    if (found === undefined) {
      const evidence = this.#evidence
      const made: { -readonly [K in keyof FactEvidence]: FactEvidence[K] } = { type: evidence[facts[1]]! }
      if (facts[0] >= 0) made.name = evidence[facts[0]]!
      if (facts[2] >= 0) made.country = evidence[facts[2]]!
      if (facts[3] >= 0) made.region = evidence[facts[3]]!
      found = Object.freeze(made)
      this.#factEvidence.set(key, found)
    }
    return found
  }
}

const abusedFlags: ReadonlyArray<"abused"> = Object.freeze(["abused" as const])

/** How many rules made for domains under zones a table keeps (`InstitutionTable.#ruleFor`). */
const maxMadeRules = 50_000

/** A zone's rule, as `InstitutionTable` has always made it from its row. */
const suffixRuleOf = (
  [suffix, country, type, sourceId, region, typeKnown, policy, reference]: SuffixRuleRow,
  sources: ReadonlyArray<DataSource>
): SuffixRule => {
  const source = sources[sourceId]!
  const zoneEvidence = (confidence: Evidence["confidence"]): Evidence =>
    Object.freeze({ source: "campusgate", rule: `zone-policy:${suffix}`, confidence })
  const factEvidence: { -readonly [K in keyof FactEvidence]: FactEvidence[K] } = {
    type: typeKnown
      ? zoneEvidence("medium")
      : Object.freeze({ source: "campusgate", rule: "unknown", confidence: "low" })
  }
  if (country !== null) factEvidence.country = zoneEvidence(suffix === "edu" ? "low" : "medium")
  if (region !== null) factEvidence.region = zoneEvidence("medium")
  return {
    kind: "suffix",
    suffix,
    country,
    countrySource: country === null ? null : "suffix-rule",
    region,
    type,
    source,
    policy,
    reference,
    summary: Object.freeze({
      id: `suffix:${suffix}`,
      name: null,
      country,
      region,
      type,
      flags: [],
      sources: [source],
      evidence: Object.freeze(factEvidence)
    })
  }
}

/** The table's entries as a read-only map, each made on first use (the host directory reads its keys). */
class TableEntries implements ReadonlyMap<string, HostEntry> {
  readonly #table: InstitutionTable

  constructor(table: InstitutionTable) {
    this.#table = table
  }

  get size(): number {
    return this.#table.entryCount
  }

  get(domain: string): HostEntry | undefined {
    const e = this.#table.find(domain, 0)
    return e < 0 ? undefined : this.#table.entryAt(e)
  }

  has(domain: string): boolean {
    return this.#table.find(domain, 0) >= 0
  }

  *keys(): MapIterator<string> {
    for (let e = 0; e < this.size; e++) yield this.#table.domainAt(e)
  }

  *values(): MapIterator<HostEntry> {
    for (let e = 0; e < this.size; e++) yield this.#table.entryAt(e)
  }

  *entries(): MapIterator<[string, HostEntry]> {
    for (let e = 0; e < this.size; e++) yield [this.#table.domainAt(e), this.#table.entryAt(e)]
  }

  [Symbol.iterator](): MapIterator<[string, HostEntry]> {
    return this.entries()
  }

  forEach(callback: (value: HostEntry, key: string, map: ReadonlyMap<string, HostEntry>) => void, thisArg?: unknown) {
    for (let e = 0; e < this.size; e++) callback.call(thisArg, this.#table.entryAt(e), this.#table.domainAt(e), this)
  }
}

export class InstitutionTable {
  /** Every entry by its domain (made on first use). */
  readonly entries: ReadonlyMap<string, HostEntry> = new TableEntries(this)
  readonly #buffer: TableBuffer
  readonly #slots: Uint32Array
  readonly #mask: number
  readonly #entryWords: Uint32Array
  readonly #stringStarts: Uint32Array
  readonly #blob: Buffer
  readonly #strings: Array<string | undefined>
  readonly #entries: Array<HostEntry | undefined>
  readonly #institutions: Array<Institution | undefined>
  /** Each institution's summary for its domains that are not abused. */
  readonly #summaries: Array<InstitutionSummary | undefined>
  readonly #suffixRules: Array<SuffixRule | undefined>
  readonly #evidence: ReadonlyArray<Evidence>
  readonly #repeats: Repeats
  #all: ReadonlyArray<Institution> | undefined
  #knowledge: CandidateKnowledge | undefined
  /** The compiled siblings (`siblings.ts`), searched for each unlisted `.edu` domain met. */
  readonly #siblings: string
  /**
   * The rules made for the domains under zones met so far: a sibling's
   * facts lent (`kaist.edu`), a type inferred (`thenewcollege.edu.in`).
   * Bounded: past `maxMadeRules` the oldest half goes.
   */
  readonly #made = new Map<string, SuffixRule>()
  readonly #types: TypeInference
  readonly sources: ReadonlyArray<DataSource>
  /** What the table was compiled from, when its compiler recorded it (`encodeTable`). */
  readonly compiledFrom: string | undefined
  /**
   * The compiled form the table reads, as it is: in shared memory when it
   * was loaded so (`InstitutionIndex.ts`), so a job thread reads the same
   * bytes instead of a copy of its own (`jobs/JobThreads.ts`).
   */
  readonly bytes: Uint8Array
  /** The names its datasets are read under, by the names they were compiled under (`fromBuffer`), if any differ. */
  readonly datasetNames: Readonly<Record<string, string>> | undefined

  private constructor(buffer: TableBuffer, datasetNames?: Readonly<Record<string, string>>) {
    this.compiledFrom = buffer.compiledFrom
    this.bytes = buffer.bytes
    this.datasetNames = datasetNames
    this.#buffer = buffer
    this.#slots = buffer.slots
    this.#mask = buffer.slots.length - 1
    this.#entryWords = buffer.entries
    this.#stringStarts = buffer.stringStarts
    this.#blob = buffer.blob
    this.#strings = new Array(buffer.stringStarts.length - 1)
    this.#entries = new Array(buffer.entries.length / ENTRY_WORDS)
    this.#institutions = new Array(buffer.rows.length / ROW_WORDS)
    this.#summaries = new Array(buffer.rows.length / ROW_WORDS)
    this.#suffixRules = new Array(buffer.suffixRules.length)
    this.sources = buffer.sources
    this.#evidence = buffer.evidence.map(evidenceOf)
    this.#repeats = new Repeats(buffer.sources, this.#evidence)
    this.#siblings = buffer.siblings
    this.#types = new TypeInference(buffer.typeRules)
  }

  /** A table from compiled data (compiled to the binary form first: the one way tables answer). */
  static fromData(data: InstitutionsData): InstitutionTable {
    return new InstitutionTable(decodeTable(encodeTable(data)))
  }

  /**
   * A table over a compiled buffer (`encodeTable`), read as it is, or with
   * the datasets compiled under a name of `datasetNames` read under the
   * name it gives.
   */
  static fromBuffer(bytes: Uint8Array, datasetNames?: Readonly<Record<string, string>>): InstitutionTable {
    const buffer = decodeTable(bytes)
    if (datasetNames === undefined) return new InstitutionTable(buffer)
    const named = (name: string) => (Object.hasOwn(datasetNames, name) ? (datasetNames[name] ?? name) : name)
    return new InstitutionTable(renameDatasets(buffer, named), datasetNames)
  }

  /** Every institution, in the data's order (made on first use: searches and the candidate model need them all). */
  get institutions(): ReadonlyArray<Institution> {
    if (this.#all === undefined) {
      const all: Array<Institution> = []
      for (let r = 0; r < this.#institutions.length; r++) all.push(this.#institutionAt(r))
      this.#all = Object.freeze(all)
    }
    return this.#all
  }

  get size(): number {
    return this.#institutions.length
  }

  /** The number of entries (`entries.size`). */
  get entryCount(): number {
    return this.#entries.length
  }

  /** The entry for `text` from `start` to its end (a host's suffix), or -1. */
  find(text: string, start: number): number {
    const length = text.length - start
    const hash = hashFrom(text, start)
    const slots = this.#slots
    const words = this.#entryWords
    const starts = this.#stringStarts
    const blob = this.#blob
    for (let slot = hash & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const e = slots[slot]! - 1
      if (e < 0) return -1
      const at = e * ENTRY_WORDS
      if (words[at + 3] !== hash) continue
      const s = words[at]!
      let b = starts[s]!
      if (starts[s + 1]! - b !== length) continue
      let i = start
      while (i < text.length && blob[b] === text.charCodeAt(i)) {
        i++
        b++
      }
      if (i === text.length) return e
    }
  }

  /** The domain of entry `e`. */
  domainAt(e: number): string {
    return this.#string(this.#entryWords[e * ENTRY_WORDS]!)!
  }

  /** Entry `e`, made on first use. */
  entryAt(e: number): HostEntry {
    return this.#entries[e] ?? this.#makeEntry(e)
  }

  #makeEntry(e: number): HostEntry {
    const at = e * ENTRY_WORDS
    const domain = this.domainAt(e)
    const flags = this.#entryWords[at + 1]!
    const ref = this.#entryWords[at + 2]!
    let entry: HostEntry
    switch (flags & 0xf) {
      case entryKind.listed: {
        const institution = this.#institutionAt(ref)
        const abused = (flags & (1 << 8)) !== 0
        entry = {
          kind: "listed",
          domain,
          institution,
          abused,
          role: roleCodes[(flags >> 4) & 0xf]!,
          summary: abused ? summarize(institution, true) : this.#plainSummary(ref)
        }
        break
      }
      case entryKind.deny:
        entry = { kind: "deny", domain, source: this.sources[ref]! }
        break
      case entryKind.nonInstitution: {
        const row = this.#buffer.nonInstitutions.subarray(ref * NON_INSTITUTION_WORDS)
        entry = {
          kind: "non-institution",
          domain,
          organization: Object.freeze({
            kind: this.#string(row[1]!) as NonInstitutionKind,
            name: this.#string(row[2]!),
            country: this.#string(row[3]!),
            source: this.sources[row[4]!]!,
            rule: this.#string(row[5]!)!
          })
        }
        break
      }
      default:
        entry = this.#suffixRule(ref)
    }
    this.#entries[e] = entry
    return entry
  }

  #suffixRule(ref: number): SuffixRule {
    let rule = this.#suffixRules[ref]
    if (rule === undefined) {
      rule = suffixRuleOf(this.#buffer.suffixRules[ref]!, this.sources)
      this.#suffixRules[ref] = rule
    }
    return rule
  }

  /** String `n` (-1: null), decoded once. */
  #string(n: number): string | null {
    if (n < 0) return null
    let text = this.#strings[n]
    if (text === undefined) {
      text = this.#blob.toString("utf8", this.#stringStarts[n], this.#stringStarts[n + 1])
      this.#strings[n] = text
    }
    return text
  }

  /**
   * Strings `pool[start..start + count]`, in a list of exactly that room: a list grown by `push` keeps room for
   * 17 from its first string, so the institutions a 1M-email job meets (~37k, most with a domain or two) held
   * 8.5 MB of empty room in their `domains` and `names` (heap snapshot after bench:jobs' cold offer pass).
   */
  #strings_(start: number, count: number): ReadonlyArray<string> {
    if (count === 0) return noStrings
    const pool = this.#buffer.pool
    const list = new Array<string>(count)
    for (let i = 0; i < count; i++) list[i] = this.#string(pool[start + i]!)!
    return list
  }

  #institutionAt(r: number): Institution {
    const known = this.#institutions[r]
    if (known !== undefined) return known
    const row = this.#buffer.rows.subarray(r * ROW_WORDS, (r + 1) * ROW_WORDS)
    const pool = this.#buffer.pool
    const institution: Institution = {
      id: this.#string(row[0]!)!,
      name: this.#string(row[1]!),
      domains: this.#strings_(row[9]!, row[10]!),
      country: this.#string(row[2]!),
      countrySource: this.#string(row[3]!) as CountrySource | null,
      region: this.#string(row[4]!),
      type: this.#string(row[5]!) as InstitutionType,
      flags: row[17] === 1 ? abusedFlags : noStrings,
      sources: this.#repeats.sources(Array.from(pool.subarray(row[7]!, row[7]! + row[8]!))),
      names: this.#strings_(row[11]!, row[12]!),
      ror: this.#string(row[6]!),
      evidence: this.#repeats.factEvidence([row[13]!, row[14]!, row[15]!, row[16]!])
    }
    this.#institutions[r] = institution
    return institution
  }

  #plainSummary(r: number): InstitutionSummary {
    let summary = this.#summaries[r]
    if (summary === undefined) {
      summary = summarize(this.#institutionAt(r), false)
      this.#summaries[r] = summary
    }
    return summary
  }

  /**
   * The zone's rule for `domain` (`kaist.edu`, `thenewcollege.edu.in`):
   * under `.edu`, with its sibling's facts when it has one; where the zone
   * does not fix the type, with the type a measured rule infers.
   */
  #ruleFor(zone: SuffixRule, domain: string): SuffixRule {
    const known = this.#made.get(domain)
    if (known !== undefined) return known
    const label = domain.slice(0, domain.length - zone.suffix.length - 1)
    let rule = zone
    if (zone.suffix === siblingZone && this.#siblings !== "" && !label.includes(".")) {
      const via = siblingVia(this.#siblings, label)
      const e = via === undefined ? -1 : this.find(via, 0)
      const entry = e < 0 ? undefined : this.entryAt(e)
      if (entry?.kind === "listed") rule = borrowFacts(zone, entry.institution, via!)
    }
    if (rule.summary.evidence.type.rule === "unknown") {
      const inferred = this.#types.infer(label, zone.suffix)
      if (inferred !== undefined) rule = inferType(rule, inferred)
    }
    if (rule === zone) return zone
    if (this.#made.size >= maxMadeRules) {
      let drop = this.#made.size / 2
      for (const key of this.#made.keys()) {
        if (drop-- <= 0) break
        this.#made.delete(key)
      }
    }
    this.#made.set(domain, rule)
    return rule
  }

  /** The candidate knowledge compiled with the table (`encodeTable`), parsed on first use; undefined when it was not. */
  candidateKnowledge(): CandidateKnowledge | undefined {
    if (this.#knowledge === undefined && this.#buffer.knowledge !== undefined) {
      this.#knowledge = decodeKnowledge(this.#buffer.knowledge.toString("utf8"))
    }
    return this.#knowledge
  }

  /** The type the measured rules infer for a registrable domain's label outside any zone (a candidate's). */
  inferredType(label: string): InferredType | undefined {
    return this.#types.infer(label, undefined)
  }

  /**
   * Resolves an ASCII lower-case host. A bare public suffix never matches:
   * listed domains exclude them at build time, and a zone needs at least
   * one label in front of it.
   */
  lookup(host: string): HostMatch {
    let previous = -1
    for (let i = 0; ; ) {
      const e = this.find(host, i)
      if (e >= 0) {
        const entry = this.entryAt(e)
        if (entry.kind === "listed") return { kind: "listed", entry, matchedDomain: i === 0 ? host : host.slice(i) }
        if (entry.kind === "deny") return { kind: "deny", entry, matchedDomain: i === 0 ? host : host.slice(i) }
        if (entry.kind === "non-institution") {
          return { kind: "non-institution", entry, matchedDomain: i === 0 ? host : host.slice(i) }
        }
        if (previous >= 0) {
          const matchedDomain = host.slice(previous)
          return { kind: "suffix", rule: this.#ruleFor(entry, matchedDomain), matchedDomain }
        }
      }
      previous = i
      i = host.indexOf(".", i) + 1
      if (i === 0) return noMatch
    }
  }
}
