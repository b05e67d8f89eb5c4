/**
 * Merges institution datasets into one `InstitutionsData`: the built-in open
 * data at build time and user datasets (with `override`) at load time.
 * Guarantees: a domain belongs to at most one institution; a bare public
 * suffix (`edu.cn`) is never an institution domain; every record says which
 * datasets named it and where its country came from (dataset, else the
 * ccTLD, else the academic suffix rule such as `.edu` → US).
 */
import { parse } from "tldts"
import { countryFromTld } from "../../domain/Country.ts"
import type { CountrySource, DataSource, InstitutionType } from "../../domain/Institution.ts"
import {
  type DomainRow,
  type InstitutionRow,
  type InstitutionsData,
  institutionsDataFormat,
  type SuffixRuleRow
} from "./InstitutionsData.ts"
import { inferInstitutionType } from "./inferType.ts"

export interface InstitutionInput {
  readonly name?: string | null | undefined
  readonly domains: ReadonlyArray<string>
  readonly country?: string | null | undefined
  readonly region?: string | null | undefined
  readonly type?: InstitutionType | undefined
}

interface Draft {
  id: string
  name: string | null
  country: string | null
  countrySource: CountrySource | null
  region: string | null
  type: InstitutionType | null
  sources: Set<number>
  domains: Array<string>
}

export interface BuildReport {
  readonly droppedPublicSuffixes: Array<string>
  readonly droppedInvalid: Array<string>
}

const hostPattern = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/

/** Lower-cases and trims a dataset domain; drops a leading `www.` and a trailing dot. */
export const normalizeDatasetDomain = (raw: string): string =>
  raw
    .trim()
    .toLowerCase()
    .replace(/^www\./, "")
    .replace(/\.$/, "")

export class IndexBuilder {
  private readonly sources: Array<DataSource> = []
  private readonly drafts: Array<Draft> = []
  private readonly byDomain = new Map<string, Draft>()
  private readonly deny = new Map<string, number>()
  private readonly abused = new Map<string, number>()
  private readonly suffixRules = new Map<string, SuffixRuleRow>()
  readonly report: BuildReport = { droppedPublicSuffixes: [], droppedInvalid: [] }

  static from(data: InstitutionsData): IndexBuilder {
    const builder = new IndexBuilder()
    builder.sources.push(...data.sources)
    for (const [id, name, country, countrySource, region, type, sources, domains] of data.institutions) {
      const draft: Draft = { id, name, country, countrySource, region, type, sources: new Set(sources), domains: [] }
      builder.drafts.push(draft)
      for (const domain of domains) {
        draft.domains.push(domain)
        builder.byDomain.set(domain, draft)
      }
    }
    for (const [domain, source] of data.deny) builder.deny.set(domain, source)
    for (const [domain, source] of data.abused) builder.abused.set(domain, source)
    for (const rule of data.suffixRules) builder.suffixRules.set(rule[0], rule)
    return builder
  }

  sourceAt(index: number): DataSource {
    return this.sources[index]!
  }

  source(source: DataSource): number {
    const found = this.sources.findIndex((s) => s.dataset === source.dataset && s.version === source.version)
    if (found >= 0) return found
    this.sources.push(source)
    return this.sources.length - 1
  }

  private acceptDomain(raw: string): string | undefined {
    const domain = normalizeDatasetDomain(raw)
    if (!hostPattern.test(domain)) {
      this.report.droppedInvalid.push(raw)
      return undefined
    }
    const parsed = parse(domain)
    if (parsed.isIcann !== true && parsed.isPrivate !== true) {
      // An unknown top-level domain: a truncated or mistyped dataset entry (`nhtv.n`).
      this.report.droppedInvalid.push(raw)
      return undefined
    }
    if (parsed.publicSuffix === domain) {
      this.report.droppedPublicSuffixes.push(domain)
      return undefined
    }
    return domain
  }

  /**
   * Adds an institution. Without `override` it merges into an institution that
   * already owns one of its domains, filling only what is missing; with
   * `override` (user datasets) its facts win and its domains move to it.
   */
  addInstitution(input: InstitutionInput, source: DataSource, options: { readonly override?: boolean } = {}): void {
    const sourceIndex = this.source(source)
    const domains = input.domains.flatMap((raw) => this.acceptDomain(raw) ?? [])
    if (domains.length === 0) return
    const existing = domains.map((d) => this.byDomain.get(d)).find((d) => d !== undefined)
    if (existing !== undefined && options.override !== true) {
      existing.sources.add(sourceIndex)
      existing.name ??= input.name ?? null
      if (existing.country === null && input.country) {
        existing.country = input.country
        existing.countrySource = "dataset"
      }
      existing.region ??= input.region ?? null
      existing.type ??= input.type ?? null
      for (const domain of domains) this.claim(existing, domain)
      return
    }
    const draft: Draft = {
      id: domains[0]!,
      name: input.name ?? null,
      country: input.country ?? null,
      countrySource: input.country ? "dataset" : null,
      region: input.region ?? null,
      type: input.type ?? null,
      sources: new Set([sourceIndex]),
      domains: []
    }
    this.drafts.push(draft)
    for (const domain of domains) this.claim(draft, domain)
  }

  private claim(draft: Draft, domain: string): void {
    const owner = this.byDomain.get(domain)
    if (owner === draft) return
    if (owner !== undefined) owner.domains = owner.domains.filter((d) => d !== domain)
    draft.domains.push(domain)
    this.byDomain.set(domain, draft)
    this.deny.delete(domain)
  }

  addDeny(raw: string, source: DataSource): void {
    const domain = normalizeDatasetDomain(raw)
    if (hostPattern.test(domain)) this.deny.set(domain, this.source(source))
  }

  addAbused(raw: string, source: DataSource): void {
    const domain = normalizeDatasetDomain(raw)
    if (hostPattern.test(domain)) this.abused.set(domain, this.source(source))
  }

  addSuffixRule(suffix: string, country: string | null, type: InstitutionType, source: DataSource): void {
    this.suffixRules.set(suffix, [suffix, country, type, this.source(source)])
  }

  /** The country of a host from its ccTLD, else from the academic suffix rule it falls under. */
  private inferCountry(domain: string): [string, CountrySource] | undefined {
    const lastDot = domain.lastIndexOf(".")
    const secondLevel = domain.slice(domain.lastIndexOf(".", lastDot - 1) + 1, lastDot)
    const byTld = countryFromTld(domain.slice(lastDot + 1), secondLevel)
    if (byTld !== undefined) return [byTld, "cctld"]
    for (let i = domain.indexOf(".") + 1; i > 0; i = domain.indexOf(".", i) + 1) {
      const rule = this.suffixRules.get(domain.slice(i))
      if (rule !== undefined && rule[1] !== null) return [rule[1], "suffix-rule"]
    }
    return undefined
  }

  finish(): InstitutionsData {
    const institutions: Array<InstitutionRow> = []
    const ids = new Set<string>()
    for (const draft of this.drafts) {
      if (draft.domains.length === 0) continue
      if (draft.country === null) {
        const inferred = draft.domains.map((d) => this.inferCountry(d)).find((c) => c !== undefined)
        if (inferred !== undefined) [draft.country, draft.countrySource] = inferred
      }
      let id = draft.domains[0]!
      for (let n = 2; ids.has(id); n++) id = `${draft.domains[0]}~${n}`
      ids.add(id)
      institutions.push([
        id,
        draft.name,
        draft.country,
        draft.countrySource,
        draft.region,
        draft.type ?? inferInstitutionType(draft.name, draft.domains),
        [...draft.sources].sort((a, b) => a - b),
        draft.domains
      ])
    }
    const rows = (map: Map<string, number>): Array<DomainRow> =>
      [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return {
      format: institutionsDataFormat,
      sources: this.sources,
      institutions,
      deny: rows(this.deny),
      abused: rows(this.abused),
      suffixRules: [...this.suffixRules.values()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    }
  }
}
