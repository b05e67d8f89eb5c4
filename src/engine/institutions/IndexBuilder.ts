/**
 * Merges institution datasets into one `InstitutionsData`: the built-in open
 * data at build time and user datasets (with `override`) at load time.
 * Guarantees: a domain belongs to at most one institution or
 * non-institution; a bare public suffix (`edu.cn`) is never an institution
 * domain; every fact (name, type, country, region) carries its evidence —
 * the dataset or rule it came from and how sure it is. Without `override`
 * a later dataset only fills facts and domains nobody has yet, so datasets
 * are added most trusted first.
 */
import { parse } from "tldts"
import type { DataSource, InstitutionType } from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"
import { countrySourceOf, evidence, inferCountry, ownRole, RULES_SOURCE, resolveType } from "./draftFacts.ts"
import {
  type DomainRow,
  type EvidenceRow,
  EvidenceTable,
  type InstitutionRow,
  type InstitutionsData,
  institutionsDataFormat,
  type NonInstitutionRow,
  type RoleRow,
  type SuffixRuleRow
} from "./InstitutionsData.ts"
import { decodeSiblings, encodeSiblings, siblingZone } from "./siblings.ts"
import type { RorType } from "./sources/SourceSnapshot.ts"
import type { ZonePolicy } from "./zones.ts"

export interface InstitutionInput {
  readonly name?: string | null | undefined
  readonly domains: ReadonlyArray<string>
  readonly country?: string | null | undefined
  readonly region?: string | null | undefined
  readonly type?: InstitutionType | undefined
  /** Other names and acronyms. */
  readonly names?: ReadonlyArray<string> | undefined
  readonly ror?: string | null | undefined
  /** The registry's organisation types, which the type is derived from with the names. */
  readonly rorTypes?: ReadonlyArray<RorType> | undefined
  /** How the country is known, when not stated by the dataset itself (e.g. `name-match`). */
  readonly countryEvidence?: EvidenceRow | undefined
}

interface Draft {
  id: string
  name: string | null
  nameEvidence: EvidenceRow | null
  names: Set<string>
  country: string | null
  countryEvidence: EvidenceRow | null
  region: string | null
  regionEvidence: EvidenceRow | null
  type: InstitutionType | null
  typeEvidence: EvidenceRow | null
  rorTypes: ReadonlyArray<RorType> | null
  ror: string | null
  sources: Set<number>
  domains: Array<string>
  /**
   * The compiled row this draft was read from (`from`), while nothing but
   * losing domains has changed it: `finish` then writes it back as it was,
   * so merging a small user dataset into the built-in data stays cheap.
   */
  settled: InstitutionRow | null
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

/** The shared empty sets of settled drafts (see `IndexBuilder.from`); never added to. */
const noNames: Set<string> = new Set()
const noSources: Set<number> = new Set()

const byFirst = <T extends readonly [string, ...Array<unknown>]>(a: T, b: T): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0

export class IndexBuilder {
  private readonly sources: Array<DataSource> = []
  private readonly drafts: Array<Draft> = []
  private readonly byDomain = new Map<string, Draft>()
  private readonly deny = new Map<string, number>()
  private readonly abused = new Map<string, number>()
  private readonly nonInstitutions = new Map<string, NonInstitutionRow>()
  private readonly zones = new Map<string, SuffixRuleRow>()
  /** Roles of the domains of the data this builder started from (`from`), so they are not worked out again. */
  private readonly knownRoles = new Map<string, RoleRow[1] | null>()
  readonly report: BuildReport = { droppedPublicSuffixes: [], droppedInvalid: [] }
  /** Institutions by ROR id, built on the first join (after the registry's institutions are added). */
  private byRor: Map<string, Draft> | undefined

  static from(data: InstitutionsData): IndexBuilder {
    const builder = new IndexBuilder()
    builder.sources.push(...data.sources)
    builder.baseEvidence = data.evidence
    builder.baseSiblings = data.siblings
    // Drafts read from compiled rows stay settled (their sets and evidence not made) until something changes them.
    for (const row of data.institutions) {
      const [id, name, country, , region, type, , domains, , ror] = row
      const draft: Draft = {
        id,
        name,
        nameEvidence: null,
        names: noNames,
        country,
        countryEvidence: null,
        region,
        regionEvidence: null,
        type,
        typeEvidence: null,
        rorTypes: null,
        ror,
        sources: noSources,
        domains: [...domains],
        settled: row
      }
      builder.drafts.push(draft)
      for (const domain of domains) {
        builder.byDomain.set(domain, draft)
        builder.knownRoles.set(domain, null)
      }
    }
    for (const [domain, role] of data.roles) builder.knownRoles.set(domain, role)
    for (const [domain, source] of data.deny) builder.deny.set(domain, source)
    for (const [domain, source] of data.abused) builder.abused.set(domain, source)
    for (const row of data.nonInstitutions) builder.nonInstitutions.set(row[0], row)
    for (const rule of data.suffixRules) builder.zones.set(rule[0], rule)
    return builder
  }

  /** Makes a settled draft's sets and evidence from its row, before anything changes it. */
  private unsettle(draft: Draft): void {
    const row = draft.settled
    if (row === null) return
    draft.settled = null
    const at = (i: number): EvidenceRow | null => (i < 0 ? null : this.baseEvidence[i]!)
    const [nameEv, typeEv, countryEv, regionEv] = row[10]
    draft.names = new Set(row[8])
    draft.sources = new Set(row[6])
    draft.nameEvidence = at(nameEv)
    draft.typeEvidence = at(typeEv)
    draft.countryEvidence = at(countryEv)
    draft.regionEvidence = at(regionEv)
  }

  /** The evidence table of the data this builder started from, which settled rows point into. */
  private baseEvidence: ReadonlyArray<EvidenceRow> = []

  /** The siblings of the data this builder started from (`siblings.ts`), kept while their institution and domain are. */
  private baseSiblings: string | undefined

  sourceAt(index: number): DataSource {
    return this.sources[index]!
  }

  source(source: DataSource): number {
    const found = this.sources.findIndex((s) => s.dataset === source.dataset && s.version === source.version)
    if (found >= 0) return found
    this.sources.push(source)
    return this.sources.length - 1
  }

  /** The normalised form of a dataset domain, or undefined (recorded in the report) when no institution can own it. */
  acceptDomain(raw: string): string | undefined {
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

  /** Whether an institution lists `domain` (normalised). */
  isListed(domain: string): boolean {
    return this.byDomain.has(domain)
  }

  /** Whether `domain` is recorded as a non-institution. */
  isNonInstitution(domain: string): boolean {
    return this.nonInstitutions.has(domain)
  }

  /** What the nearest listed domain strictly above `domain` is: an institution's, a non-institution's, or none. */
  listedAbove(domain: string): "institution" | "non-institution" | undefined {
    for (let dot = domain.indexOf("."); dot >= 0; dot = domain.indexOf(".", dot + 1)) {
      const suffix = domain.slice(dot + 1)
      if (this.byDomain.has(suffix)) return "institution"
      if (this.nonInstitutions.has(suffix)) return "non-institution"
    }
    return undefined
  }

  /** The academic zone `domain` falls under, if any. */
  readonly zoneOf = (domain: string): SuffixRuleRow | undefined => {
    for (let i = domain.indexOf("."); i >= 0; i = domain.indexOf(".", i + 1)) {
      const rule = this.zones.get(domain.slice(i + 1))
      if (rule !== undefined) return rule
    }
    return undefined
  }

  /** The names an institution listing `domain` is known by (for matching other datasets' records to it). */
  namesOf(domain: string): ReadonlyArray<string> {
    const draft = this.byDomain.get(domain)
    if (draft?.settled != null) return [...(draft.name === null ? [] : [draft.name]), ...draft.settled[8]]
    return draft === undefined ? [] : [...(draft.name === null ? [] : [draft.name]), ...draft.names]
  }

  /** Whether the institution listing `domain` already knows its country from a dataset. */
  hasCountry(domain: string): boolean {
    return this.byDomain.get(domain)?.country != null
  }

  /**
   * Adds an institution. Without `override` it merges into an institution that
   * already owns one of its domains, filling only what is missing and taking
   * only domains nobody owns; with `override` (user datasets) its facts win
   * and its domains move to it.
   */
  addInstitution(input: InstitutionInput, source: DataSource, options: { readonly override?: boolean } = {}): void {
    const sourceIndex = this.source(source)
    const override = options.override === true
    this.byRor = undefined
    const domains = input.domains.flatMap((raw) => this.acceptDomain(raw) ?? [])
    if (domains.length === 0) return
    const free = override ? domains : domains.filter((d) => !this.nonInstitutions.has(d))
    const owners = [...new Set(free.flatMap((d) => this.byDomain.get(d) ?? []))]
    const existing = owners[0]
    const stated = (rule: string): EvidenceRow => evidence(source.dataset, rule, "high")
    if (existing !== undefined && !override) {
      this.unsettle(existing)
      // A dataset that names several listed domains as one institution joins them (unless the registry tells them apart).
      for (const other of owners.slice(1)) if (other.ror === null || existing.ror === null) this.merge(existing, other)
      existing.sources.add(sourceIndex)
      if (existing.name === null && input.name) {
        existing.name = input.name
        existing.nameEvidence = stated("dataset-name")
      } else if (input.name && input.name !== existing.name) existing.names.add(input.name)
      for (const name of input.names ?? []) if (name !== existing.name) existing.names.add(name)
      if (existing.country === null && input.country) {
        existing.country = input.country
        existing.countryEvidence = input.countryEvidence ?? stated("dataset-country")
      }
      if (existing.region === null && input.region) {
        existing.region = input.region
        existing.regionEvidence = stated("dataset-region")
      }
      if (existing.type === null && input.type) {
        existing.type = input.type
        existing.typeEvidence = stated("dataset-type")
      }
      existing.rorTypes ??= input.rorTypes ?? null
      existing.ror ??= input.ror ?? null
      for (const domain of free) if (!this.byDomain.has(domain)) this.claim(existing, domain)
      return
    }
    const draft: Draft = {
      id: free[0] ?? domains[0]!,
      name: input.name ?? null,
      nameEvidence: input.name ? stated("dataset-name") : null,
      names: new Set((input.names ?? []).filter((n) => n !== input.name)),
      country: input.country ?? null,
      countryEvidence: input.country ? (input.countryEvidence ?? stated("dataset-country")) : null,
      region: input.region ?? null,
      regionEvidence: input.region ? stated("dataset-region") : null,
      type: input.type ?? null,
      typeEvidence: input.type ? stated("dataset-type") : null,
      rorTypes: input.rorTypes ?? null,
      ror: input.ror ?? null,
      sources: new Set([sourceIndex]),
      domains: [],
      settled: null
    }
    this.drafts.push(draft)
    for (const domain of free) if (override || !this.byDomain.has(domain)) this.claim(draft, domain)
  }

  /**
   * Joins the institution listing `domain` to the one the registry knows as
   * `ror`, when both exist and differ; false when there is nothing to join.
   */
  joinRegistryInstitution(domain: string, ror: string): boolean {
    const draft = this.byDomain.get(domain)
    if (draft === undefined || draft.ror !== null) return false
    if (this.byRor === undefined) {
      this.byRor = new Map()
      for (const d of this.drafts) if (d.ror !== null && !this.byRor.has(d.ror)) this.byRor.set(d.ror, d)
    }
    const target = this.byRor.get(ror)
    if (target === undefined || target === draft || target.domains.length === 0) return false
    this.merge(target, draft)
    return true
  }

  /** Moves `other`'s domains, names and sources into `into`, filling what `into` lacks. */
  private merge(into: Draft, other: Draft): void {
    this.unsettle(into)
    this.unsettle(other)
    for (const domain of [...other.domains]) this.claim(into, domain)
    for (const source of other.sources) into.sources.add(source)
    if (other.name !== null && other.name !== into.name) into.names.add(other.name)
    for (const name of other.names) if (name !== into.name) into.names.add(name)
    if (into.country === null) [into.country, into.countryEvidence] = [other.country, other.countryEvidence]
    if (into.region === null) [into.region, into.regionEvidence] = [other.region, other.regionEvidence]
    if (into.type === null) [into.type, into.typeEvidence] = [other.type, other.typeEvidence]
    into.rorTypes ??= other.rorTypes
    into.ror ??= other.ror
  }

  private claim(draft: Draft, domain: string): void {
    const owner = this.byDomain.get(domain)
    if (owner === draft) return
    this.unsettle(draft)
    if (owner !== undefined) owner.domains = owner.domains.filter((d) => d !== domain)
    draft.domains.push(domain)
    this.byDomain.set(domain, draft)
    this.deny.delete(domain)
    this.nonInstitutions.delete(domain)
  }

  /**
   * Records that `raw` is an organisation that is not an educational
   * institution; it stops being any institution's domain.
   */
  addNonInstitution(
    raw: string,
    kind: NonInstitutionKind,
    name: string | null,
    country: string | null,
    source: DataSource,
    rule: string
  ): void {
    const domain = this.acceptDomain(raw)
    if (domain === undefined) return
    const owner = this.byDomain.get(domain)
    if (owner !== undefined) {
      owner.domains = owner.domains.filter((d) => d !== domain)
      this.byDomain.delete(domain)
    }
    this.nonInstitutions.set(domain, [domain, kind, name, country, this.source(source), rule])
  }

  addDeny(raw: string, source: DataSource): void {
    const domain = normalizeDatasetDomain(raw)
    if (hostPattern.test(domain)) this.deny.set(domain, this.source(source))
  }

  addAbused(raw: string, source: DataSource): void {
    const domain = normalizeDatasetDomain(raw)
    if (hostPattern.test(domain)) this.abused.set(domain, this.source(source))
  }

  /** An academic zone with its registry policy. */
  addZone(zone: ZonePolicy, source: DataSource): void {
    this.zones.set(zone.suffix, [
      zone.suffix,
      zone.country,
      zone.type,
      this.source(source),
      zone.region,
      zone.typeKnown,
      zone.policy,
      zone.reference
    ])
  }

  /** An academic zone known only by its suffix, country and type (a type other than `other` is taken as its policy's). */
  addSuffixRule(suffix: string, country: string | null, type: InstitutionType, source: DataSource): void {
    this.addZone(
      {
        suffix,
        country,
        region: null,
        type,
        typeKnown: type !== "other",
        policy: "educational and research institutions",
        reference: source.dataset
      },
      source
    )
  }

  finish(): InstitutionsData {
    // Settled rows keep their evidence positions, so the table starts as the one they point into.
    const evidenceTable = new EvidenceTable(this.baseEvidence)
    const ref = (row: EvidenceRow | null): number => evidenceTable.ref(row)
    const institutions: Array<InstitutionRow> = []
    const roles: Array<RoleRow> = []
    const ids = new Set<string>()
    for (const draft of this.drafts) {
      if (draft.domains.length === 0) continue
      const settled = draft.settled
      if (settled !== null && !ids.has(settled[0])) {
        ids.add(settled[0])
        institutions.push(
          settled[7].length === draft.domains.length
            ? settled
            : ([...settled.slice(0, 7), draft.domains, ...settled.slice(8)] as unknown as InstitutionRow)
        )
        for (const domain of draft.domains) {
          const role = this.knownRoles.get(domain)
          if (role != null) roles.push([domain, role])
        }
        continue
      }
      this.unsettle(draft)
      if (draft.country === null) {
        const inferred = draft.domains.map((d) => inferCountry(d, this.zoneOf)).find((c) => c !== undefined)
        if (inferred !== undefined) [draft.country, draft.countryEvidence] = inferred
      }
      if (draft.region === null) {
        const zone = draft.domains.map((d) => this.zoneOf(d)).find((z) => z?.[4] != null)
        if (zone !== undefined) {
          draft.region = zone[4]
          draft.regionEvidence = evidence(RULES_SOURCE, `zone-policy:${zone[0]}`, "medium")
        }
      }
      const [type, typeEvidence] = resolveType(draft, this.zoneOf)
      let id = draft.domains[0]!
      for (let n = 2; ids.has(id); n++) id = `${draft.domains[0]}~${n}`
      ids.add(id)
      institutions.push([
        id,
        draft.name,
        draft.country,
        draft.countryEvidence === null ? null : countrySourceOf(draft.countryEvidence[1]),
        draft.region,
        type,
        [...draft.sources].sort((a, b) => a - b),
        draft.domains,
        [...draft.names],
        draft.ror,
        [ref(draft.nameEvidence), ref(typeEvidence), ref(draft.countryEvidence), ref(draft.regionEvidence)]
      ])
      for (const domain of draft.domains) {
        const role = this.knownRoles.has(domain) ? this.knownRoles.get(domain) : ownRole(domain)
        if (role != null) roles.push([domain, role])
      }
    }
    const rows = (map: Map<string, number>): Array<DomainRow> => [...map].sort(byFirst)
    return {
      format: institutionsDataFormat,
      sources: this.sources,
      evidence: evidenceTable.rows,
      institutions,
      deny: rows(this.deny),
      abused: rows(this.abused),
      roles: roles.sort(byFirst),
      nonInstitutions: [...this.nonInstitutions.values()].sort(byFirst),
      suffixRules: [...this.zones.values()].sort(byFirst),
      siblings: encodeSiblings(
        decodeSiblings(this.baseSiblings).filter(([label, via]) => {
          const domain = `${label}.${siblingZone}`
          return (
            this.byDomain.has(via) &&
            !this.byDomain.has(domain) &&
            !this.nonInstitutions.has(domain) &&
            !this.deny.has(domain)
          )
        })
      )
    }
  }
}
