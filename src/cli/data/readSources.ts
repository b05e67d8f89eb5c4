/**
 * Reads the open institution sources from what an operator has on disk —
 * a JetBrains swot checkout, a ror-records checkout or a ROR data dump
 * (`.json`, or the `.zip` ROR publishes) — into their compact snapshots.
 * Used by `campusgate data import` and by `scripts/institution-snapshot.ts`,
 * which regenerates the snapshots the repository keeps.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { unzipSync } from "fflate"
import { compareReleases, latestRecords } from "../../engine/institutions/sources/ror.ts"
import {
  type RorSnapshot,
  rorSnapshotFormat,
  type SourceInfo,
  type SwotSnapshot,
  swotSnapshotFormat
} from "../../engine/institutions/sources/SourceSnapshot.ts"
import { swotDomainOf, swotEntry, swotLines } from "../../engine/institutions/sources/swot.ts"

export class SourceReadError extends Error {
  override readonly name = "SourceReadError"
}

/** A version and date given by the operator, when the source itself cannot say. */
export interface VersionHint {
  readonly version?: string | undefined
  readonly date?: string | undefined
}

/** The commit and commit date of a git checkout, if `dir` is one and git is installed. */
const gitHead = (dir: string): { version: string; date: string } | undefined => {
  try {
    const [version, date] = execFileSync("git", ["-C", dir, "log", "-1", "--format=%H %cI"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    })
      .trim()
      .split(" ")
    return version && date ? { version, date: date.slice(0, 10) } : undefined
  } catch {
    return undefined
  }
}

const versionOf = (dir: string, hint: VersionHint, fallback: () => { version: string; date: string }) => {
  const found = hint.version === undefined || hint.date === undefined ? (gitHead(dir) ?? fallback()) : undefined
  return { version: hint.version ?? found!.version, date: hint.date ?? found!.date }
}

const walk = function* (root: string, relative = ""): Generator<string> {
  for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) yield* walk(root, path)
    else if (entry.isFile()) yield path
  }
}

/** A swot checkout (its root, or its `lib/domains` folder) → its snapshot. */
export const readSwotCheckout = (dir: string, hint: VersionHint = {}): SwotSnapshot => {
  const domainsDir = existsSync(join(dir, "lib", "domains")) ? join(dir, "lib", "domains") : dir
  if (!existsSync(join(domainsDir, "tlds.txt"))) {
    throw new SourceReadError(`${dir}: not a swot checkout (no lib/domains/tlds.txt)`)
  }
  const domains: Array<readonly [string, ...Array<string>]> = []
  for (const path of walk(domainsDir)) {
    const domain = swotDomainOf(path)
    if (domain !== undefined && path.includes("/")) {
      domains.push(swotEntry(domain, readFileSync(join(domainsDir, path), "utf8")))
    }
  }
  domains.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const list = (file: string) => swotLines(readFileSync(join(domainsDir, file), "utf8")).map((d) => d.toLowerCase())
  const versionFile = join(dir, "VERSION")
  const { version, date } = versionOf(dir, hint, () => ({
    version: existsSync(versionFile) ? readFileSync(versionFile, "utf8").trim() : "unknown",
    date: statSync(join(domainsDir, "tlds.txt")).mtime.toISOString().slice(0, 10)
  }))
  const source: SourceInfo = {
    dataset: "swot",
    version,
    date,
    licence: "MIT",
    url: "https://github.com/JetBrains/swot"
  }
  return {
    format: swotSnapshotFormat,
    source,
    domains,
    stoplist: list("stoplist.txt"),
    abused: list("abused.txt"),
    tlds: list("tlds.txt")
  }
}

const rorSource = (version: string, date: string): SourceInfo => ({
  dataset: "ror",
  version,
  date,
  licence: "CC0-1.0",
  url: "https://ror.org"
})

/** `v2.9-2026-06-23-ror-data.json` → release and date. */
const dumpName = /(v\d+(?:\.\d+)+)-(\d{4}-\d{2}-\d{2})/

const parseJsonArray = (text: string, name: string): Array<unknown> => {
  const value = JSON.parse(text) as unknown
  if (!Array.isArray(value)) throw new SourceReadError(`${name}: expected a JSON array of ROR records`)
  return value
}

/** The records of a ROR dump: a JSON array, or the zip ROR publishes (its schema v2 JSON when it has both). */
const dumpRecords = (path: string): Array<unknown> => {
  const bytes = readFileSync(path)
  if (!path.toLowerCase().endsWith(".zip")) return parseJsonArray(bytes.toString("utf8"), path)
  const files = unzipSync(bytes, { filter: (file) => file.name.toLowerCase().endsWith(".json") })
  const names = Object.keys(files).sort()
  const chosen = names.find((n) => /schema_v2|v2\./.test(n) && !/schema_v1/.test(n)) ?? names[0]
  if (chosen === undefined) throw new SourceReadError(`${path}: the zip holds no JSON file`)
  return parseJsonArray(Buffer.from(files[chosen]!).toString("utf8"), `${path}:${chosen}`)
}

/**
 * ROR → its snapshot, from a ror-records checkout (release folders `vX.Y/`,
 * each holding the records changed in that release, schema v2 at the top
 * and schema v1 copies in `vX.Y/v1/` from v1.45 on) or from a data dump.
 */
export const readRorSource = (path: string, hint: VersionHint = {}): RorSnapshot => {
  if (!existsSync(path)) throw new SourceReadError(`${path}: no such file or directory`)
  if (statSync(path).isDirectory()) {
    const releases = readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^v\d+(\.\d+)+$/.test(e.name))
      .map((e) => e.name)
      .sort(compareReleases)
    if (releases.length === 0) throw new SourceReadError(`${path}: not a ror-records checkout (no vX.Y folders)`)
    const records = function* () {
      for (const release of releases) {
        for (const file of readdirSync(join(path, release)).sort()) {
          if (file.endsWith(".json")) yield JSON.parse(readFileSync(join(path, release, file), "utf8")) as unknown
        }
      }
    }
    // The release is the latest folder; its date is the checkout's commit date when git can tell.
    const latest = releases.at(-1)!
    const version = hint.version ?? latest
    const date = hint.date ?? gitHead(path)?.date ?? statSync(join(path, latest)).mtime.toISOString().slice(0, 10)
    return { format: rorSnapshotFormat, source: rorSource(version, date), records: latestRecords(records()) }
  }
  const named = dumpName.exec(basename(path))
  const version = hint.version ?? named?.[1]
  const date = hint.date ?? named?.[2]
  if (version === undefined || date === undefined) {
    throw new SourceReadError(`${path}: name the ROR release and date (--ror-version, --ror-date)`)
  }
  return { format: rorSnapshotFormat, source: rorSource(version, date), records: latestRecords(dumpRecords(path)) }
}
