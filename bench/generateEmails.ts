/**
 * Deterministic benchmark input: a realistic mix of addresses built from the
 * built-in data, the same for every run and every compared implementation.
 * Mix: 45% listed institution domains, 10% sub-domains of them, 10% hosts
 * under academic suffixes only, 25% free-mail and company hosts, 5% upper-case
 * or international variants, 5% malformed.
 */
import type { InstitutionTable } from "../src/engine/institutions/InstitutionTable.ts"

/** A small, fast, seeded PRNG (mulberry32) so every run sees the same emails. */
export const random = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const firstNames = ["anna", "li", "omar", "sofia", "jan", "maria", "chen", "noah", "emma", "ivan", "yuki", "ali", "zoe"]
const otherHosts = ["gmail.com", "outlook.com", "yahoo.co.jp", "web.de", "acme-corp.com", "shop.example.org", "mail.ru"]
const suffixHosts = ["newcollege.edu", "stateuni.edu", "polytech.ac.uk", "hs.edu.cn", "lyceum.ac.in", "tech.edu.au"]
const malformed = ["no-at-sign.example.com", "two@@ats.edu", "dot.@mit.edu", "x@localhost", "spaces in@mit.edu", ""]

export const generateEmails = (table: InstitutionTable, count: number, seed = 42): Array<string> => {
  const next = random(seed)
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  const listed = table.institutions.flatMap((institution) => institution.domains)
  const emails = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    const local = `${pick(firstNames)}.${pick(firstNames)}${Math.floor(next() * 1000)}`
    const roll = next()
    emails[i] =
      roll < 0.45
        ? `${local}@${pick(listed)}`
        : roll < 0.55
          ? `${local}@${pick(["stu", "mail", "cs", "student"])}.${pick(listed)}`
          : roll < 0.65
            ? `${local}@${pick(suffixHosts)}`
            : roll < 0.9
              ? `${local}@${pick(otherHosts)}`
              : roll < 0.95
                ? pick([`${local.toUpperCase()}@${pick(listed).toUpperCase()}`, `${local}@müller-universität.de`])
                : pick(malformed)
  }
  return emails
}
