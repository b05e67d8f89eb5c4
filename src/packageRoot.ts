/**
 * The package's root directory, where `package.json` and `dist/` are:
 * found by walking up from this module's own location, which is `src/`
 * when run from source, `dist/` when compiled, or `dist/daemon/` in the
 * daemon's bundle (`scripts/build-daemon.ts`), whose chunks sit at another
 * depth. Every file read at run time by its place in the package is found
 * from here.
 */
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const find = (): string => {
  const start = dirname(fileURLToPath(import.meta.url))
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir
    if (dirname(dir) === dir) throw new Error(`No package.json in ${start} or any directory above it.`)
  }
}

export const packageRoot: string = find()

/** A path inside the package's `dist/`, ending in a separator. */
export const distPath = (...parts: ReadonlyArray<string>): string => `${join(packageRoot, "dist", ...parts)}/`
