/**
 * Merges institution datasets into one `InstitutionsData`: the built-in open
 * data at build time and user datasets (with `override`) at load time.
 * Guarantees: a domain belongs to at most one institution or
 * non-institution; a bare public suffix (`edu.cn`) is never an institution
 * domain; every fact (name, type, country, region) carries its evidence —
 * the dataset or rule it came from and how sure it is. Without `override`
 * a later dataset only fills facts and domains nobody has yet, so datasets
 * are added most trusted first. The builder decides which institution owns
 * each domain; an institution being built, and how its facts are filled,
 * merged and compiled into a row, is a draft (`institutionDraft.ts`).
 */
import { parse } from "tldts"
import type { DataSource, InstitutionType } from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"
import { ownRole } from "./draftFacts.ts"
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
import {
  type Draft,
  draftNames,
  draftRow,
  fillDraft,
  type InstitutionInput,
  mergeDraftFacts,
  newDraft,
  overrideDraft,
  settledDraft,
  unsettleDraft
} from "./institutionDraft.ts"
import { decodeSiblings, encodeSiblings, siblingZone } from "./siblings.ts"
import type { ZonePolicy } from "./zones.ts"

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

const byFirst = <T extends readonly [string, ...Array<unknown>]>(a: T, b: T): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0

/** The character references some sources leave in names (`Science &amp; Technology`, `&#39;`). */
const characterReference = /&(amp|quot|apos|lt|gt|#(\d{1,7})|#x([0-9a-f]{1,6}));/gi
const namedReferences: Readonly<Record<string, string>> = { amp: "&", quot: '"', apos: "'", lt: "<", gt: ">" }

/** A name as plain text, its character references replaced by the characters they stand for. */
export const plainText = (name: string): string =>
  name.includes("&")
    ? name.replace(characterReference, (whole, named: string, decimal?: string, hex?: string) => {
        const code = decimal !== undefined ? Number(decimal) : hex !== undefined ? Number.parseInt(hex, 16) : undefined
        if (code === undefined) return namedReferences[named.toLowerCase()] ?? whole
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
      })
    : name

const plainNames = (input: InstitutionInput): InstitutionInput =>
  ({
    ...input,
    ...(input.name === undefined || input.name === null ? {} : { name: plainText(input.name) }),
    ...(input.names === undefined ? {} : { names: input.names.map(plainText) })
  }) as InstitutionInput

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
      const draft = settledDraft(row)
      builder.drafts.push(draft)
      for (const domain of draft.domains) {
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
    unsettleDraft(draft, this.baseEvidence)
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
    return draft === undefined ? [] : draftNames(draft)
  }

  /** Whether the institution listing `domain` already knows its country from a dataset. */
  hasCountry(domain: string): boolean {
    return this.byDomain.get(domain)?.country != null
  }

  /**
   * Adds an institution. Without `override` it merges into an institution that
   * already owns one of its domains, filling only what is missing and taking
   * only domains nobody owns; with `override` (user datasets) it replaces the
   * record of the institution owning its domains: its facts win, its domains
   * join it, and the institution keeps its id and its other domains (one
   * institution, not a second one beside it; the institutions of several
   * domains it names become one).
   */
  addInstitution(given: InstitutionInput, source: DataSource, options: { readonly override?: boolean } = {}): void {
    const input = plainNames(given)
    const sourceIndex = this.source(source)
    const override = options.override === true
    this.byRor = undefined
    const domains = input.domains.flatMap((raw) => this.acceptDomain(raw) ?? [])
    if (domains.length === 0) return
    const free = override ? domains : domains.filter((d) => !this.nonInstitutions.has(d))
    const owners = [...new Set(free.flatMap((d) => this.byDomain.get(d) ?? []))]
    const existing = owners[0]
    if (existing !== undefined && override) {
      this.unsettle(existing)
      for (const other of owners.slice(1)) this.merge(existing, other)
      overrideDraft(existing, input, source.dataset, sourceIndex)
      for (const domain of free) this.claim(existing, domain)
      return
    }
    if (existing !== undefined) {
      this.unsettle(existing)
      // A dataset that names several listed domains as one institution joins them (unless the registry tells them apart).
      for (const other of owners.slice(1)) if (other.ror === null || existing.ror === null) this.merge(existing, other)
      fillDraft(existing, input, source.dataset, sourceIndex)
      for (const domain of free) if (!this.byDomain.has(domain)) this.claim(existing, domain)
      return
    }
    const draft = newDraft(free[0] ?? domains[0]!, input, source.dataset, sourceIndex)
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
    mergeDraftFacts(into, other)
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
      let id = draft.domains[0]!
      for (let n = 2; ids.has(id); n++) id = `${draft.domains[0]}~${n}`
      ids.add(id)
      institutions.push(draftRow(draft, id, this.zoneOf, ref))
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
