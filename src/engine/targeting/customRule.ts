/**
 * Decides whether a target group's own domain lists and patterns speak for
 * a host, or the institution index does (listed domains, stoplist, academic
 * suffix rules). The most specific match wins — the one naming the most
 * labels — for allow and deny alike; on a tie the target group's own rules
 * beat the built-in data, and a deny beats an allow.
 */
import type { HostMatch } from "../institutions/InstitutionTable.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import { labelCount } from "./hostGlob.ts"

export type CustomList = "domains.allow" | "domains.deny" | "patterns.allow" | "patterns.deny"

/** The group's list entry that speaks for a host. */
export interface CustomRule {
  readonly list: CustomList
  readonly entry: string
}

const isDeny = (list: CustomList): boolean => list === "domains.deny" || list === "patterns.deny"

/**
 * The group's rule that speaks for `host`, or `undefined` when none matches
 * or the index's match (`indexMatch`, considered only when the group has
 * institution criteria) is more specific.
 */
export const resolveCustomRule = (
  group: CompiledTargetGroup,
  indexMatch: HostMatch,
  host: string
): CustomRule | undefined => {
  if (!group.hasCustomLists) return undefined
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
  // A pattern beats the current rule when it names more labels, or as many and it denies.
  for (const glob of group.denyPatterns) {
    if (
      (list === undefined || glob.specificity > specificity || (glob.specificity === specificity && !isDeny(list))) &&
      glob.test(host)
    ) {
      list = "patterns.deny"
      entry = glob.pattern
      specificity = glob.specificity
    }
  }
  for (const glob of group.allowPatterns) {
    if ((list === undefined || glob.specificity > specificity) && glob.test(host)) {
      list = "patterns.allow"
      entry = glob.pattern
      specificity = glob.specificity
    }
  }
  if (list === undefined) return undefined
  if (group.institutions !== null && indexMatch.kind !== "none" && labelCount(indexMatch.matchedDomain) > specificity) {
    return undefined
  }
  return { list, entry }
}
