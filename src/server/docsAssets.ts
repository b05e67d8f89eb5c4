/**
 * The docs page's script, built once (`scripts/build-docs.ts`) from the
 * `@scalar/api-reference` npm package into `dist/docs/`: the standalone
 * bundle with its gzip and brotli forms made at build time, so the daemon
 * serves it without compressing anything at run time and nothing is
 * loaded from another host. Found from the package's root, whether the
 * daemon runs from source, compiled or bundled (`packageRoot.ts`).
 */
import { existsSync, readFileSync } from "node:fs"
import { distPath } from "../packageRoot.ts"
import { contentHash, type StaticAsset } from "./staticAsset.ts"

export const docsAssetsDir: string = distPath("docs")

/** The bundle's file name in `docsAssetsDir`; `.gz` and `.br` beside it. */
export const SCALAR_BUNDLE = "scalar.js"

/** The built bundle as an asset, or undefined when the build has not run. */
export const readScalarBundle = (cacheControl: string): StaticAsset | undefined => {
  const path = docsAssetsDir + SCALAR_BUNDLE
  if (!existsSync(path)) return undefined
  const identity = readFileSync(path)
  const optional = (suffix: string) => (existsSync(path + suffix) ? readFileSync(path + suffix) : undefined)
  const gzip = optional(".gz")
  const br = optional(".br")
  return {
    contentType: "text/javascript; charset=utf-8",
    cacheControl,
    hash: contentHash(identity),
    bodies: { identity, ...(gzip === undefined ? {} : { gzip }), ...(br === undefined ? {} : { br }) }
  }
}
