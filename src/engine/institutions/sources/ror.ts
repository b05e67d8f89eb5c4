/**
 * ROR (Research Organization Registry, CC0) records → `RorRecordRow`s.
 * Reads both schemas: v1 (releases up to v1.44 and the `v1/` copies after
 * it: `name`, `links`, `types: ["Education"]`, geonames admin1 codes) and
 * v2 (`names`, `domains`, `links: [{type, value}]`, `locations`). The
 * ror-records repository's release folders `vX.Y/` each hold the records
 * changed in that release; `latestRecords` keeps, per id, the record of the
 * latest release. Withdrawn records (duplicates, mistakes) are dropped, and
 * so are records with neither a domain nor a website host, which no email
 * can match.
 */
import { type RorRecordRow, type RorType, rorTypes } from "./SourceSnapshot.ts"

interface V2Name {
  readonly value: string
  readonly types: ReadonlyArray<string>
}
interface V2Record {
  readonly id: string
  readonly status: string
  readonly types: ReadonlyArray<string>
  readonly names: ReadonlyArray<V2Name>
  readonly domains?: ReadonlyArray<string>
  readonly links?: ReadonlyArray<{ readonly type: string; readonly value: string }>
  readonly locations?: ReadonlyArray<{
    readonly geonames_details?: { readonly country_code?: string; readonly country_subdivision_code?: string | null }
  }>
  readonly relationships?: ReadonlyArray<{ readonly type: string; readonly id: string }>
}
interface V1Record {
  readonly id: string
  readonly status: string
  readonly name: string
  readonly types: ReadonlyArray<string>
  readonly links?: ReadonlyArray<string>
  readonly aliases?: ReadonlyArray<string>
  readonly acronyms?: ReadonlyArray<string>
  readonly labels?: ReadonlyArray<{ readonly label: string }>
  readonly country?: { readonly country_code?: string }
  readonly addresses?: ReadonlyArray<{
    readonly geonames_city?: { readonly geonames_admin1?: { readonly code?: string | null } | null } | null
  }>
  readonly relationships?: ReadonlyArray<{ readonly type: string; readonly id: string }>
}

const shortId = (id: string): string => id.slice(id.lastIndexOf("/") + 1)

/** A lower-case host without `www.` and trailing dot. */
const host = (raw: string): string =>
  raw
    .trim()
    .toLowerCase()
    .replace(/^www\d?\./, "")
    .replace(/\.$/, "")

/**
 * The host of a website link when the link is the site's root: a link with
 * a path (`https://univ.edu/institute/`) names a unit hosted on someone
 * else's site, whose host is not the unit's own.
 */
export const websiteHost = (url: string): string | undefined => {
  try {
    const parsed = new URL(url.trim())
    if (parsed.pathname !== "/" && parsed.pathname !== "") return undefined
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined
    return host(parsed.hostname)
  } catch {
    return undefined
  }
}

const knownType = (type: string): RorType | undefined => {
  const lower = type.toLowerCase()
  return (rorTypes as ReadonlyArray<string>).includes(lower) ? (lower as RorType) : undefined
}

const unique = (values: Iterable<string>, except?: string): Array<string> => {
  const seen = new Set<string>()
  for (const value of values) if (value !== "" && value !== except) seen.add(value)
  return [...seen]
}

const parents = (relationships: V1Record["relationships"]): Array<string> =>
  (relationships ?? []).filter((r) => r.type.toLowerCase() === "parent").map((r) => shortId(r.id))

const fromV2 = (record: V2Record): RorRecordRow | undefined => {
  const display = record.names.find((n) => n.types.includes("ror_display")) ?? record.names[0]
  if (display === undefined) return undefined
  const details = record.locations?.[0]?.geonames_details
  const country = details?.country_code?.toUpperCase() ?? null
  const subdivision = details?.country_subdivision_code
  return row(
    record,
    display.value,
    record.types,
    country,
    country !== null && subdivision ? `${country}-${subdivision.toUpperCase()}` : null,
    (record.domains ?? []).map(host),
    (record.links ?? []).filter((l) => l.type === "website").map((l) => l.value),
    record.names.filter((n) => !n.types.includes("acronym")).map((n) => n.value),
    record.names.filter((n) => n.types.includes("acronym")).map((n) => n.value)
  )
}

const fromV1 = (record: V1Record): RorRecordRow | undefined => {
  const country = record.country?.country_code?.toUpperCase() ?? null
  // Geonames admin1 codes are ISO 3166-2 only in some countries (`US.NE`); compiling checks them.
  const admin1 = record.addresses?.[0]?.geonames_city?.geonames_admin1?.code
  const region =
    country !== null && admin1 && /^[A-Z]{2}\.[A-Z0-9]{1,3}$/.test(admin1) ? admin1.replace(".", "-") : null
  return row(
    record,
    record.name,
    record.types,
    country,
    region,
    [],
    record.links ?? [],
    [...(record.labels ?? []).map((l) => l.label), ...(record.aliases ?? [])],
    record.acronyms ?? []
  )
}

const row = (
  record: V1Record | V2Record,
  name: string,
  types: ReadonlyArray<string>,
  country: string | null,
  region: string | null,
  domains: ReadonlyArray<string>,
  links: ReadonlyArray<string>,
  names: ReadonlyArray<string>,
  acronyms: ReadonlyArray<string>
): RorRecordRow | undefined => {
  if (record.status !== "active" && record.status !== "inactive") return undefined
  const websites = unique(links.flatMap((link) => websiteHost(link) ?? []))
  if (domains.length === 0 && websites.length === 0) return undefined
  return [
    shortId(record.id),
    name.trim(),
    unique(types.flatMap((t) => knownType(t) ?? [])) as Array<RorType>,
    record.status,
    country,
    region,
    unique(domains),
    websites,
    unique(
      names.map((n) => n.trim()),
      name.trim()
    ),
    unique(acronyms.map((a) => a.trim())),
    parents(record.relationships)
  ]
}

/** One ROR record of either schema, or `undefined` when it is withdrawn or has no domain or website host. */
export const rorRecordRow = (record: unknown): RorRecordRow | undefined => {
  if (typeof record !== "object" || record === null || typeof (record as { id?: unknown }).id !== "string") {
    return undefined
  }
  return Array.isArray((record as { names?: unknown }).names)
    ? fromV2(record as V2Record)
    : typeof (record as { name?: unknown }).name === "string"
      ? fromV1(record as V1Record)
      : undefined
}

/** Release folder names in release order (`v1.9` before `v1.10`, `v1.17` before `v1.17.1`). */
export const compareReleases = (a: string, b: string): number => {
  const x = a.replace(/^v/, "").split(".").map(Number)
  const y = b.replace(/^v/, "").split(".").map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? -1) - (y[i] ?? -1)
    if (d !== 0) return d
  }
  return 0
}

/**
 * The latest version of each record, given records in release order (a
 * later one replaces an earlier one with the same id), as rows sorted by
 * id. A record that became withdrawn removes the earlier versions too.
 */
export const latestRecords = (recordsInReleaseOrder: Iterable<unknown>): Array<RorRecordRow> => {
  const latest = new Map<string, RorRecordRow | undefined>()
  for (const record of recordsInReleaseOrder) {
    const id = (record as { id?: unknown }).id
    if (typeof id === "string") latest.set(shortId(id), rorRecordRow(record))
  }
  return [...latest.values()]
    .filter((row): row is RorRecordRow => row !== undefined)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
}
