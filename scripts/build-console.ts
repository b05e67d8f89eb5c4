/**
 * `npm run build` step 5: the operator console. esbuild bundles
 * `console/src/main.tsx` (Preact, uPlot on first use in a chunk of its
 * own, the style sheets) into `dist/console/assets/` under content-hashed
 * names, and writes `dist/console/index.html` naming them: one module
 * script and one style sheet, nothing inline, since the console's
 * Content-Security-Policy allows only scripts and styles from the daemon
 * itself. Prints what it wrote as one JSON line. `buildConsole` is also
 * what the console's browser test and `npm run screenshots` call, so they
 * always run the sources they test.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { CONSOLE_ASSETS_DIR, CONSOLE_INDEX, defaultConsoleDir } from "../src/server/consoleAssets.ts"
import { CONSOLE_PATH } from "../src/server/routes.ts"

const root = fileURLToPath(new URL("../", import.meta.url))
/** Where the daemon serves the assets directory from. */
export const ASSETS_URL = `${CONSOLE_PATH}/${CONSOLE_ASSETS_DIR}`

export interface ConsoleBuild {
  readonly indexHtml: string
  readonly script: string
  readonly styles: ReadonlyArray<string>
  readonly files: ReadonlyArray<{ readonly path: string; readonly bytes: number }>
  readonly ms: number
}

/** Builds into `outDir` (default `dist/console/`; a test builds into a directory of its own, `CAMPUSGATE_CONSOLE_DIR`). */
export const buildConsole = async (outDir: string = defaultConsoleDir): Promise<ConsoleBuild> => {
  const started = performance.now()
  const directory = outDir.endsWith("/") ? outDir : `${outDir}/`
  const assetsDir = directory + CONSOLE_ASSETS_DIR
  rmSync(directory, { recursive: true, force: true })
  mkdirSync(assetsDir, { recursive: true })
  const result = await build({
    absWorkingDir: root,
    entryPoints: { console: "console/src/main.tsx" },
    tsconfig: "console/tsconfig.json",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "eof",
    outdir: assetsDir,
    entryNames: "[name]-[hash]",
    chunkNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    metafile: true,
    logLevel: "warning"
  })
  const outputs = Object.entries(result.metafile.outputs)
  const entry = outputs.find(([, output]) => output.entryPoint === "console/src/main.tsx")
  if (entry === undefined) throw new Error("esbuild wrote no entry for console/src/main.tsx")
  const [entryPath, entryOutput] = entry
  const styles = entryOutput.cssBundle === undefined ? [] : [entryOutput.cssBundle]
  const url = (path: string) => ASSETS_URL + basename(path)
  const template = readFileSync(`${root}console/index.html`, "utf8")
  const html = template
    .replace("<!-- styles -->", styles.map((path) => `<link rel="stylesheet" href="${url(path)}" />`).join("\n    "))
    .replace("<!-- scripts -->", `<script type="module" src="${url(entryPath)}"></script>`)
  const indexHtml = directory + CONSOLE_INDEX
  writeFileSync(indexHtml, html)
  return {
    indexHtml,
    script: url(entryPath),
    styles: styles.map(url),
    files: [
      { path: relative(root, indexHtml), bytes: Buffer.byteLength(html) },
      ...outputs.map(([path, output]) => ({ path, bytes: output.bytes }))
    ],
    ms: Math.round(performance.now() - started)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await buildConsole()
  console.log(JSON.stringify({ built: relative(root, defaultConsoleDir), files: built.files, ms: built.ms }))
}
