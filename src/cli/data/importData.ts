/**
 * `campusgate data import`: compiles a newer institution index into the
 * data directory from newer source snapshots — a swot checkout, a
 * ror-records checkout or ROR dump — the way the build compiles the
 * built-in one, so an operator refreshes the data without upgrading.
 * A source not given keeps the data directory's earlier import of it, else
 * the built-in snapshot; the Hipo snapshot and the curated
 * non-institutions are the package's. The daemon and the library use the
 * imported index from their next load of that data directory.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { builtInSourcesDir, importedDataDir, importedIndexFile } from "../../engine/data/builtInData.ts"
import { compileImportedTable } from "../../engine/InstitutionIndex.ts"
import { compileInstitutionIndex } from "../../engine/institutions/compileIndex.ts"
import { builtInSubdivisions } from "../../engine/institutions/Subdivisions.ts"
import { parseCuratedNonInstitutions } from "../../engine/institutions/sources/curated.ts"
import {
  decodeSnapshot,
  encodeSnapshot,
  hipoSnapshotFormat,
  rorSnapshotFormat,
  type SourceInfo,
  swotSnapshotFormat
} from "../../engine/institutions/sources/SourceSnapshot.ts"
import { ensureDirectory, writeFileAtomic } from "../../store/atomicWrite.ts"
import { readRorSource, readSwotCheckout, type VersionHint } from "./readSources.ts"

export interface ImportOptions {
  readonly dataDir: string
  readonly swot?: string | undefined
  readonly swotHint?: VersionHint
  readonly ror?: string | undefined
  readonly rorHint?: VersionHint
}

export interface ImportReport {
  readonly index: string
  readonly sources: ReadonlyArray<SourceInfo & { readonly from: string }>
  readonly report: Record<string, number>
}

/** A snapshot file: the data directory's earlier import, else the built-in one. */
const snapshotFile = (dataDir: string, file: string): string => {
  const imported = join(importedDataDir(dataDir), file)
  return existsSync(imported) ? imported : join(builtInSourcesDir, file)
}

export const importInstitutionData = (options: ImportOptions): ImportReport => {
  const { dataDir } = options
  const swotFile = snapshotFile(dataDir, "swot.json.gz")
  const rorFile = snapshotFile(dataDir, "ror.json.gz")
  const swot =
    options.swot === undefined
      ? decodeSnapshot(readFileSync(swotFile), swotSnapshotFormat, swotFile)
      : readSwotCheckout(options.swot, options.swotHint)
  const ror =
    options.ror === undefined
      ? decodeSnapshot(readFileSync(rorFile), rorSnapshotFormat, rorFile)
      : readRorSource(options.ror, options.rorHint)
  const hipoFile = join(builtInSourcesDir, "university-domains.json.gz")
  const compiled = compileInstitutionIndex({
    swot,
    ror,
    hipo: decodeSnapshot(readFileSync(hipoFile), hipoSnapshotFormat, hipoFile),
    nonInstitutions: parseCuratedNonInstitutions(
      readFileSync(join(builtInSourcesDir, "non-institutions.yaml"), "utf8")
    ),
    subdivisions: builtInSubdivisions()
  })
  const directory = importedDataDir(dataDir)
  ensureDirectory(directory)
  if (options.swot !== undefined) writeFileAtomic(join(directory, "swot.json.gz"), encodeSnapshot(swot))
  if (options.ror !== undefined) writeFileAtomic(join(directory, "ror.json.gz"), encodeSnapshot(ror))
  writeFileAtomic(importedIndexFile(dataDir), JSON.stringify(compiled.data))
  // Its binary form beside it, which the daemon and the library read (one file read, nothing rebuilt).
  compileImportedTable(dataDir)
  return {
    index: importedIndexFile(dataDir),
    sources: [
      { ...swot.source, from: options.swot ?? swotFile },
      { ...ror.source, from: options.ror ?? rorFile }
    ],
    report: compiled.report
  }
}
