/**
 * `npm run build` step 4: the docs page's script. Compresses the standalone
 * bundle of `@scalar/api-reference` (MIT) with brotli (quality 9: 4.35 MB
 * into 1.05 MB in 0.3 s; 11 saves another 0.1 MB for 6-13 s of every
 * build) into `dist/docs/` (generated, never committed), the one form the
 * package ships: the daemon serves it to the browsers that take brotli (all
 * of them) and makes the plain and gzip forms from it the first time the
 * page is asked for (`server/docsAssets.ts`). The page loads nothing from
 * another host. Prints what it wrote as one JSON line.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { brotliCompressSync, constants } from "node:zlib"
import { docsAssetsDir, SCALAR_BUNDLE_BR } from "../src/server/docsAssets.ts"

const started = performance.now()
// The package exports no path to its browser bundle: find its root from its main entry (dist/index.js).
const root = new URL("../", import.meta.resolve("@scalar/api-reference"))
const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string }
const bundle = readFileSync(new URL("dist/browser/standalone.js", root))
const target = docsAssetsDir + SCALAR_BUNDLE_BR
mkdirSync(docsAssetsDir, { recursive: true })
const br = brotliCompressSync(bundle, {
  params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bundle.length }
})
writeFileSync(target, br)
console.log(
  JSON.stringify({
    built: target,
    scalar: version,
    bytes: { identity: bundle.length, br: br.length },
    ms: Math.round(performance.now() - started)
  })
)
