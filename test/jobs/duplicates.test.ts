import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { hashPlainAddress, lastHash } from "../../src/engine/email/canonicalHash.ts"
import { parseEmail } from "../../src/engine/email/parseEmail.ts"
import { acceptedPlainAt, PLAIN_ADDRESS } from "../../src/engine/email/plainAddress.ts"
import { canonicalHash, DUPLICATES_KEY, DuplicateSet, PlainHashes } from "../../src/jobs/duplicates.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../src/stats/UsageRecorder.ts"

describe("duplicates", () => {
  it("are the same canonical address seen earlier in the job, and name the row it came first", () => {
    const set = new DuplicateSet()
    const seen = ["John@gmail.com", "j.o.h.n+offers@googlemail.com", "john@mit.edu", "JOHN@MIT.EDU", "not an email"]
    expect(seen.map((email, i) => set.firstRow(email, i + 1))).toEqual([undefined, 1, undefined, 3, undefined])
    expect(set.firstRow("not an email", 6)).toBeUndefined()
    expect(set.firstRow("john+again@gmail.com", 7)).toBe(1)
    expect(set.size).toBe(2)
  })

  it("are found for addresses only a target's wider syntax accepts: quoted local parts, address literals, special-use names", () => {
    const set = new DuplicateSet()
    const seen = ['"john doe"@mit.edu', "jane@[192.0.2.1]", "sam@example.com", '"john doe"@MIT.EDU', "jane@[192.0.2.1]"]
    expect(seen.map((email, i) => set.firstRow(email, i + 1))).toEqual([undefined, undefined, undefined, 1, 2])
    expect(set.firstRow("Sam@Example.com", 6)).toBe(3)
    expect(canonicalHash('"john doe"@mit.edu')).toBeDefined()
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
        expect(new PlainHashes(DUPLICATES_KEY, [email]).hash53(0)).toBe(canonicalHash(email))
      }),
      { numRuns: 5000 }
    )
  })

  it("counts the same duplicates as parsing every email, plain hashes and parsed ones mixed as a batch mixes them", () => {
    const emails = [
      "Jane+a@OX.ac.uk",
      "jane@ox.ac.uk",
      "J.ane@GMAIL.com",
      "jane@googlemail.com",
      '"q"@mit.edu',
      "q@mit.edu"
    ]
    // As `encodeBatch`: the plain hash where there is one, else the parsed address's.
    const plain = new PlainHashes(DUPLICATES_KEY, emails)
    const mixed = new DuplicateSet()
    const parsed = new DuplicateSet()
    expect(emails.map((email, i) => mixed.firstRowOfHash(plain.hash53(i) ?? canonicalHash(email)!, i + 1))).toEqual(
      emails.map((email, i) => parsed.firstRow(email, i + 1))
    )
    expect(parsed.size).toBe(3)
  })
})

describe("a batch's plain hashes, counted as unique emails", () => {
  const key = hashKeyFromSecret("a deployment's statistics secret")
  const permissive = { allowQuotedLocalPart: true, allowIpLiteral: true, allowSpecialUseDomains: true } as const
  const local = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9.+_-]{1,12}$/),
    fc.constantFrom('"a b"', '"Q"', "jöhn", "+tag", "x".repeat(70))
  )
  const domain = fc.constantFrom(
    "gmail.com",
    "GoogleMail.COM",
    "mit.edu",
    "Ox.AC.uk",
    "x-y.samples",
    "bücher.de",
    "[1.2.3.4]"
  )

  it("register each address as hashing the address the engine parsed from it would", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(local, domain), { maxLength: 40 }), (pairs) => {
        const emails = pairs.map(([l, d]) => `${l}@${d}`)
        const addresses = emails.map((email) => {
          const parsed = parseEmail(email, permissive)
          return parsed.ok ? parsed.email.address : undefined
        })
        const verdicts = emails.map(() => ({ isValid: false, reasonCode: "NOT_AN_INSTITUTION" }))
        const hashing = new UsageRecorder(key)
        hashing.recordVerdicts("o", addresses, verdicts, 0)
        const given = new UsageRecorder(key)
        given.recordVerdicts("o", addresses, verdicts, 0, new PlainHashes(key, emails))
        expect(given.pending("o")?.registers).toEqual(hashing.pending("o")?.registers)
      }),
      { numRuns: 500 }
    )
  })
})

describe("a batch read once", () => {
  it("keeps each email's accepted plain form, and hashes those of the plain form as they are read", () => {
    const key = hashKeyFromSecret("read once")
    const local = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9.+_-]{1,12}$/),
      fc.constantFrom("x".repeat(64), "y".repeat(65), "ü", '"q"')
    )
    const domain = fc.constantFrom("mit.edu", "Ox.AC.uk", "x..y", "bücher.de", "-a.b", "[1.2.3.4]")
    fc.assert(
      fc.property(fc.array(fc.tuple(local, domain), { maxLength: 20 }), (pairs) => {
        const emails = pairs.map(([l, d]) => `${l}@${d}`)
        const read = new PlainHashes(key, emails)
        emails.forEach((email, i) => {
          expect(read.acceptedAt[i]).toBe(acceptedPlainAt(email))
          const plain = hashPlainAddress(key, email)
          expect(read.made[i]).toBe(plain ? 1 : 0)
          if (plain) expect([read.high[i], read.low[i]]).toEqual([lastHash.high, lastHash.low])
        })
      }),
      { numRuns: 1000 }
    )
  })
})
