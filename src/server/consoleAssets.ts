/**
 * The operator console's files (issue 17): the single-page app that
 * `scripts/build-console.ts` bundles into `dist/console/` — `index.html`
 * and hashed files under `assets/`. The same relative path resolves from
 * `src/server/` (tests, the daemon run from source) and from `dist/server/`
 * (the package), as `docsAssets.ts` does; `CAMPUSGATE_CONSOLE_DIR` points
 * the daemon at another directory.
 *
 * The directory is read once, on the first console request: every file
 * becomes a `StaticAsset`, its `.gz` and `.br` forms taken from beside it
 * when the build made them, else compressed here (text only; images and
 * fonts are compressed already). Only the files read are ever served, so
 * no request path reaches the file system.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { distPath } from "../packageRoot.ts"
import { contentHash, makeAsset, type StaticAsset } from "./staticAsset.ts"

export const defaultConsoleDir: string = distPath("console")

/** The page every console address without a file extension answers. */
export const CONSOLE_INDEX = "index.html"
/** Files under this directory have their content hash in their name: cached for good. */
export const CONSOLE_ASSETS_DIR = "assets/"

export const REVALIDATE = "no-cache"
export const IMMUTABLE = "public, max-age=31536000, immutable"

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2"
}

/** Types worth compressing (the others are compressed formats already). */
const compressible = (contentType: string): boolean =>
  contentType.startsWith("text/") || contentType.includes("json") || contentType.includes("svg")

/** The console's files by path relative to the directory (`index.html`, `assets/app-3f9a.js`). */
export type ConsoleFiles = ReadonlyMap<string, StaticAsset>

const filesUnder = (directory: string): Array<string> =>
  readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))

/** The directory's files as assets; undefined when it holds no `index.html` (the console is not built). */
export const readConsoleFiles = (directory: string): ConsoleFiles | undefined => {
  if (!existsSync(join(directory, CONSOLE_INDEX))) return undefined
  const files = new Map<string, StaticAsset>()
  const paths = new Set(filesUnder(directory))
  for (const path of paths) {
    if ((path.endsWith(".gz") || path.endsWith(".br")) && paths.has(path.slice(0, -3))) continue
    const name = relative(directory, path).split(sep).join("/")
    const contentType = contentTypes[extname(path).toLowerCase()] ?? "application/octet-stream"
    const cacheControl = name.startsWith(CONSOLE_ASSETS_DIR) ? IMMUTABLE : REVALIDATE
    const identity = readFileSync(path)
    const gzip = paths.has(`${path}.gz`) ? readFileSync(`${path}.gz`) : undefined
    const br = paths.has(`${path}.br`) ? readFileSync(`${path}.br`) : undefined
    if (gzip === undefined && br === undefined && compressible(contentType)) {
      files.set(name, makeAsset(identity, { contentType, cacheControl }))
    } else {
      files.set(name, {
        contentType,
        cacheControl,
        hash: contentHash(identity),
        bodies: { identity, ...(gzip === undefined ? {} : { gzip }), ...(br === undefined ? {} : { br }) }
      })
    }
  }
  return files
}

/** Where the console's files are, read on first use and kept. */
export class ConsoleAssets extends Context.Service<
  ConsoleAssets,
  {
    /** The files; undefined while the directory holds no built console (read again on the next request). */
    files(): ConsoleFiles | undefined
  }
>()("campusgate/server/ConsoleAssets") {
  static readonly layer = (directory: string = defaultConsoleDir): Layer.Layer<ConsoleAssets> =>
    Layer.sync(ConsoleAssets, () => {
      let files: ConsoleFiles | undefined
      return ConsoleAssets.of({
        files: () => {
          files ??= readConsoleFiles(directory)
          return files
        }
      })
    })
}
