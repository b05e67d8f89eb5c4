/**
 * Compiles the ISO 3166-2 subdivision list that `src/engine/institutions/Subdivisions.ts`
 * reads at run time (`dist/data/subdivisions.json`), from the
 * `@koshmoney/countries` package (5,000+ subdivisions with ISO codes, names
 * and types) plus the corrections and English names of `subdivisions.data.ts`.
 *
 * Guarantees: every compiled code is a well-formed `RegionCode` of an
 * assigned country; every authored correction and name refers to a code that
 * exists (the build fails otherwise, so a typo cannot silently drop a name);
 * within a country, higher-level subdivisions come first (see `precedence`).
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { subdivision } from "@koshmoney/countries"
import { isRegionCode } from "../../src/domain/Region.ts"
import type { SubdivisionsData } from "../../src/engine/institutions/Subdivisions.ts"
import { addedSubdivisions, codeChanges, englishNames } from "./subdivisions.data.ts"

const require = createRequire(import.meta.url)
const sourcePackage = "@koshmoney/countries"

const sourceVersion = (): string => {
  // The package's export map hides package.json; find it beside the entry point's folder.
  const entry = require.resolve(sourcePackage)
  const manifest = join(dirname(entry), "..", "package.json")
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version
}

interface Entry {
  readonly code: string
  readonly type: string
  readonly names: Array<string>
}

/** Kinds of entry ISO lists that are not administrative levels: they lose every name collision. */
const nonAdministrativeTypes = new Set(["Geographical unit", "Nation"])

/**
 * Orders a country's subdivisions so that higher levels come first, and so
 * win name collisions at run time ("Madrid" is the community ES-MD, not the
 * province ES-M; "Dhaka" the division BD-C, not the district BD-13). ISO gives
 * no hierarchy here, so the level is inferred: a country has fewer units of
 * its upper level than of the lower ones, so entries whose type is rarer in
 * that country come first; ties keep ISO's order.
 */
const precedence = (entries: ReadonlyArray<Entry>): Array<Entry> => {
  const typeCounts = new Map<string, number>()
  for (const entry of entries) typeCounts.set(entry.type, (typeCounts.get(entry.type) ?? 0) + 1)
  const rank = (entry: Entry): number =>
    nonAdministrativeTypes.has(entry.type) ? Number.MAX_SAFE_INTEGER : (typeCounts.get(entry.type) ?? 0)
  return entries
    .map((entry, position) => ({ entry, position }))
    .sort((a, b) => rank(a.entry) - rank(b.entry) || a.position - b.position)
    .map(({ entry }) => entry)
}

/** Cleans a source name for display: the package marks some co-official names with "*". */
const displayName = (name: string): string => name.replace(/\*+$/, "").trim()

export const compileSubdivisions = (): SubdivisionsData => {
  const source = subdivision.all()
  const entries = new Map<string, Entry>()
  for (const { code, name, type } of source) {
    if (codeChanges[code] === undefined) entries.set(code, { code, type, names: [displayName(name)] })
  }
  for (const [code, [name, type]] of Object.entries(addedSubdivisions)) {
    if (entries.has(code)) throw new Error(`subdivisions: added ${code} is already listed by ${sourcePackage}`)
    entries.set(code, { code, type, names: [name] })
  }
  // A replaced code becomes its successor, unless the successor is listed already (a merger).
  for (const { code, name, type } of source) {
    const current = codeChanges[code]
    if (current !== undefined && !entries.has(current))
      entries.set(current, { code: current, type, names: [displayName(name)] })
  }
  for (const [code, names] of Object.entries(englishNames)) {
    const entry = entries.get(code)
    if (entry === undefined) throw new Error(`subdivisions: English names given for unknown code ${code}`)
    for (const name of names) if (!entry.names.includes(name)) entry.names.push(name)
  }

  const byCountry = new Map<string, Array<Entry>>()
  for (const entry of entries.values()) {
    if (!isRegionCode(entry.code)) throw new Error(`subdivisions: ${entry.code} is not a well-formed ISO 3166-2 code`)
    const country = entry.code.slice(0, 2)
    const list = byCountry.get(country) ?? []
    list.push(entry)
    byCountry.set(country, list)
  }
  const countries: Record<string, Array<readonly [string, string, ...Array<string>]>> = {}
  for (const country of [...byCountry.keys()].sort()) {
    countries[country] = precedence(byCountry.get(country) ?? []).map(
      ({ code, names: [name = code, ...others] }) => [code.slice(3), name, ...others] as const
    )
  }

  const renamed: Record<string, string> = {}
  for (const [from, to] of Object.entries(codeChanges)) {
    if (!entries.has(to)) throw new Error(`subdivisions: ${from} is renamed to unknown code ${to}`)
    renamed[from] = to
  }
  return { source: `${sourcePackage}@${sourceVersion()} with Campusgate corrections`, countries, renamed }
}
