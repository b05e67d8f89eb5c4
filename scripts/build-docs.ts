/**
 * `npm run build` step 4: the docs page's script. Copies the standalone
 * bundle of `@scalar/api-reference` (MIT) into `dist/docs/` (generated,
 * never committed) with its gzip (level 9) and brotli (quality 9) forms, so
 * the daemon serves it compressed without compressing at run time and the
 * page loads nothing from another host. Brotli quality 9 makes 4.35 MB into
 * 1.05 MB in 0.3 s; 11 saves another 0.1 MB for 6-13 s of every build.
 * Prints what it wrote as one JSON line.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { docsAssetsDir, SCALAR_BUNDLE } from "../src/server/docsAssets.ts"

const started = performance.now()
// The package exports no path to its browser bundle: find its root from its main entry (dist/index.js).
const root = new URL("../", import.meta.resolve("@scalar/api-reference"))
const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string }
const source = new URL("dist/browser/standalone.js", root)
const target = docsAssetsDir + SCALAR_BUNDLE
mkdirSync(docsAssetsDir, { recursive: true })
copyFileSync(source, target)
const bundle = readFileSync(target)
const gzip = gzipSync(bundle, { level: 9 })
const br = brotliCompressSync(bundle, {
  params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bundle.length }
})
writeFileSync(`${target}.gz`, gzip)
writeFileSync(`${target}.br`, br)
console.log(
  JSON.stringify({
    built: target,
    scalar: version,
    bytes: { identity: bundle.length, gzip: gzip.length, br: br.length },
    ms: Math.round(performance.now() - started)
  })
)
