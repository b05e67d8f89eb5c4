/**
 * What changed between two compiled institution indexes, domain by domain:
 * domains added, removed, and changed in type or country. `campusgate data
 * diff` prints it, to review an import before the daemon takes it up.
 */
import type { InstitutionsData } from "./InstitutionsData.ts"

export interface DomainFacts {
  readonly domain: string
  readonly name: string | null
  readonly type: string
  readonly country: string | null
}

export interface DomainChange {
  readonly domain: string
  readonly name: string | null
  readonly type?: readonly [from: string, to: string]
  readonly country?: readonly [from: string | null, to: string | null]
}

export interface IndexDiff {
  readonly added: ReadonlyArray<DomainFacts>
  readonly removed: ReadonlyArray<DomainFacts>
  readonly changed: ReadonlyArray<DomainChange>
}

const factsByDomain = (data: InstitutionsData): Map<string, DomainFacts> => {
  const facts = new Map<string, DomainFacts>()
  for (const [, name, country, , , type, , domains] of data.institutions) {
    for (const domain of domains) facts.set(domain, { domain, name, type, country })
  }
  return facts
}

const byDomain = (a: { domain: string }, b: { domain: string }) =>
  a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0

export const diffIndexes = (from: InstitutionsData, to: InstitutionsData): IndexDiff => {
  const before = factsByDomain(from)
  const after = factsByDomain(to)
  const added: Array<DomainFacts> = []
  const changed: Array<DomainChange> = []
  for (const [domain, now] of after) {
    const was = before.get(domain)
    if (was === undefined) {
      added.push(now)
      continue
    }
    if (was.type === now.type && was.country === now.country) continue
    const change: { -readonly [K in keyof DomainChange]: DomainChange[K] } = { domain, name: now.name }
    if (was.type !== now.type) change.type = [was.type, now.type]
    if (was.country !== now.country) change.country = [was.country, now.country]
    changed.push(change)
  }
  const removed = [...before.values()].filter((facts) => !after.has(facts.domain))
  return { added: added.sort(byDomain), removed: removed.sort(byDomain), changed: changed.sort(byDomain) }
}
