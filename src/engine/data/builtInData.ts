/**
 * Where the compiled data lives: what `npm run build` writes to
 * `dist/data/` (see `scripts/build-data.ts`), and the newer institution
 * index an operator compiles into the data directory with
 * `campusgate data import` (`<data>/institutions/index.json`), which is
 * used instead of the built-in one when present. Found from the package's
 * root (`packageRoot.ts`), so source, compiled and bundled code all find
 * one copy.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { distPath } from "../../packageRoot.ts"

export const builtInDataDir: string = distPath("data")

/** The source snapshots the built-in index was compiled from, for `campusgate data import` to recompile with. */
export const builtInSourcesDir: string = `${builtInDataDir}sources/`

export class BuiltInDataMissing extends Error {
  override readonly name = "BuiltInDataMissing"
}

/** The path of one compiled file, with a clear message when the build has not run. */
const builtInPath = (fileName: string): string => {
  const path = builtInDataDir + fileName
  if (!existsSync(path)) {
    throw new BuiltInDataMissing(`${path} is missing: run \`npm run build\` to compile the built-in datasets`)
  }
  return path
}

/** Reads one compiled file as it is, with a clear message when the build has not run. */
export const readBuiltInBytes = (fileName: string): Buffer => readFileSync(builtInPath(fileName))

/**
 * The binary forms the engine reads in place (the institution table, the
 * email lists) are read into shared memory (`SharedArrayBuffer`): a job
 * thread is sent the daemon's bytes and reads them too, instead of a copy
 * of its own (~10 MB and ~3.5 MB a thread; `jobs/JobThreads.ts`).
 */
export const readShared = (path: string): Uint8Array => {
  const fd = openSync(path, "r")
  try {
    const size = fstatSync(fd).size
    const bytes = new Uint8Array(new SharedArrayBuffer(size))
    for (let at = 0; at < size; ) {
      const read = readSync(fd, bytes, at, size - at, at)
      if (read === 0) throw new Error(`${path} was cut short while it was read`)
      at += read
    }
    return bytes
  } finally {
    closeSync(fd)
  }
}

/** One compiled file read into shared memory (`readShared`). */
export const readBuiltInShared = (fileName: string): Uint8Array => readShared(builtInPath(fileName))

/** `bytes` in shared memory (`readShared`): themselves if they are, else a copy. */
export const inSharedMemory = (bytes: Uint8Array): Uint8Array => {
  if (bytes.buffer instanceof SharedArrayBuffer) return bytes
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength))
  shared.set(bytes)
  return shared
}

/** Reads and parses one compiled JSON file (`.json.gz`: gzipped), with a clear message when the build has not run. */
export const readBuiltInJson = (fileName: string): unknown => {
  const bytes = readBuiltInBytes(fileName)
  return JSON.parse((fileName.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8"))
}

/** The built-in institution index's binary form (`engine/institutions/tableBuffer.ts`), beside its JSON form. */
export const builtInTableFile = "institutions.bin"

/** The email policy lists' binary form (`engine/policy/emailListsBuffer.ts`), beside their JSON form. */
export const builtInEmailListsFile = "email-lists.bin"

/** Where `campusgate data import` keeps the source snapshots and the index it compiled, in a data directory. */
export const importedDataDir = (dataDir: string): string => join(dataDir, "institutions")

export const importedIndexFile = (dataDir: string): string => join(importedDataDir(dataDir), "index.json")

/** The imported index's binary form, written beside it (`engine/institutions/tableBuffer.ts`). */
export const importedTableFile = (dataDir: string): string => join(importedDataDir(dataDir), "index.bin")

/**
 * Where tables merged with user datasets are kept between starts besides
 * the data directory's own cache (`InstitutionIndex.ts`): the system's
 * temporary directory, so every daemon and job thread of a machine (and
 * every test daemon of a run) merges the same datasets once. Nothing in it
 * is needed: a missing table is compiled again.
 */
export const tableCacheDir = (): string => join(tmpdir(), "campusgate-institution-tables")

/** The imported index's modification time, or undefined when the data directory has none (a cache key). */
export const importedIndexStamp = (dataDir: string | undefined): number | undefined => {
  if (dataDir === undefined) return undefined
  const file = importedIndexFile(dataDir)
  return existsSync(file) ? statSync(file).mtimeMs : undefined
}

/** The imported index of a data directory, parsed, or undefined when there is none. */
export const readImportedIndex = (dataDir: string): unknown => {
  const file = importedIndexFile(dataDir)
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
}
