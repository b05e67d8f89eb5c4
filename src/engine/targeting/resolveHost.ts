/**
 * Decides which rule speaks for a host: the target group's domain lists and
 * patterns, or the institution index (listed domains, stoplist, academic
 * suffix rules). The most specific match wins — the one naming the most
 * labels — for allow and deny alike; on a tie the target group's own rules
 * beat the built-in data, and a deny beats an allow.
 */
import { isAlumniHost } from "../institutions/alumni.ts"
import type { HostMatch, InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import { labelCount } from "./hostGlob.ts"

export type CustomList = "domains.allow" | "domains.deny" | "patterns.allow" | "patterns.deny"

export type Resolution =
  | { readonly kind: "custom"; readonly list: CustomList; readonly entry: string; readonly index: HostMatch }
  | { readonly kind: "index"; readonly index: HostMatch }
  | { readonly kind: "alumni"; readonly index: HostMatch }

const none: HostMatch = { kind: "none" }

const isDeny = (list: CustomList): boolean => list === "domains.deny" || list === "patterns.deny"

export const resolveHost = (group: CompiledTargetGroup, index: InstitutionTable, host: string): Resolution => {
  let list: CustomList | undefined
  let entry = ""
  let specificity = 0
  const customDomains = group.customDomains
  if (customDomains !== null) {
    for (let i = 0; ; ) {
      const suffix = i === 0 ? host : host.slice(i)
      const found = customDomains.get(suffix)
      if (found !== undefined) {
        list = found
        entry = suffix
        specificity = labelCount(suffix)
        break
      }
      i = host.indexOf(".", i) + 1
      if (i === 0) break
    }
  }
  // A candidate beats the current one when it names more labels, or as many and it denies.
  const beats = (candidate: number, deny: boolean): boolean =>
    list === undefined || candidate > specificity || (candidate === specificity && deny && !isDeny(list))
  for (const glob of group.denyPatterns) {
    if (beats(glob.specificity, true) && glob.test(host)) {
      list = "patterns.deny"
      entry = glob.pattern
      specificity = glob.specificity
    }
  }
  for (const glob of group.allowPatterns) {
    if (beats(glob.specificity, false) && glob.test(host)) {
      list = "patterns.allow"
      entry = glob.pattern
      specificity = glob.specificity
    }
  }

  const match = group.institutions !== null ? index.lookup(host) : none
  if (match.kind !== "none") {
    const matched = match.matchedDomain
    if (list === undefined || labelCount(matched) > specificity) {
      if (match.kind !== "deny" && isAlumniHost(host, matched)) return { kind: "alumni", index: match }
      return { kind: "index", index: match }
    }
  }
  return list === undefined ? { kind: "index", index: match } : { kind: "custom", list, entry, index: match }
}
