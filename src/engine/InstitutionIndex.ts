/**
 * The institution index as an Effect service: the built-in open data
 * compiled at build time (or the newer index `campusgate data import`
 * compiled into the data directory), with user datasets merged on top
 * (each keeps its provenance); lookups are plain synchronous calls on
 * `table`.
 *
 * Every table is read in its binary form (`institutions/tableBuffer.ts`)
 * with one file read: the built-in one from `dist/data/institutions.bin`,
 * an imported one from `index.bin` beside its `index.json` (compiled again
 * when it was not compiled from that very file), and one merged with user
 * datasets from a cache keyed by everything the merge reads
 * (`tableCacheDir`: the datasets' contents, not their names, so a copy of
 * the config elsewhere finds it), merged and compiled only when it changed. Each load
 * reports its duration and form on `institutionIndexChannel` (the daemon
 * logs it at start).
 */
import { createHash } from "node:crypto"
import { channel } from "node:diagnostics_channel"
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidConfiguration } from "../domain/errors.ts"
import { VERSION } from "../version.ts"
import {
  builtInDataDir,
  builtInTableFile,
  importedIndexFile,
  importedTableFile,
  inSharedMemory,
  readBuiltInBytes,
  readBuiltInJson,
  readBuiltInShared,
  readImportedIndex,
  readShared,
  tableCacheDir
} from "./data/builtInData.ts"
import { compileCandidateKnowledge } from "./institutions/CandidateScorer.ts"
import { IndexBuilder } from "./institutions/IndexBuilder.ts"
import type { InstitutionsData } from "./institutions/InstitutionsData.ts"
import { institutionsDataFormat } from "./institutions/InstitutionsData.ts"
import { InstitutionTable } from "./institutions/InstitutionTable.ts"
import { encodeTable, tableBufferFormat } from "./institutions/tableBuffer.ts"
import { DatasetError, type DatasetSpec, parseDataset } from "./institutions/userDatasets.ts"

export interface InstitutionIndexOptions {
  /** Include the built-in open data (default true). */
  readonly builtIn?: boolean | undefined
  /** User datasets, merged in order on top of the built-in data: later entries win. */
  readonly datasets?: ReadonlyArray<DatasetSpec> | undefined
  /** A data directory whose imported index (`campusgate data import`), if any, replaces the built-in one. */
  readonly dataDir?: string | undefined
}

const emptyData: InstitutionsData = {
  format: institutionsDataFormat,
  sources: [],
  evidence: [],
  institutions: [],
  deny: [],
  abused: [],
  roles: [],
  nonInstitutions: [],
  suffixRules: []
}

const checkFormat = (data: InstitutionsData, what: string, fix: string): InstitutionsData => {
  if (data.format !== institutionsDataFormat) {
    throw new Error(`${what} has format "${data.format}", expected "${institutionsDataFormat}": ${fix}`)
  }
  return data
}

export const loadBuiltInInstitutions = (): InstitutionsData =>
  checkFormat(
    readBuiltInJson("institutions.json.gz") as InstitutionsData,
    "institutions.json.gz",
    "run `npm run build`"
  )

/** The data directory's imported index, else the built-in one. */
export const loadInstitutions = (dataDir: string | undefined): InstitutionsData => {
  const imported = dataDir === undefined ? undefined : (readImportedIndex(dataDir) as InstitutionsData | undefined)
  return imported === undefined
    ? loadBuiltInInstitutions()
    : checkFormat(imported, `${dataDir}/institutions/index.json`, "run `campusgate data import` again")
}

/** Where a table's load is reported (`IndexLoadReport`): subscribers only, nothing otherwise. */
export const institutionIndexChannel = "campusgate:institution-index"

export interface IndexLoadReport {
  readonly ms: number
  /** `built-in`, `imported`: read compiled; `cached`: merged with user datasets earlier; `compiled`: compiled now. */
  readonly form: "built-in" | "imported" | "cached" | "compiled"
}

const loads = channel(institutionIndexChannel)

/** A file's size and modification time: what a table compiled from it records, to tell when it changed. */
const fileStamp = (path: string): string => {
  const stat = statSync(path)
  return `${stat.size}:${stat.mtimeMs}`
}

/** Writes a compiled table; one that cannot be written (a read-only directory) is compiled again next time. */
const keepTable = (path: string, bytes: Uint8Array): void => {
  try {
    // Private as everything in a data directory: directories 0700, files 0600.
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 })
    writeFileSync(`${path}.${process.pid}.tmp`, bytes, { mode: 0o600 })
    renameSync(`${path}.${process.pid}.tmp`, path)
  } catch {}
}

/** The table in `path` (and its bytes) if it was compiled from `stamp`, else undefined. */
const readTableBytes = (
  path: string,
  stamp: string,
  datasetNames?: Readonly<Record<string, string>>
): { table: InstitutionTable; bytes: Uint8Array } | undefined => {
  if (!existsSync(path)) return undefined
  try {
    const bytes = readShared(path)
    const table = InstitutionTable.fromBuffer(bytes, datasetNames)
    return table.compiledFrom === stamp ? { table, bytes } : undefined
  } catch {
    return undefined
  }
}

/** The table in `path` if it was compiled from `stamp`, else undefined. */
const readTable = (path: string, stamp: string): InstitutionTable | undefined => readTableBytes(path, stamp)?.table

/** The built-in table's stamp; throws `BuiltInDataMissing` when the build has not run. */
const builtInStamp = (): string => {
  if (!existsSync(builtInDataDir + builtInTableFile)) readBuiltInBytes(builtInTableFile)
  return fileStamp(builtInDataDir + builtInTableFile)
}

/** The built-in table, read in its binary form. */
export const loadBuiltInTable = (): InstitutionTable => InstitutionTable.fromBuffer(readBuiltInShared(builtInTableFile))

/**
 * The imported index's table: `index.bin` when it was compiled from this
 * `index.json`, else compiled from it now and written there for the next load.
 */
const importedTable = (dataDir: string): { table: InstitutionTable; form: IndexLoadReport["form"] } | undefined => {
  const file = importedIndexFile(dataDir)
  if (!existsSync(file)) return undefined
  const stamp = fileStamp(file)
  const kept = readTable(importedTableFile(dataDir), stamp)
  if (kept !== undefined) return { table: kept, form: "imported" }
  const data = loadInstitutions(dataDir)
  const bytes = encodeTable(data, { compiledFrom: stamp, knowledge: compileCandidateKnowledge(data) })
  keepTable(importedTableFile(dataDir), bytes)
  return { table: InstitutionTable.fromBuffer(inSharedMemory(bytes)), form: "compiled" }
}

/** Compiles the imported index of a data directory into its binary form beside it (`campusgate data import`). */
export const compileImportedTable = (dataDir: string): void => {
  const file = importedIndexFile(dataDir)
  const data = loadInstitutions(dataDir)
  const knowledge = compileCandidateKnowledge(data)
  keepTable(importedTableFile(dataDir), encodeTable(data, { compiledFrom: fileStamp(file), knowledge }))
}

/** Where tables merged with user datasets are kept: the data directory's cache, then the system's. */
const mergedTableDirs = (dataDir: string | undefined): ReadonlyArray<string> =>
  // Only a data directory that exists: the index is no reason to make one (a library may name one it never uses).
  dataDir === undefined || !existsSync(dataDir)
    ? [tableCacheDir()]
    : [join(dataDir, "cache", "institution-tables"), tableCacheDir()]

/** How many merged tables the cache keeps (the newest). */
const keptMergedTables = 4

const pruneCache = (directory: string): void => {
  try {
    const tables = readdirSync(directory)
      .filter((name) => name.endsWith(".bin"))
      .map((name) => ({ path: join(directory, name), at: statSync(join(directory, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at)
    for (const old of tables.slice(keptMergedTables)) unlinkSync(old.path)
  } catch {}
}

const buildTable = (options: InstitutionIndexOptions): { table: InstitutionTable; form: IndexLoadReport["form"] } => {
  const datasets = options.datasets ?? []
  const builtIn = options.builtIn !== false
  const { dataDir } = options
  if (datasets.length === 0) {
    if (!builtIn) return { table: InstitutionTable.fromData(emptyData), form: "compiled" }
    return (
      (dataDir === undefined ? undefined : importedTable(dataDir)) ?? { table: loadBuiltInTable(), form: "built-in" }
    )
  }
  // Everything the merge reads: its code's version, the base it starts from and each dataset. Datasets are
  // merged under stand-in names, one per distinct name, and read back under theirs: a dataset's name is its path
  // as shown (relative to the working directory), so the same contents elsewhere find the same table.
  const names = [...new Set(datasets.map((d) => d.name))]
  const standIn = (name: string) => `\u0000dataset ${names.indexOf(name)}`
  const named: Readonly<Record<string, string>> = Object.fromEntries(names.map((name) => [standIn(name), name]))
  const base = !builtIn
    ? "none"
    : dataDir !== undefined && existsSync(importedIndexFile(dataDir))
      ? fileStamp(importedIndexFile(dataDir))
      : builtInStamp()
  const stamp = createHash("sha256")
    .update(
      JSON.stringify([
        tableBufferFormat,
        VERSION,
        base,
        datasets.map((d) => [names.indexOf(d.name), d.version, d.format, d.content])
      ])
    )
    .digest("hex")
  // The data directory's cache outlives a container's temporary directory; the system's is shared by every
  // daemon (and test) on the machine. Read from the first that has it, written to both.
  const cachePaths = mergedTableDirs(dataDir).map((directory) => join(directory, `${stamp.slice(0, 32)}.bin`))
  for (const path of cachePaths) {
    const cached = readTableBytes(path, stamp, named)
    if (cached !== undefined) {
      for (const other of cachePaths) if (other !== path && !existsSync(other)) keepTable(other, cached.bytes)
      return { table: cached.table, form: "cached" }
    }
  }
  const builder = IndexBuilder.from(builtIn ? loadInstitutions(dataDir) : emptyData)
  for (const dataset of datasets) {
    const name = standIn(dataset.name)
    const source = builder.source(
      dataset.version === undefined ? { dataset: name } : { dataset: name, version: dataset.version }
    )
    for (const record of parseDataset(dataset))
      builder.addInstitution(record, builder.sourceAt(source), { override: true })
  }
  const merged = builder.finish()
  const bytes = encodeTable(merged, { compiledFrom: stamp, knowledge: compileCandidateKnowledge(merged) })
  for (const path of cachePaths) {
    keepTable(path, bytes)
    pruneCache(join(path, ".."))
  }
  return { table: InstitutionTable.fromBuffer(inSharedMemory(bytes), named), form: "compiled" }
}

/** Builds the table synchronously; throws `DatasetError` for a bad user dataset. */
export const buildInstitutionTable = (options: InstitutionIndexOptions = {}): InstitutionTable => {
  const started = performance.now()
  const { table, form } = buildTable(options)
  if (loads.hasSubscribers) loads.publish({ ms: performance.now() - started, form } satisfies IndexLoadReport)
  return table
}

export const toConfigurationError = (error: unknown): InvalidConfiguration =>
  error instanceof DatasetError
    ? new InvalidConfiguration({
        problems: error.problems.map((p) => ({
          path: `${error.dataset}:${p.location}${p.field ? ` ${p.field}` : ""}`,
          message: p.message
        }))
      })
    : new InvalidConfiguration({
        problems: [{ path: "institutions", message: String((error as Error).message ?? error) }]
      })

export class InstitutionIndex extends Context.Service<InstitutionIndex, { readonly table: InstitutionTable }>()(
  "campusgate/engine/InstitutionIndex"
) {
  /** Built-in data plus the given user datasets. */
  static readonly layer = (
    options: InstitutionIndexOptions = {}
  ): Layer.Layer<InstitutionIndex, InvalidConfiguration> =>
    Layer.effect(
      InstitutionIndex,
      Effect.try({
        try: () => InstitutionIndex.of({ table: buildInstitutionTable(options) }),
        catch: toConfigurationError
      })
    )

  /** A table from compiled data, for tests and tools that bring their own. */
  static readonly layerFromData = (data: InstitutionsData): Layer.Layer<InstitutionIndex> =>
    Layer.sync(InstitutionIndex, () => InstitutionIndex.of({ table: InstitutionTable.fromData(data) }))
}
