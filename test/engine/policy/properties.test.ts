import { domainToASCII, domainToUnicode } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { readBuiltInJson } from "../../../src/engine/data/builtInData.ts"
import { listEntries } from "../../../src/engine/policy/EmailListsData.ts"
import {
  asEmailListsData,
  assessConfusable,
  KnownDomains,
  loadBuiltInEmailLists,
  loadEmailLists,
  RoleAccounts,
  suggestDomain
} from "../../../src/engine/policy/index.ts"
import { testEmailListsData } from "./fixtures.ts"

const known = new KnownDomains(["mit.edu", "gmail.com", "ox.ac.uk", "a.b"])
const knownSet = new Set(["mit.edu", "gmail.com", "ox.ac.uk", "a.b"])

/** Strings that look like domains, with IDNs and junk mixed in. */
const domainish = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.array(fc.stringMatching(/^[a-z0-9-]{0,12}$/), { minLength: 1, maxLength: 5 }).map((labels) => labels.join("."))
)

describe("never throws on arbitrary input", () => {
  it("suggestDomain, with an index or a predicate", () => {
    fc.assert(
      fc.property(domainish, (domain) => {
        const fromIndex = suggestDomain(domain, known)
        const fromPredicate = suggestDomain(domain, (d) => knownSet.has(d))
        expect(fromIndex).toBe(fromPredicate)
        if (fromIndex !== null) expect(knownSet.has(fromIndex)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("assessConfusable, with consistent and inconsistent forms", () => {
    fc.assert(
      fc.property(domainish, domainish, (a, b) => {
        const ascii = domainToASCII(a)
        for (const [asciiForm, unicodeForm] of [
          [ascii, domainToUnicode(ascii)],
          [a, b],
          [`xn--${a}`, b]
        ] as const) {
          const result = assessConfusable(asciiForm, unicodeForm)
          if (result.imitates !== null) expect(result.imitates).toMatch(/^[a-z0-9.-]+$/)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("the list lookups", () => {
    const lists = loadEmailLists(testEmailListsData())
    const roles = new RoleAccounts(["admin", "no-reply"])
    fc.assert(
      fc.property(domainish, (value) => {
        lists.isDisposable(value)
        lists.isFreeMail(value)
        lists.isRoleAccount(value)
        roles.match(value)
      }),
      { numRuns: 300 }
    )
  })
})

describe("KnownDomains agrees with a Set", () => {
  it("on every one-edit variant of random domains", () => {
    const alphabet = "ab.-"
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[ab.-]{1,6}$/), { maxLength: 30 }),
        fc.stringMatching(/^[ab.-]{0,6}$/),
        (domains, typed) => {
          const index = new KnownDomains(domains)
          const set = new Set(domains)
          index.prepare(typed)
          for (let from = 0; from <= typed.length; from++) {
            for (let to = from; to <= Math.min(typed.length, from + 2); to++) {
              for (const insert of ["", ...alphabet, "ab", "b."]) {
                const first = insert.length > 0 ? insert.charCodeAt(0) : -1
                const second = insert.length > 1 ? insert.charCodeAt(1) : -1
                const variant = typed.slice(0, from) + insert + typed.slice(to)
                expect(index.knownVariant(from, to, first, second)).toBe(set.has(variant) ? variant : null)
              }
            }
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})

/**
 * The role-account rules as plain map look-ups (RoleAccounts' documentation),
 * without the filter `match` asks first: the filter may only skip look-ups
 * that would find nothing.
 */
const referenceRoles = (entries: ReadonlyArray<string>) => {
  const strip = (value: string) => value.replace(/[-._]/g, "")
  const hyphens = (value: string) => value.replace(/[-._]+/g, "-")
  const list = [...new Set(entries.map((entry) => entry.trim().toLowerCase()))].filter((entry) => entry !== "")
  const spellings = new Map(list.map((entry) => [entry, entry]))
  for (const entry of list) {
    const spelling = strip(entry).length >= 5 ? strip(entry) : hyphens(entry)
    if (!spellings.has(spelling)) spellings.set(spelling, entry)
  }
  return (localPart: string): string | null => {
    let base = localPart
    if (base.length > 1 && base.startsWith('"') && base.endsWith('"')) base = base.slice(1, -1)
    if (base.includes("+")) base = base.slice(0, base.indexOf("+"))
    base = base.toLowerCase()
    const direct = spellings.get(base)
    if (direct !== undefined) return direct
    if (strip(base) === base) return null
    return spellings.get(strip(base).length >= 5 ? strip(base) : hyphens(base)) ?? null
  }
}

describe("RoleAccounts agrees with its rules as plain look-ups", () => {
  it("on local parts spelt from the entries' letters, separators, tags, quotes and non-ASCII", () => {
    const entry = fc.stringMatching(/^[abcAB.\-_é ]{0,8}$/)
    const localPart = fc.stringMatching(/^[abcAB.\-_+"éK]{0,10}$/)
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), fc.array(localPart, { maxLength: 30 }), (entries, parts) => {
        const roles = new RoleAccounts(entries)
        const reference = referenceRoles(entries)
        for (const part of [...entries, ...entries.map((e) => `${e.toUpperCase()}+tag`), ...parts]) {
          expect(roles.match(part)).toBe(reference(part))
        }
      }),
      { numRuns: 500 }
    )
  })

  it("on the built-in list's entries, written as the rules allow", () => {
    const lists = loadBuiltInEmailLists()
    const entries = listEntries(asEmailListsData(readBuiltInJson("email-lists.json.gz")).lists.roleAccounts)
    const reference = referenceRoles(entries)
    for (const entry of entries) {
      for (const part of [entry, entry.toUpperCase(), `"${entry}"`, `${entry}+x`, entry.replace(/[-._]/g, "_")]) {
        expect(lists.matchRoleAccount(part)).toBe(reference(part))
        expect(lists.matchRoleAccount(part)).not.toBeNull()
      }
    }
  })
})
