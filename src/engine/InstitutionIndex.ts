/**
 * The institution index as an Effect service: the built-in open data
 * compiled at build time (or the newer index `campusgate data import`
 * compiled into the data directory), with user datasets merged on top
 * (each keeps its provenance). Building it is the only slow step (about
 * 150 ms for the built-in data, measured: bench/library.ts); lookups
 * afterwards are plain synchronous calls on `table`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidConfiguration } from "../domain/errors.ts"
import { readBuiltInJson, readImportedIndex } from "./data/builtInData.ts"
import { IndexBuilder } from "./institutions/IndexBuilder.ts"
import type { InstitutionsData } from "./institutions/InstitutionsData.ts"
import { institutionsDataFormat } from "./institutions/InstitutionsData.ts"
import { InstitutionTable } from "./institutions/InstitutionTable.ts"
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
  checkFormat(readBuiltInJson("institutions.json") as InstitutionsData, "institutions.json", "run `npm run build`")

/** The data directory's imported index, else the built-in one. */
export const loadInstitutions = (dataDir: string | undefined): InstitutionsData => {
  const imported = dataDir === undefined ? undefined : (readImportedIndex(dataDir) as InstitutionsData | undefined)
  return imported === undefined
    ? loadBuiltInInstitutions()
    : checkFormat(imported, `${dataDir}/institutions/index.json`, "run `campusgate data import` again")
}

/** Builds the table synchronously; throws `DatasetError` for a bad user dataset. */
export const buildInstitutionTable = (options: InstitutionIndexOptions = {}): InstitutionTable => {
  const base = options.builtIn === false ? emptyData : loadInstitutions(options.dataDir)
  const datasets = options.datasets ?? []
  if (datasets.length === 0) return InstitutionTable.fromData(base)
  const builder = IndexBuilder.from(base)
  for (const dataset of datasets) {
    const source = builder.source(
      dataset.version === undefined ? { dataset: dataset.name } : { dataset: dataset.name, version: dataset.version }
    )
    for (const record of parseDataset(dataset))
      builder.addInstitution(record, builder.sourceAt(source), { override: true })
  }
  return InstitutionTable.fromData(builder.finish())
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
