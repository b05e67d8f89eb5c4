/**
 * The role fact of an email host — whom it serves and why we think so —
 * as shared, frozen objects: one per (role, rule), so that details built
 * from them can be shared between results too.
 */
import type { Evidence, HostRole } from "../../domain/Institution.ts"
import { roleOf } from "../institutions/roles.ts"

export interface RoleFact {
  readonly role: HostRole
  readonly evidence: Evidence
  /** Its position among the role facts (`allRoleFacts`), for per-fact answers kept in arrays (`acceptsRoleFact`). */
  readonly index: number
}

let made = 0
const fact = (role: HostRole, rule: string, confidence: Evidence["confidence"]): RoleFact =>
  Object.freeze({ role, evidence: Object.freeze({ source: "campusgate", rule, confidence }), index: made++ })

const byHostLabel = {
  student: fact("student", "role-label", "medium"),
  staff: fact("staff", "role-label", "medium"),
  alumni: fact("alumni", "role-label", "medium")
} as const

const byListedDomain = {
  student: fact("student", "listed-domain-label", "high"),
  staff: fact("staff", "listed-domain-label", "high"),
  alumni: fact("alumni", "listed-domain-label", "high"),
  mixed: fact("mixed", "no-role-label", "low")
} as const

/** Every role fact, by index. */
export const allRoleFacts: ReadonlyArray<RoleFact> = [
  ...Object.values(byHostLabel),
  ...Object.values(byListedDomain)
].sort((a, b) => a.index - b.index)

/**
 * The role of `host`, matched at `matchedDomain`: what the labels in front
 * of it name, else what the listed domain's own labels name (`listedRole`),
 * else `mixed`.
 */
export const roleFactOf = (host: string, matchedDomain: string, listedRole: HostRole = "mixed"): RoleFact => {
  if (host.length > matchedDomain.length) {
    const role = roleOf(host, matchedDomain)
    if (role !== undefined) return byHostLabel[role]
  }
  return byListedDomain[listedRole]
}
