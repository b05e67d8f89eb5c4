import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseEmail } from "../../src/engine/email/parseEmail.ts"
import { PLAIN_ADDRESS } from "../../src/engine/email/plainAddress.ts"
import { canonicalHash, DuplicateSet } from "../../src/jobs/duplicates.ts"

describe("duplicates", () => {
  it("are the same canonical address seen earlier in the job, and name the row it came first", () => {
    const set = new DuplicateSet()
    const seen = ["John@gmail.com", "j.o.h.n+offers@googlemail.com", "john@mit.edu", "JOHN@MIT.EDU", "not an email"]
    expect(seen.map((email, i) => set.firstRow(email, i + 1))).toEqual([undefined, 1, undefined, 3, undefined])
    expect(set.firstRow("not an email", 6)).toBeUndefined()
    expect(set.firstRow("john+again@gmail.com", 7)).toBe(1)
    expect(set.size).toBe(2)
  })

  it("keep every first row through the table's growth, sized for the job's items or not", () => {
    for (const expected of [0, 5000, 1200]) {
      const set = new DuplicateSet(expected)
      for (let i = 1; i <= 5000; i++) expect(set.firstRow(`user${i}@samples.edu`, i)).toBeUndefined()
      for (let i = 1; i <= 5000; i++) expect(set.firstRow(`USER${i}@samples.edu`, 5000 + i)).toBe(i)
      expect(set.size).toBe(5000)
    }
  })

  it("are tracked as distinct 53-bit integers", () => {
    const hashes = new Set<number>()
    let safe = 0
    for (let i = 0; i < 200_000; i++) {
      const hash = canonicalHash(`user${i}@example${i % 97}.edu`)!
      if (Number.isSafeInteger(hash) && hash >= 0) safe++
      hashes.add(hash)
    }
    expect(safe).toBe(200_000)
    expect(hashes.size).toBe(200_000)
    expect(Math.max(...[...hashes].slice(0, 1000))).toBeGreaterThan(2 ** 40)
  })
})

describe("the hash of an accepted plain address", () => {
  it("equals the hash of the parsed address's canonical form", () => {
    const local = fc.stringMatching(/^[A-Za-z0-9.+_-]{1,12}$/)
    const domain = fc.constantFrom("gmail.com", "GoogleMail.COM", "mit.edu", "Ox.AC.uk", "x-y.samples", "localhost")
    fc.assert(
      fc.property(local, domain, (l, d) => {
        const email = `${l}@${d}`
        if (!parseEmail(email).ok || !PLAIN_ADDRESS.test(email)) return
        expect(canonicalHash(email, true)).toBe(canonicalHash(email))
      }),
      { numRuns: 5000 }
    )
  })

  it("counts the same duplicates whether or not the engine vouched for the format", () => {
    const emails = [
      "Jane+a@OX.ac.uk",
      "jane@ox.ac.uk",
      "J.ane@GMAIL.com",
      "jane@googlemail.com",
      '"q"@mit.edu',
      "q@mit.edu"
    ]
    const fast = new DuplicateSet()
    const slow = new DuplicateSet()
    expect(emails.map((email, i) => fast.firstRow(email, i + 1, true))).toEqual(
      emails.map((email, i) => slow.firstRow(email, i + 1))
    )
  })
})
