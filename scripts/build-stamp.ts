/**
 * Whether `dist/` was built from the sources as they are: the build ends by
 * writing a stamp (`dist/build-stamp.json`: a SHA-256 over the names and
 * contents of everything the build reads), and `npm install`'s `prepare`
 * builds only when the stamp is missing or differs, so an install of a
 * checkout already built (a `file:` dependency, npx's copy, a second
 * `npm install`) does not build it again. Each outcome is one line on
 * standard error.
 *
 *   node scripts/build-stamp.ts --write [--root DIR]   after a build: record the inputs
 *   node scripts/build-stamp.ts --check [--root DIR]   exit 0 when dist/ is current, 1 when it must be built
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

/** What the build reads: its sources, its scripts, the data snapshots, the console, and what pins the dependencies. */
export const BUILD_INPUTS = [
  "src",
  "scripts",
  "console",
  "datasets",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json"
]

export const STAMP_FILE = join("dist", "build-stamp.json")

const filesUnder = (root: string, entry: string): Array<string> => {
  const path = join(root, entry)
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  // Hidden files and directories (editors' swap files, caches) are not inputs.
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((item) => item.isFile())
    .map((item) => join(item.parentPath, item.name))
    .filter(
      (file) =>
        !relative(root, file)
          .split(sep)
          .some((part) => part.startsWith("."))
    )
}

/** The fingerprint of the build's inputs under `root`: every file's path and bytes, in a fixed order. */
export const inputsHash = (root: string): string => {
  const hash = createHash("sha256")
  const files = BUILD_INPUTS.flatMap((entry) => filesUnder(root, entry))
    .map((file) => relative(root, file).split(sep).join("/"))
    .sort()
  for (const file of files) {
    hash.update(`${file}\0`)
    hash.update(readFileSync(join(root, file)))
    hash.update("\0")
  }
  return hash.digest("hex")
}

interface Stamp {
  readonly inputs: string
  readonly builtAt: string
}

const readStamp = (root: string): Stamp | undefined => {
  try {
    return JSON.parse(readFileSync(join(root, STAMP_FILE), "utf8")) as Stamp
  } catch {
    return undefined
  }
}

/** Whether `root`'s `dist/` was built from its inputs as they are now. */
export const isCurrent = (root: string): boolean => readStamp(root)?.inputs === inputsHash(root)

export const writeStamp = (root: string): void => {
  const stamp: Stamp = { inputs: inputsHash(root), builtAt: new Date().toISOString() }
  writeFileSync(join(root, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`)
}

const main = () => {
  const args = process.argv.slice(2)
  const at = args.indexOf("--root")
  const root = at >= 0 ? args[at + 1]! : fileURLToPath(new URL("..", import.meta.url))
  if (args.includes("--write")) {
    writeStamp(root)
    return
  }
  if (!args.includes("--check")) {
    console.error("usage: node scripts/build-stamp.ts --write | --check [--root DIR]")
    process.exit(2)
  }
  const stamp = readStamp(root)
  if (stamp !== undefined && stamp.inputs === inputsHash(root)) {
    console.error(`campusgate: dist/ is current (built ${stamp.builtAt} from these sources); not building again`)
    return
  }
  console.error(
    `campusgate: building dist/ (${stamp === undefined ? "not built yet" : "the sources changed"}): the code, the institution index, the schemas, the docs, the console and the daemon, about half a minute`
  )
  process.exit(1)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
