import { domainToASCII, domainToUnicode } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  assessConfusable,
  KnownDomains,
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
