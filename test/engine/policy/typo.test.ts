import { describe, expect, it } from "@effect/vitest"
import { parse } from "tldts"
import { commonSuffixes, damerauDistance, KnownDomains, suggestDomain } from "../../../src/engine/policy/index.ts"
import { itAnswers } from "../../support/tables.ts"

const knownList = [
  "mit.edu",
  "stanford.edu",
  "harvard.edu",
  "ox.ac.uk",
  "cam.ac.uk",
  "unimelb.edu.au",
  "berkeley.edu",
  "gmail.com",
  "hotmail.com",
  "yahoo.com",
  "outlook.com",
  "uni-a.de",
  "uni-b.de"
]
const index = new KnownDomains(knownList)
const set = new Set(knownList)
const predicate = (domain: string) => set.has(domain)

describe.each([
  ["a KnownDomains index", index],
  ["a predicate", predicate]
] as const)("suggestDomain with %s", (_, known) => {
  itAnswers("%s → %s", (typed: string) => suggestDomain(typed, known), [
    ["mit.ed", "mit.edu"],
    ["gmial.com", "gmail.com"],
    ["stanford.eud", "stanford.edu"],
    ["ox.ac.ku", "ox.ac.uk"],
    ["harvard.edu.", "harvard.edu"],
    [" harvard.edu", "harvard.edu"],
    ["harvard..edu", "harvard.edu"],
    ["HARVRD.EDU", "harvard.edu"],
    ["gmail.con", "gmail.com"],
    ["gmai.com", "gmail.com"],
    ["gmaill.com", "gmail.com"],
    ["gmailcom", "gmail.com"],
    ["hotmial.com", "hotmail.com"],
    ["yahooo.com", "yahoo.com"],
    ["cam.ac.k", "cam.ac.uk"],
    ["unimelb.edu.aus", "unimelb.edu.au"],
    ["stanford.ude", "stanford.edu"], // two edits, in an unknown suffix
    ["ox.ac.kuu", "ox.ac.uk"]
  ])

  it.each([
    ["mit.edu", "already known"],
    ["unknown-school.edu", "nothing close"],
    ["mit.com", "a real domain under a known suffix, not a typo"],
    ["gmx.net", "nothing close"],
    ["", "empty"],
    [".", "only a dot"],
    ["a".repeat(300), "too long to be a domain"]
  ])("%s: no suggestion (%s)", (typed) => {
    expect(suggestDomain(typed, known)).toBeNull()
  })

  it("breaks ties deterministically: the alphabetically first of equally ranked candidates", () => {
    expect(suggestDomain("uni-c.de", known)).toBe("uni-a.de")
  })

  it("prefers a swap to a substitution", () => {
    const local = new KnownDomains(["abc.edu", "bac.edu"])
    // "bzc.edu" is one substitution from both; "acb.edu" is one swap from abc.edu and two edits from bac.edu.
    expect(suggestDomain("acb.edu", local)).toBe("abc.edu")
  })
})

describe("KnownDomains", () => {
  it("finds exactly the known one-edit variants", () => {
    const known = new KnownDomains(["ab.de", "abc.de", "xb.de"])
    known.prepare("ab.de")
    expect(known.knownVariant(2, 2, "c".charCodeAt(0), -1)).toBe("abc.de")
    expect(known.knownVariant(0, 1, "x".charCodeAt(0), -1)).toBe("xb.de")
    expect(known.knownVariant(0, 1, "y".charCodeAt(0), -1)).toBeNull()
    expect(known.knownVariant(0, 2, "b".charCodeAt(0), "a".charCodeAt(0))).toBeNull()
  })
})

describe("damerauDistance", () => {
  it.each([
    ["edu", "edu", 0],
    ["eud", "edu", 1],
    ["ed", "edu", 1],
    ["ku", "uk", 1],
    ["ude", "edu", 2],
    ["", "abc", 3],
    ["ca", "abc", 3]
  ])("%s ↔ %s = %i", (a, b, distance) => {
    expect(damerauDistance(a, b)).toBe(distance)
    expect(damerauDistance(b, a)).toBe(distance)
  })

  it("stops early above the bound", () => {
    expect(damerauDistance("abcdef", "uvwxyz", 2)).toBe(3)
  })
})

describe("commonSuffixes", () => {
  it("are all ICANN public suffixes", () => {
    for (const suffix of commonSuffixes) expect(parse(`campusgate-test.${suffix}`).publicSuffix).toBe(suffix)
  })
})
