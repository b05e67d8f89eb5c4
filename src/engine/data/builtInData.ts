/**
 * Where the data compiled at build time lives (`npm run build` writes it to
 * `dist/data/`, see `scripts/build-data.ts`). The same relative path resolves
 * from `src/engine/data/` (tests, scripts run from source) and from
 * `dist/engine/data/` (the built package), so both find one copy.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const builtInDataDir: string = fileURLToPath(new URL("../../../dist/data/", import.meta.url))

/** The source snapshots the built-in index was compiled from, for `campusgate data import` to recompile with. */
export const builtInSourcesDir: string = `${builtInDataDir}sources/`

export class BuiltInDataMissing extends Error {
  override readonly name = "BuiltInDataMissing"
}

/** Reads and parses one compiled JSON file, with a clear message when the build has not run. */
export const readBuiltInJson = (fileName: string): unknown => {
  const path = builtInDataDir + fileName
  if (!existsSync(path)) {
    throw new BuiltInDataMissing(`${path} is missing: run \`npm run build\` to compile the built-in datasets`)
  }
  return JSON.parse(readFileSync(path, "utf8"))
}
