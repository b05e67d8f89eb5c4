/**
 * The docs page's script, built once (`scripts/build-docs.ts`) from the
 * `@scalar/api-reference` npm package into `dist/docs/`: shipped in its
 * brotli form alone (the plain bundle and a gzip form beside it tripled the
 * package's docs, 6.7 MB of its 29 MB), from which the plain and gzip forms
 * are made once, the first time the page's script is asked for (about
 * 0.1 s). Nothing is loaded from another host. Found from the package's
 * root, whether the daemon runs from source, compiled or bundled
 * (`packageRoot.ts`).
 */
import { existsSync, readFileSync } from "node:fs"
import { brotliDecompressSync, gzipSync } from "node:zlib"
import { distPath } from "../packageRoot.ts"
import { contentHash, type StaticAsset } from "./staticAsset.ts"

export const docsAssetsDir: string = distPath("docs")

/** The bundle's file in `docsAssetsDir`: its brotli form. */
export const SCALAR_BUNDLE_BR = "scalar.js.br"

/** The built bundle as an asset, or undefined when the build has not run. */
export const readScalarBundle = (cacheControl: string): StaticAsset | undefined => {
  const path = docsAssetsDir + SCALAR_BUNDLE_BR
  if (!existsSync(path)) return undefined
  const br = readFileSync(path)
  const identity = brotliDecompressSync(br)
  return {
    contentType: "text/javascript; charset=utf-8",
    cacheControl,
    hash: contentHash(identity),
    bodies: { identity, gzip: gzipSync(identity, { level: 6 }), br }
  }
}
