/**
 * `.edu` domains registered abroad. Since 2001 `.edu` has been open to
 * accredited US post-secondary institutions only, but older registrations
 * by institutions elsewhere remain (`kaist.edu`, `unimelb.edu`,
 * `dongguk.edu`), and the zone's policy alone would call them American.
 * Such a domain nearly always carries the label its institution uses at
 * home (`kaist.ac.kr`, `unimelb.edu.au`): a sibling domain. Two rules
 * follow, both compiled with the index:
 *
 * - a listed `.edu` domain whose country only the zone gave takes the
 *   country (and region) of a sibling institution known by the same name
 *   (`dongguk.edu` and `dongguk.ac.kr`, both "Dongguk University"), with
 *   medium confidence;
 * - an unlisted `.edu` domain, still recognised by the zone, borrows the
 *   name, country, region and type of the one institution whose registrable
 *   domain outside `.edu` has its label (`kaist.edu` → `kaist.ac.kr`), with
 *   low confidence. A label two institutions share (`tum.de`, `tum.ac.ke`),
 *   or shorter than four letters, lends nothing, nor does an institution
 *   in the US (its own `.edu` domain would be listed).
 *
 * Every borrowed fact names its evidence: `sibling-domain:<the sibling>`.
 */
import { parse } from "tldts"
import { nameKey } from "../../domain/nameKey.ts"
import {
  type EvidenceRow,
  EvidenceTable,
  type InstitutionRow,
  type InstitutionsData,
  placedRow,
  type SiblingRow
} from "./InstitutionsData.ts"

/** The zone whose registrations abroad are looked for: its policy fixes the country, older registrations do not follow it. */
export const siblingZone = "edu"

/** Labels shorter than this are too often shared by unrelated institutions to lend facts. */
const minLabelLength = 4

export const siblingEvidence = (via: string, confidence: EvidenceRow[2]): EvidenceRow => [
  "campusgate",
  `sibling-domain:${via}`,
  confidence
]

/** The label of `domain` when it is a registrable domain itself (`kaist` for `kaist.ac.kr`), with its public suffix. */
const registrableLabel = (domain: string): { readonly label: string; readonly suffix: string } | undefined => {
  const parsed = parse(domain)
  if (parsed.domain !== domain || parsed.domainWithoutSuffix === null || parsed.publicSuffix === null) return undefined
  return { label: parsed.domainWithoutSuffix, suffix: parsed.publicSuffix }
}

const namesOf = (row: InstitutionRow): Set<string> =>
  new Set([row[1], ...row[8]].flatMap((name) => (name === null ? [] : [nameKey(name)])).filter((k) => k.length > 0))

/** A country a dataset (or a ccTLD) states, not one a zone's policy assumed. */
const statedCountry = (row: InstitutionRow): string | null => (row[3] === "suffix-rule" ? null : row[2])

interface Owner {
  readonly row: number
  readonly domain: string
}

/**
 * Adds both rules' results to compiled data: countries for listed `.edu`
 * domains (rows rewritten, evidence appended) and `siblings` for the
 * unlisted ones.
 */
export const withSiblings = (data: InstitutionsData): InstitutionsData => {
  const institutions = [...data.institutions]
  const owners = new Map<string, Array<Owner>>()
  const eduLabels: Array<{ readonly row: number; readonly label: string }> = []
  institutions.forEach((row, index) => {
    for (const domain of row[7]) {
      const registrable = registrableLabel(domain)
      if (registrable === undefined) continue
      if (registrable.suffix === siblingZone) {
        eduLabels.push({ row: index, label: registrable.label })
        continue
      }
      const list = owners.get(registrable.label)
      if (list === undefined) owners.set(registrable.label, [{ row: index, domain }])
      else if (!list.some((o) => o.row === index)) list.push({ row: index, domain })
    }
  })

  const evidence = new EvidenceTable(data.evidence)
  const ref = (row: EvidenceRow): number => evidence.ref(row)

  // Listed `.edu` domains whose country came from the zone: a sibling of the same name knows better.
  for (const { row: index, label } of eduLabels) {
    const row = institutions[index]!
    if (row[3] !== "suffix-rule") continue
    const names = namesOf(row)
    const sameName = (owners.get(label) ?? []).filter((owner) => {
      const sibling = institutions[owner.row]!
      return statedCountry(sibling) !== null && [...namesOf(sibling)].some((key) => names.has(key))
    })
    const countries = new Set(sameName.map((owner) => institutions[owner.row]![2]))
    if (sameName.length === 0 || countries.size !== 1) continue
    const sibling = institutions[sameName[0]!.row]!
    const via = ref(siblingEvidence(sameName[0]!.domain, "medium"))
    const region = row[4] ?? sibling[4]
    institutions[index] = placedRow(row, sibling[2], region, via, row[4] === null && region !== null ? via : row[10][3])
  }

  // Unlisted `.edu` domains: the one institution elsewhere with the label lends its facts.
  const taken = new Set<string>()
  for (const row of institutions) for (const domain of row[7]) taken.add(domain)
  for (const row of data.nonInstitutions) taken.add(row[0])
  for (const row of data.deny) taken.add(row[0])
  const siblings: Array<SiblingRow> = []
  for (const [label, list] of owners) {
    if (list.length !== 1 || label.length < minLabelLength) continue
    const owner = list[0]!
    const sibling = institutions[owner.row]!
    const country = statedCountry(sibling)
    const domain = `${label}.${siblingZone}`
    if (country === null || country === "US" || taken.has(domain)) continue
    siblings.push([label, owner.domain])
  }
  siblings.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return { ...data, evidence: evidence.rows, institutions, siblings: encodeSiblings(siblings) }
}

/** One row per line, label and domain apart by a space. */
export const encodeSiblings = (rows: ReadonlyArray<SiblingRow>): string =>
  rows.map(([label, via]) => `${label} ${via}`).join("\n")

export const decodeSiblings = (text: string | undefined): Array<SiblingRow> =>
  text === undefined || text === "" ? [] : text.split("\n").map((line) => line.split(" ", 2) as unknown as SiblingRow)

/** The domain whose institution lends facts to `label` under the zone, searched in the encoded rows. */
export const siblingVia = (text: string, label: string): string | undefined => {
  const at = text.startsWith(`${label} `) ? 0 : text.indexOf(`\n${label} `) + 1
  if (at === 0 && !text.startsWith(`${label} `)) return undefined
  const start = at + label.length + 1
  const end = text.indexOf("\n", start)
  return text.slice(start, end < 0 ? text.length : end)
}
