/**
 * The type of an institution its data does not type: one matched by its
 * academic zone alone (`thenewcollege.edu.in`), or listed under a name that
 * says nothing of its kind (`SASTRA`). Two kinds of rule, each measured on
 * the bundled institutions whose names do type them:
 *
 * - `label-word:<family>`: a word family in the domain's label
 *   (`domainWords.ts`: `college` in `trinitycollegebristol`) infers the type
 *   most institutions with that word in their label have;
 * - `zone-composition:<suffix>`: the zone's own members (`ac.in`, `edu.ar`)
 *   infer the type most of them have.
 *
 * Each rule's precision is measured leave-one-out: every typed institution
 * is predicted by the rule fitted without it, and the precision is the
 * share predicted right. The rule that fires with the best precision wins;
 * its confidence follows from that precision (`confidenceOf`), and the
 * evidence names the rule and its precision. Measured at compile time
 * (`compileIndex.ts`), so an imported index measures its own.
 */
import { parse } from "tldts"
import type { Confidence, InstitutionType } from "../../domain/Institution.ts"
import { familiesOf } from "./domainWords.ts"
import {
  type EvidenceRow,
  EvidenceTable,
  type InstitutionRow,
  type InstitutionsData,
  type TypeRuleRow
} from "./InstitutionsData.ts"

export type { TypeRuleRow }

/** Rules measured on fewer institutions than this infer nothing. */
export const minSupport = 20

/** High from 0.95 (measured on 100 or more), medium from 0.8, else low. */
export const confidenceOf = (precision: number, support: number): Confidence =>
  precision >= 0.95 && support >= 100 ? "high" : precision >= 0.8 ? "medium" : "low"

/** The zone a domain lies under (the longest), and the label in front of it. */
const zoneLabel = (domain: string, zones: ReadonlySet<string>): { zone: string; label: string } | undefined => {
  let previous = -1
  for (let at = 0; at >= 0; ) {
    const suffix = domain.slice(at)
    if (previous >= 0 && zones.has(suffix)) {
      const label = domain.slice(previous, at - 1)
      return { zone: suffix, label: label.slice(label.lastIndexOf(".") + 1) }
    }
    previous = at
    const next = domain.indexOf(".", at)
    at = next < 0 ? -1 : next + 1
  }
  return undefined
}

/** Whether a type's evidence is one of these rules (not a fact to measure them on). */
const isInferred = (evidence: EvidenceRow | undefined): boolean =>
  evidence !== undefined && (evidence[1].startsWith("label-word:") || evidence[1].startsWith("zone-composition:"))

/** The rule ids that fire for a registrable label, under `zone` when it lies in one. */
export const firingRules = (label: string, zone: string | undefined): Array<string> => {
  const rules = familiesOf([label]).map((hit) => `label-word:${hit.family}`)
  if (zone !== undefined) rules.push(`zone-composition:${zone}`)
  return rules
}

/** The label and zone of a listed domain: its registrable label, and the academic zone it is under if any. */
const labelOf = (
  domain: string,
  zones: ReadonlySet<string>
): { label: string; zone: string | undefined } | undefined => {
  const under = zoneLabel(domain, zones)
  if (under !== undefined) return { label: under.label, zone: under.zone }
  const parsed = parse(domain)
  return parsed.domainWithoutSuffix === null ? undefined : { label: parsed.domainWithoutSuffix, zone: undefined }
}

/** Measures every rule on the institutions typed by their names (not `other`). */
export const measureTypeRules = (data: InstitutionsData): Array<TypeRuleRow> => {
  const zones = new Set(data.suffixRules.map((rule) => rule[0]))
  // Per rule, per type: how many institutions; and each institution's rules, once per institution.
  const counts = new Map<string, Map<InstitutionType, number>>()
  const examples: Array<{ readonly rules: ReadonlyArray<string>; readonly type: InstitutionType }> = []
  for (const row of data.institutions) {
    const type = row[5]
    if (type === "other" || isInferred(data.evidence[row[10][1]])) continue
    const rules = new Set<string>()
    for (const domain of row[7]) {
      const found = labelOf(domain, zones)
      if (found !== undefined) for (const rule of firingRules(found.label, found.zone)) rules.add(rule)
    }
    if (rules.size === 0) continue
    examples.push({ rules: [...rules], type })
    for (const rule of rules) {
      let byType = counts.get(rule)
      if (byType === undefined) {
        byType = new Map()
        counts.set(rule, byType)
      }
      byType.set(type, (byType.get(type) ?? 0) + 1)
    }
  }
  const majority = (byType: ReadonlyMap<InstitutionType, number>, without?: InstitutionType): InstitutionType => {
    let best: InstitutionType = "other"
    let bestCount = 0
    for (const [type, count] of [...byType].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const n = count - (type === without ? 1 : 0)
      if (n > bestCount) {
        best = type
        bestCount = n
      }
    }
    return best
  }
  const right = new Map<string, number>()
  const support = new Map<string, number>()
  for (const example of examples) {
    for (const rule of example.rules) {
      support.set(rule, (support.get(rule) ?? 0) + 1)
      if (majority(counts.get(rule)!, example.type) === example.type) right.set(rule, (right.get(rule) ?? 0) + 1)
    }
  }
  const rows: Array<TypeRuleRow> = []
  for (const [rule, byType] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const n = support.get(rule)!
    if (n < minSupport) continue
    rows.push([rule, majority(byType), Math.round(((right.get(rule) ?? 0) / n) * 1000) / 1000, n])
  }
  return rows
}

/** What a rule infers, with its evidence. */
export interface InferredType {
  readonly type: InstitutionType
  readonly evidence: EvidenceRow
}

/** Answers the type of a label under a zone from measured rules. */
export class TypeInference {
  readonly #rules: ReadonlyMap<string, TypeRuleRow>

  constructor(rows: ReadonlyArray<TypeRuleRow>) {
    this.#rules = new Map(rows.map((row) => [row[0], row]))
  }

  get size(): number {
    return this.#rules.size
  }

  /** The best-measured rule that fires for `label` (under `zone`), or undefined when none does. */
  infer(label: string, zone: string | undefined): InferredType | undefined {
    let best: TypeRuleRow | undefined
    for (const id of firingRules(label, zone)) {
      const rule = this.#rules.get(id)
      if (rule !== undefined && rule[1] !== "other" && (best === undefined || rule[2] > best[2])) best = rule
    }
    if (best === undefined) return undefined
    return { type: best[1], evidence: ["campusgate", best[0], confidenceOf(best[2], best[3]), best[2]] }
  }

  /** `infer` for a listed institution's domains: the best rule over all of them. */
  inferForDomains(domains: ReadonlyArray<string>, zones: ReadonlySet<string>): InferredType | undefined {
    let best: InferredType | undefined
    for (const domain of domains) {
      const found = labelOf(domain, zones)
      const inferred = found === undefined ? undefined : this.infer(found.label, found.zone)
      if (inferred !== undefined && (best === undefined || inferred.evidence[3]! > best.evidence[3]!)) best = inferred
    }
    return best
  }
}

/**
 * Types the listed institutions their names left `other`, where a rule
 * fires, with the rule as the type's evidence; and keeps the rules in the
 * data for the hosts matched by a zone alone.
 */
export const withInferredTypes = (data: InstitutionsData): InstitutionsData => {
  const typeRules = measureTypeRules(data)
  const inference = new TypeInference(typeRules)
  const zones = new Set(data.suffixRules.map((rule) => rule[0]))
  const evidence = new EvidenceTable(data.evidence)
  const institutions = data.institutions.map((row): InstitutionRow => {
    if (row[5] !== "other") return row
    const inferred = inference.inferForDomains(row[7], zones)
    if (inferred === undefined) return row
    const facts = row[10]
    return [
      row[0],
      row[1],
      row[2],
      row[3],
      row[4],
      inferred.type,
      row[6],
      row[7],
      row[8],
      row[9],
      [facts[0], evidence.ref(inferred.evidence), facts[2], facts[3]]
    ]
  })
  return { ...data, evidence: evidence.rows, institutions, typeRules }
}
