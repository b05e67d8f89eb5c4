/**
 * Regenerates the institution source snapshots kept in `datasets/` from the
 * sources' own checkouts or dumps (the build compiles the index from them;
 * nothing is fetched at run time):
 *
 *   node scripts/institution-snapshot.ts --swot <swot checkout> --ror <ror-records checkout | ROR dump .json/.zip>
 *     [--swot-version <commit> --swot-date <YYYY-MM-DD>] [--ror-version <vX.Y> --ror-date <YYYY-MM-DD>]
 *
 * Versions and dates are read from git when the checkout is a git work
 * tree (swot: the commit; ror-records: the latest release folder and the
 * commit date), from a dump's file name, or given by the flags. Either
 * source may be left out to keep its current snapshot. Prints what it
 * wrote as one JSON line.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { readRorSource, readSwotCheckout } from "../src/cli/data/readSources.ts"
import { encodeSnapshot, type SourceSnapshot } from "../src/engine/institutions/sources/SourceSnapshot.ts"
import { datasetsDir } from "./data/datasets.ts"

const { values } = parseArgs({
  options: {
    swot: { type: "string" },
    "swot-version": { type: "string" },
    "swot-date": { type: "string" },
    ror: { type: "string" },
    "ror-version": { type: "string" },
    "ror-date": { type: "string" }
  }
})
if (values.swot === undefined && values.ror === undefined) {
  console.error("usage: node scripts/institution-snapshot.ts --swot <dir> --ror <dir|dump.json|dump.zip>")
  process.exit(2)
}

const write = (file: string, snapshot: SourceSnapshot) => {
  const bytes = encodeSnapshot(snapshot)
  mkdirSync(datasetsDir, { recursive: true })
  writeFileSync(`${datasetsDir}${file}.tmp`, bytes)
  renameSync(`${datasetsDir}${file}.tmp`, `${datasetsDir}${file}`)
  return { file: `datasets/${file}`, bytes: bytes.length, ...snapshot.source }
}

const written = []
if (values.swot !== undefined) {
  const swot = readSwotCheckout(values.swot, { version: values["swot-version"], date: values["swot-date"] })
  written.push({ ...write("swot.json.gz", swot), domains: swot.domains.length, stoplist: swot.stoplist.length })
}
if (values.ror !== undefined) {
  const ror = readRorSource(values.ror, { version: values["ror-version"], date: values["ror-date"] })
  written.push({ ...write("ror.json.gz", ror), records: ror.records.length })
}
console.log(JSON.stringify({ written }))
