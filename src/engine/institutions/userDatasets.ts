/**
 * User datasets merged on top of the built-in index, each with provenance:
 * - `hipo`: the Hipo world-universities JSON (`name`, `domains`,
 *   `alpha_two_code`, `state-province` mapped to its ISO 3166-2 code);
 * - `csv`: a header row `domain,name,country,region,type` (any column order;
 *   `domain` and `name` required, several rows may share a name);
 * - `yaml`: a list of `{name, domains, country?, region?, type?}`.
 * Every bad row is reported with the dataset name, line (or index) and field.
 */
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { parse } from "tldts"
import { isMap, isSeq, LineCounter, parseDocument } from "yaml"
import { CountryCode } from "../../domain/Country.ts"
import { InstitutionType } from "../../domain/Institution.ts"
import { RegionCode } from "../../domain/Region.ts"
import { DomainName } from "../../domain/TargetGroup.ts"
import { parseCsv } from "./csv.ts"
import { normalizeDatasetDomain } from "./IndexBuilder.ts"
import type { InstitutionInput } from "./institutionDraft.ts"
import { builtInSubdivisions } from "./Subdivisions.ts"

export type DatasetFormat = "hipo" | "csv" | "yaml"

const formatByExtension: Record<string, DatasetFormat> = {
  ".json": "hipo",
  ".csv": "csv",
  ".yaml": "yaml",
  ".yml": "yaml"
}

/** The format of a dataset file by its extension (`.json` Hipo, `.csv`, `.yaml`/`.yml`), or `undefined`. */
export const datasetFormatOf = (path: string): DatasetFormat | undefined => {
  const dot = path.lastIndexOf(".")
  return dot < 0 ? undefined : formatByExtension[path.slice(dot).toLowerCase()]
}

/** What to say about a file whose format `datasetFormatOf` does not know. */
export const UNKNOWN_DATASET_FORMAT = "unknown dataset format; use .json (Hipo), .csv or .yaml"

export interface DatasetSpec {
  /** Shown as the source of every record, e.g. `partners.csv`. */
  readonly name: string
  readonly format: DatasetFormat
  readonly content: string
  /** Version or revision recorded in the provenance. */
  readonly version?: string
}

export interface DatasetProblem {
  /** `12` for a line, `[3]` for a JSON array index. */
  readonly location: string
  readonly field: string
  readonly message: string
}

export class DatasetError extends Error {
  override readonly name = "DatasetError"
  readonly dataset: string
  readonly problems: ReadonlyArray<DatasetProblem>
  constructor(dataset: string, problems: ReadonlyArray<DatasetProblem>) {
    super(
      `${problems
        .slice(0, 10)
        .map((p) => `${dataset}:${p.location}${p.field ? ` ${p.field}` : ""}: ${p.message}`)
        .join("\n")}${problems.length > 10 ? `\n(and ${problems.length - 10} more)` : ""}`
    )
    this.dataset = dataset
    this.problems = problems
  }
}

/** A domain an institution can own: under a known public suffix and not a public suffix itself. */
const InstitutionDomain = DomainName.pipe(
  Schema.check(
    Schema.makeFilter((domain: string) => {
      // A malformed name is DomainName's to report.
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) return true
      const parsed = parse(domain)
      if (parsed.isIcann !== true && parsed.isPrivate !== true) return `"${domain}" has no known top-level domain`
      if (parsed.publicSuffix === domain) return `"${domain}" is a public suffix, which no institution owns`
      return true
    })
  )
)

const UserInstitution = Schema.Struct({
  name: Schema.NonEmptyString,
  domains: Schema.Array(InstitutionDomain).pipe(Schema.check(Schema.isMinLength(1))),
  country: Schema.optionalKey(CountryCode),
  region: Schema.optionalKey(RegionCode),
  type: Schema.optionalKey(InstitutionType)
})

const HipoRecord = Schema.Struct({
  name: Schema.NonEmptyString,
  domains: Schema.Array(Schema.String).pipe(Schema.check(Schema.isMinLength(1))),
  alpha_two_code: Schema.optionalKey(Schema.NullOr(CountryCode)),
  "state-province": Schema.optionalKey(Schema.NullOr(Schema.String)),
  country: Schema.optionalKey(Schema.NullOr(Schema.String)),
  web_pages: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

type UserInstitution = typeof UserInstitution.Type
type HipoRecord = typeof HipoRecord.Type

const decodeOptions = { onExcessProperty: "error", errors: "all" } as const
const decodeUserResult = Schema.decodeUnknownResult(UserInstitution, decodeOptions)
const decodeHipoResult = Schema.decodeUnknownResult(HipoRecord, decodeOptions)

const reportIssues = (error: Schema.SchemaError, location: string, problems: Array<DatasetProblem>): undefined => {
  for (const issue of formatter(error.issue).issues) {
    problems.push({ location, field: (issue.path ?? []).join("."), message: issue.message })
  }
  return undefined
}

const decodeUser = (input: unknown, location: string, problems: Array<DatasetProblem>): UserInstitution | undefined => {
  const result = decodeUserResult(input)
  return result._tag === "Success" ? result.success : reportIssues(result.failure, location, problems)
}

const decodeHipo = (input: unknown, location: string, problems: Array<DatasetProblem>): HipoRecord | undefined => {
  const result = decodeHipoResult(input)
  return result._tag === "Success" ? result.success : reportIssues(result.failure, location, problems)
}

const lowerDomains = (input: unknown): unknown =>
  typeof input === "object" && input !== null && Array.isArray((input as { domains?: unknown }).domains)
    ? {
        ...input,
        domains: (input as { domains: Array<unknown> }).domains.map((d) =>
          typeof d === "string" ? normalizeDatasetDomain(d) : d
        )
      }
    : input

const parseHipo = (content: string, problems: Array<DatasetProblem>): Array<InstitutionInput> => {
  let json: unknown
  try {
    json = JSON.parse(content)
  } catch (error) {
    problems.push({ location: "1", field: "", message: `not valid JSON (${(error as Error).message})` })
    return []
  }
  if (!Array.isArray(json)) {
    problems.push({ location: "1", field: "", message: "expected a JSON array of universities" })
    return []
  }
  return json.flatMap((item, i) => {
    const record = decodeHipo(lowerDomains(item), `[${i}]`, problems)
    if (record === undefined) return []
    const country = record.alpha_two_code ?? null
    const province = record["state-province"]
    const region =
      country !== null && province !== undefined && province !== null
        ? (builtInSubdivisions().regionFromName(country, province) ?? null)
        : null
    return [{ name: record.name, domains: record.domains, country, region }]
  })
}

const csvColumns = ["domain", "name", "country", "region", "type"] as const

const parseCsvDataset = (content: string, problems: Array<DatasetProblem>): Array<InstitutionInput> => {
  const [header, ...rows] = parseCsv(content)
  if (header === undefined) return []
  const columns = header.fields.map((f) => f.trim().toLowerCase())
  for (const column of columns) {
    if (!(csvColumns as ReadonlyArray<string>).includes(column)) {
      problems.push({
        location: `${header.line}`,
        field: column,
        message: `unknown column; expected ${csvColumns.join(",")}`
      })
    }
  }
  for (const required of ["domain", "name"]) {
    if (!columns.includes(required))
      problems.push({ location: `${header.line}`, field: required, message: "missing column" })
  }
  if (problems.length > 0) return []
  const byName = new Map<string, { record: UserInstitution; domains: Array<string> }>()
  for (const row of rows) {
    const cell = (name: string) => {
      const value = row.fields[columns.indexOf(name)]?.trim()
      return value === undefined || value === "" ? undefined : value
    }
    const record: Record<string, unknown> = {
      name: cell("name") ?? "",
      domains: [normalizeDatasetDomain(cell("domain") ?? "")]
    }
    for (const optional of ["country", "region", "type"])
      if (cell(optional) !== undefined) record[optional] = cell(optional)
    const reported = problems.length
    const decoded = decodeUser(record, `${row.line}`, problems)
    // A row has one domain, in the `domain` column.
    for (let i = reported; i < problems.length; i++) {
      if (problems[i]!.field === "domains.0") problems[i] = { ...problems[i]!, field: "domain" }
    }
    if (decoded === undefined) continue
    const key = `${decoded.name}\u0000${decoded.country ?? ""}`
    const group = byName.get(key)
    if (group === undefined) byName.set(key, { record: decoded, domains: [...decoded.domains] })
    else group.domains.push(...decoded.domains)
  }
  return [...byName.values()].map(({ record, domains }) => ({ ...record, domains }))
}

const parseYamlDataset = (content: string, problems: Array<DatasetProblem>): Array<InstitutionInput> => {
  const lineCounter = new LineCounter()
  const document = parseDocument(content, { lineCounter })
  for (const error of document.errors) {
    problems.push({ location: `${error.linePos?.[0]?.line ?? 1}`, field: "", message: error.message.split("\n")[0]! })
  }
  if (problems.length > 0) return []
  const root = document.contents
  if (!isSeq(root)) {
    problems.push({ location: "1", field: "", message: "expected a list of institutions" })
    return []
  }
  return root.items.flatMap((node) => {
    const line = isMap(node) && node.range ? lineCounter.linePos(node.range[0]).line : 1
    const decoded = decodeUser(lowerDomains((node as { toJSON(): unknown }).toJSON()), `${line}`, problems)
    return decoded === undefined ? [] : [decoded]
  })
}

/** Parses a user dataset into institution records, or throws a `DatasetError` listing every bad row. */
export const parseDataset = (spec: DatasetSpec): Array<InstitutionInput> => {
  const problems: Array<DatasetProblem> = []
  let records: Array<InstitutionInput>
  try {
    records =
      spec.format === "hipo"
        ? parseHipo(spec.content, problems)
        : spec.format === "csv"
          ? parseCsvDataset(spec.content, problems)
          : parseYamlDataset(spec.content, problems)
  } catch (error) {
    const line = (error as { line?: number }).line
    throw new DatasetError(spec.name, [{ location: `${line ?? 1}`, field: "", message: (error as Error).message }])
  }
  if (problems.length > 0) throw new DatasetError(spec.name, problems)
  return records
}
