/**
 * `npm run console:size`: what a browser downloads for the console's first
 * screen (the sign-in), gzipped at level 9: `dist/console/index.html`, the
 * style sheets and the module script it names, and every module that
 * script imports statically (chunks loaded later by `import()`, such as
 * uPlot's, are listed apart and not counted). Builds first unless
 * `--no-build`. Prints one JSON line and fails above the budget (150 KiB,
 * issue 17).
 */
import { readFileSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { CONSOLE_ASSETS_DIR, CONSOLE_INDEX, defaultConsoleDir } from "../src/server/consoleAssets.ts"
import { ASSETS_URL, buildConsole } from "./build-console.ts"

const BUDGET_BYTES = 150 * 1024

if (!process.argv.includes("--no-build")) await buildConsole()

const gzipped = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).length
const fileOf = (url: string) => defaultConsoleDir + CONSOLE_ASSETS_DIR + url.slice(ASSETS_URL.length)

const html = readFileSync(defaultConsoleDir + CONSOLE_INDEX)
const named = [...html.toString().matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]!)

/** Static imports of an esbuild ESM chunk: `import"./x.js"`, `import{a}from"./x.js"`, `export{a}from"./x.js"`. */
const staticImports = (code: string): Array<string> =>
  [...code.matchAll(/(?:\bfrom|\bimport)\s*"(\.\/[^"]+\.js)"/g)].map((match) => match[1]!.slice(2))
const dynamicImports = (code: string): Array<string> =>
  [...code.matchAll(/\bimport\(\s*"(\.\/[^"]+\.js)"\s*\)/g)].map((match) => match[1]!.slice(2))

const firstScreen = new Map<string, { bytes: number; gzip: number }>()
const later = new Set<string>()
firstScreen.set(CONSOLE_INDEX, { bytes: html.length, gzip: gzipped(html) })
const queue = [...named]
while (queue.length > 0) {
  const url = queue.shift()!
  const name = url.slice(ASSETS_URL.length)
  if (firstScreen.has(name)) continue
  const bytes = readFileSync(fileOf(url))
  firstScreen.set(name, { bytes: bytes.length, gzip: gzipped(bytes) })
  if (name.endsWith(".js")) {
    const code = bytes.toString()
    for (const imported of staticImports(code)) queue.push(ASSETS_URL + imported)
    for (const imported of dynamicImports(code)) later.add(imported)
  }
}
const lazy = [...later]
  .filter((name) => !firstScreen.has(name))
  .map((name) => {
    const bytes = readFileSync(fileOf(ASSETS_URL + name))
    return { file: name, bytes: bytes.length, gzip: gzipped(bytes) }
  })
const total = [...firstScreen.values()].reduce((sum, file) => sum + file.gzip, 0)
const within = total <= BUDGET_BYTES
console.log(
  JSON.stringify({
    firstScreenGzipBytes: total,
    firstScreenGzipKiB: Math.round((total / 1024) * 10) / 10,
    budgetKiB: BUDGET_BYTES / 1024,
    within,
    files: [...firstScreen].map(([file, size]) => ({ file, ...size })),
    loadedLater: lazy
  })
)
if (!within) process.exitCode = 1
