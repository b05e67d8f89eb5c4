import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { PackedDomainSet } from "../../../src/engine/policy/PackedDomainSet.ts"

const label = fc.stringMatching(/^[a-z0-9-]{1,12}$/)
const domain = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join("."))

describe("PackedDomainSet", () => {
  it("answers as a Set of the same domains, for domains in it and not", () => {
    fc.assert(
      fc.property(fc.array(domain, { maxLength: 200 }), fc.array(domain, { maxLength: 50 }), (listed, asked) => {
        const set = new Set(listed)
        const packed = new PackedDomainSet(listed)
        expect(packed.size).toBe(set.size)
        expect([...packed]).toEqual([...set])
        for (const host of [...listed, ...asked]) expect(packed.has(host), host).toBe(set.has(host))
      }),
      { numRuns: 300 }
    )
  })

  it("tells apart an entry from its parents, children and prefixes", () => {
    const packed = new PackedDomainSet(["mail.example", "x.mailinator.com", "mailinator.com"])
    for (const host of ["mail.example", "x.mailinator.com", "mailinator.com"]) expect(packed.has(host)).toBe(true)
    for (const host of ["example", "a.mail.example", "mail.exampl", "ail.example", "mailinator.co", "", "\n"]) {
      expect(packed.has(host), host).toBe(false)
    }
  })

  it("may have an entry below every parent of an entry, and says so of no other domain of a small set", () => {
    fc.assert(
      fc.property(fc.array(domain, { maxLength: 200 }), (listed) => {
        const packed = new PackedDomainSet(listed)
        for (const entry of listed) {
          for (let dot = entry.indexOf("."); dot >= 0; dot = entry.indexOf(".", dot + 1)) {
            expect(packed.mayHaveEntryBelow(entry.slice(dot + 1)), entry).toBe(true)
          }
        }
      }),
      { numRuns: 300 }
    )
    const packed = new PackedDomainSet(["x.mailinator.com", "a.b.example"])
    for (const parent of ["mailinator.com", "com", "b.example", "example"])
      expect(packed.mayHaveEntryBelow(parent)).toBe(true)
    for (const other of ["x.mailinator.com", "a.b.example", "mailinator.co", "ailinator.com", "org", ""]) {
      expect(packed.mayHaveEntryBelow(other), other).toBe(false)
    }
  })

  it("holds nothing when empty, and refuses an entry with a line break", () => {
    expect(new PackedDomainSet([]).has("")).toBe(false)
    expect(new PackedDomainSet([]).size).toBe(0)
    expect(() => new PackedDomainSet(["a.example\nb.example"])).toThrow(/line break/)
  })
})
