/**
 * The institution table at run time: listed domains, stoplisted hosts and
 * academic suffix rules in hash maps, answering "which institution is this
 * host?" by walking the host from the longest suffix down
 * (`stu.cs.x.edu.cn` → `cs.x.edu.cn` → `x.edu.cn` → `edu.cn`). The first hit
 * is the most specific and wins, for allow and deny alike. Lookups allocate
 * nothing but the suffix strings; entries and their summaries are built once
 * at load.
 */
import type { DataSource, Institution, InstitutionType } from "../../domain/Institution.ts"
import type { InstitutionSummary } from "../../domain/ValidationResult.ts"
import type { InstitutionsData } from "./InstitutionsData.ts"

/** A listed domain: the institution it belongs to, and whether it is on the abused list. */
export interface ListedEntry {
  readonly kind: "listed"
  readonly domain: string
  readonly institution: Institution
  readonly abused: boolean
  readonly summary: InstitutionSummary
}

/** A host that is never an institution although a parent is (swot's stoplist). */
export interface DenyEntry {
  readonly kind: "deny"
  readonly domain: string
  readonly source: DataSource
}

/** An academic suffix rule (`edu`, `ac.uk`, `edu.cn`, `k12.ca.us`): lower confidence than a listed domain. */
export interface SuffixRule {
  readonly kind: "suffix"
  readonly suffix: string
  readonly country: string | null
  readonly type: InstitutionType
  readonly source: DataSource
  readonly summary: InstitutionSummary
}

export type IndexEntry = ListedEntry | DenyEntry

/** Listed domains, stoplisted hosts and suffix rules share one map: one probe per label of a host. */
type HostEntry = IndexEntry | SuffixRule

/** What a host resolves to. `matchedDomain` is the listed domain, or the registrable domain under a suffix rule. */
export type HostMatch =
  | { readonly kind: "listed"; readonly entry: ListedEntry; readonly matchedDomain: string }
  | { readonly kind: "deny"; readonly entry: DenyEntry; readonly matchedDomain: string }
  | { readonly kind: "suffix"; readonly rule: SuffixRule; readonly matchedDomain: string }
  | { readonly kind: "none" }

const noMatch: HostMatch = { kind: "none" }

const summarize = (institution: Institution, abused: boolean): InstitutionSummary => ({
  id: institution.id,
  name: institution.name,
  country: institution.country,
  region: institution.region,
  type: institution.type,
  flags: abused && !institution.flags.includes("abused") ? [...institution.flags, "abused"] : institution.flags,
  sources: institution.sources
})

export class InstitutionTable {
  readonly entries = new Map<string, HostEntry>()
  readonly institutions: ReadonlyArray<Institution>
  readonly sources: ReadonlyArray<DataSource>

  private constructor(data: InstitutionsData) {
    this.sources = data.sources
    const abused = new Set(data.abused.map(([domain]) => domain))
    const institutions: Array<Institution> = []
    for (const [id, name, country, countrySource, region, type, sourceIds, domains] of data.institutions) {
      const institution: Institution = {
        id,
        name,
        domains,
        country,
        countrySource,
        region,
        type,
        flags: domains.some((d) => abused.has(d)) ? ["abused"] : [],
        sources: sourceIds.map((i) => data.sources[i]!)
      }
      institutions.push(institution)
      for (const domain of domains) {
        const isAbused = abused.has(domain)
        this.entries.set(domain, {
          kind: "listed",
          domain,
          institution,
          abused: isAbused,
          summary: summarize(institution, isAbused)
        })
      }
    }
    this.institutions = institutions
    for (const [domain, source] of data.deny) {
      if (!this.entries.has(domain)) this.entries.set(domain, { kind: "deny", domain, source: data.sources[source]! })
    }
    for (const [suffix, country, type, source] of data.suffixRules) {
      const rule: Omit<SuffixRule, "summary"> = { kind: "suffix", suffix, country, type, source: data.sources[source]! }
      const compiled: SuffixRule = {
        ...rule,
        summary: { id: `suffix:${suffix}`, name: null, country, region: null, type, flags: [], sources: [rule.source] }
      }
      // A listed domain never equals a public suffix, so a rule only fills an empty slot.
      if (!this.entries.has(suffix)) this.entries.set(suffix, compiled)
    }
    // An abused subdomain of a listed institution (`academia.umb.edu.co`) resolves to that institution, flagged.
    for (const domain of abused) {
      if (this.entries.has(domain)) continue
      const parent = this.lookup(domain)
      if (parent.kind === "listed") {
        this.entries.set(domain, {
          kind: "listed",
          domain,
          institution: parent.entry.institution,
          abused: true,
          summary: summarize(parent.entry.institution, true)
        })
      }
    }
  }

  static fromData(data: InstitutionsData): InstitutionTable {
    return new InstitutionTable(data)
  }

  get size(): number {
    return this.institutions.length
  }

  /**
   * Resolves an ASCII lower-case host. A bare public suffix never matches:
   * listed domains exclude them at build time, and a suffix rule needs at
   * least one label in front of it.
   */
  lookup(host: string): HostMatch {
    let previous = -1
    for (let i = 0; ; ) {
      const suffix = i === 0 ? host : host.slice(i)
      const entry = this.entries.get(suffix)
      if (entry !== undefined) {
        if (entry.kind === "listed") return { kind: "listed", entry, matchedDomain: suffix }
        if (entry.kind === "deny") return { kind: "deny", entry, matchedDomain: suffix }
        if (previous >= 0) return { kind: "suffix", rule: entry, matchedDomain: host.slice(previous) }
      }
      previous = i
      i = host.indexOf(".", i) + 1
      if (i === 0) return noMatch
    }
  }
}
