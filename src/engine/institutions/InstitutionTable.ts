/**
 * The institution table at run time: listed domains, non-institutions,
 * stoplisted hosts and academic zones in one hash map, answering "which
 * institution is this host?" by walking the host from the longest suffix
 * down (`stu.cs.x.edu.cn` → `cs.x.edu.cn` → `x.edu.cn` → `edu.cn`). The
 * first hit is the most specific and wins, for allow and deny alike.
 * Lookups allocate nothing but the suffix strings; entries and their
 * summaries (with the evidence for each fact) are built once at load.
 *
 * Every thread that evaluates holds a table (the request thread and each
 * job thread), so its size counts once per thread. The values that
 * institutions repeat are kept once (`Repeats`): a country, region, type
 * or source of facts, a list of sources, a set of facts' evidence, no
 * flags, no other names; and an id that is one of the institution's
 * domains is that domain's string.
 */
import type { DataSource, Evidence, FactEvidence, HostRole, Institution } from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"
import type { InstitutionSummary } from "../../domain/ValidationResult.ts"
import type { FactEvidenceRow, InstitutionsData } from "./InstitutionsData.ts"
import { siblingVia, siblingZone } from "./siblings.ts"
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

/** Listed domains, non-institutions, stoplisted hosts and zones share one map: one probe per label of a host. */
type HostEntry = IndexEntry | SuffixRule

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

/**
 * One copy of each value institutions repeat, for one table's load: the
 * parsed data gives each row its own copy (measured with the built-in data,
 * `used_heap_size` after full collections: the table 34 MB with a copy
 * each).
 */
class Repeats {
  readonly #texts = new Map<string, string>()
  readonly #sourceLists = new Map<string, ReadonlyArray<DataSource>>()
  readonly #factEvidence = new Map<string, FactEvidence>()
  readonly #sources: ReadonlyArray<DataSource>
  readonly #evidence: ReadonlyArray<Evidence>

  constructor(sources: ReadonlyArray<DataSource>, evidence: ReadonlyArray<Evidence>) {
    this.#sources = sources
    this.#evidence = evidence
  }

  /** The first copy of `value` met. */
  text<T extends string | null>(value: T): T {
    if (value === null) return value
    const known = this.#texts.get(value)
    if (known !== undefined) return known as T
    this.#texts.set(value, value)
    return value
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

export class InstitutionTable {
  readonly entries = new Map<string, HostEntry>()
  /** The compiled siblings (`siblings.ts`), searched for each unlisted `.edu` domain met. */
  readonly #siblings: string
  /**
   * The rules made for the domains under zones met so far: a sibling's
   * facts lent (`kaist.edu`), a type inferred (`thenewcollege.edu.in`).
   * Bounded: past `maxMadeRules` the oldest half goes.
   */
  readonly #made = new Map<string, SuffixRule>()
  readonly #types: TypeInference
  readonly institutions: ReadonlyArray<Institution>
  readonly sources: ReadonlyArray<DataSource>

  private constructor(data: InstitutionsData) {
    this.sources = data.sources
    const evidence: Array<Evidence> = data.evidence.map(evidenceOf)
    const abused = new Set(data.abused.map(([domain]) => domain))
    const roles = new Map(data.roles)
    const repeats = new Repeats(data.sources, evidence)
    const institutions: Array<Institution> = []
    for (const row of data.institutions) {
      const [id, name, country, countrySource, region, type, sourceIds, domains, names, ror, facts] = row
      const institution: Institution = {
        id: domains.find((domain) => domain === id) ?? id,
        name,
        domains,
        country: repeats.text(country),
        countrySource: repeats.text(countrySource),
        region: repeats.text(region),
        type: repeats.text(type),
        flags: domains.some((d) => abused.has(d)) ? abusedFlags : noStrings,
        sources: repeats.sources(sourceIds),
        names: names.length === 0 ? noStrings : names,
        ror,
        evidence: repeats.factEvidence(facts)
      }
      institutions.push(institution)
      const plain = summarize(institution, false)
      for (const domain of domains) {
        const isAbused = abused.has(domain)
        this.entries.set(domain, {
          kind: "listed",
          domain,
          institution,
          abused: isAbused,
          role: roles.get(domain) ?? "mixed",
          summary: isAbused ? summarize(institution, true) : plain
        })
      }
    }
    this.institutions = institutions
    for (const [domain, kind, name, country, source, rule] of data.nonInstitutions) {
      if (!this.entries.has(domain)) {
        this.entries.set(domain, {
          kind: "non-institution",
          domain,
          organization: Object.freeze({ kind, name, country, source: data.sources[source]!, rule })
        })
      }
    }
    for (const [domain, source] of data.deny) {
      if (!this.entries.has(domain)) this.entries.set(domain, { kind: "deny", domain, source: data.sources[source]! })
    }
    for (const [suffix, country, type, sourceId, region, typeKnown, policy, reference] of data.suffixRules) {
      const source = data.sources[sourceId]!
      const zoneEvidence = (confidence: Evidence["confidence"]): Evidence =>
        Object.freeze({ source: "campusgate", rule: `zone-policy:${suffix}`, confidence })
      const factEvidence: { -readonly [K in keyof FactEvidence]: FactEvidence[K] } = {
        type: typeKnown
          ? zoneEvidence("medium")
          : Object.freeze({ source: "campusgate", rule: "unknown", confidence: "low" })
      }
      if (country !== null) factEvidence.country = zoneEvidence(suffix === "edu" ? "low" : "medium")
      if (region !== null) factEvidence.region = zoneEvidence("medium")
      const rule: SuffixRule = {
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
      // A listed domain never equals a public suffix, so a zone only fills an empty slot.
      if (!this.entries.has(suffix)) this.entries.set(suffix, rule)
    }
    this.#siblings = data.siblings ?? ""
    this.#types = new TypeInference(data.typeRules ?? [])
    // An abused subdomain of a listed institution (`academia.umb.edu.co`) resolves to that institution, flagged.
    for (const domain of abused) {
      if (this.entries.has(domain)) continue
      const parent = this.#walk(domain, false)
      if (parent.kind === "listed") {
        this.entries.set(domain, {
          kind: "listed",
          domain,
          institution: parent.entry.institution,
          abused: true,
          role: parent.entry.role,
          summary: summarize(parent.entry.institution, true)
        })
      }
    }
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
      const entry = via === undefined ? undefined : this.entries.get(via)
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

  /** The type the measured rules infer for a registrable domain's label outside any zone (a candidate's). */
  inferredType(label: string): InferredType | undefined {
    return this.#types.infer(label, undefined)
  }

  static fromData(data: InstitutionsData): InstitutionTable {
    return new InstitutionTable(data)
  }

  get size(): number {
    return this.institutions.length
  }

  /**
   * Resolves an ASCII lower-case host. A bare public suffix never matches:
   * listed domains exclude them at build time, and a zone needs at least
   * one label in front of it.
   */
  lookup(host: string): HostMatch {
    return this.#walk(host, true)
  }

  /** `lookup`, with the rule made for the domain under a zone (a sibling's facts, an inferred type) when `lend`. */
  #walk(host: string, lend: boolean): HostMatch {
    let previous = -1
    for (let i = 0; ; ) {
      const suffix = i === 0 ? host : host.slice(i)
      const entry = this.entries.get(suffix)
      if (entry !== undefined) {
        if (entry.kind === "listed") return { kind: "listed", entry, matchedDomain: suffix }
        if (entry.kind === "deny") return { kind: "deny", entry, matchedDomain: suffix }
        if (entry.kind === "non-institution") return { kind: "non-institution", entry, matchedDomain: suffix }
        if (previous >= 0) {
          const matchedDomain = host.slice(previous)
          const rule = lend ? this.#ruleFor(entry, matchedDomain) : entry
          return { kind: "suffix", rule, matchedDomain }
        }
      }
      previous = i
      i = host.indexOf(".", i) + 1
      if (i === 0) return noMatch
    }
  }
}
