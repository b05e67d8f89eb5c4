import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseEmail } from "../../../src/engine/email/parseEmail.ts"
import { acceptedPlainAt, PLAIN_ADDRESS, plainAt } from "../../../src/engine/email/plainAddress.ts"

/** Text near the plain form: its characters, and ones that break it (quotes, brackets, spaces, non-ASCII, dots in a row). */
const nearlyPlain = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(..."abcXYZ09.-+_!~'`{|}/=?^#$%&*") },
      { weight: 2, arbitrary: fc.constant("@") },
      { weight: 1, arbitrary: fc.constantFrom('"', "[", "]", " ", "ü", "é", "..", "@.", ".@", ":", "\\", "(", ",") }
    ),
    { maxLength: 24 }
  )
  .map((parts) => parts.join(""))

/** Domains parseEmail accepts or refuses for reasons of their own: case, special use, lengths, hyphens, digits. */
const domain = fc.oneof(
  fc.constantFrom(
    "mit.edu",
    "MIT.Edu",
    "ox.ac.uk",
    "a-b.samples",
    "-bad.edu",
    "bad-.edu",
    "localhost",
    "example.com",
    "x.test",
    "1.2.3.4",
    "x.123",
    "xn--mnchen-3ya.de",
    `${"a".repeat(63)}.edu`,
    `${"a".repeat(64)}.edu`,
    `${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.edu`
  ),
  fc.stringMatching(/^[a-z0-9-]{1,8}(\.[a-zA-Z0-9-]{1,8}){0,2}$/)
)
const local = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,12}$/),
  fc.constantFrom("x".repeat(64), "y".repeat(65), ".a", "a.", "a..b", "a.b.c")
)
const syntaxes = [
  undefined,
  { allowQuotedLocalPart: true, allowIpLiteral: true, allowSpecialUseDomains: true },
  { allowSpecialUseDomains: true }
] as const

describe("the plain form of an address", () => {
  it("is exactly the texts the pattern describes", () => {
    fc.assert(
      fc.property(nearlyPlain, (text) => {
        const at = plainAt(text)
        expect(at >= 0).toBe(PLAIN_ADDRESS.test(text))
        if (at >= 0) expect(at).toBe(text.indexOf("@"))
      }),
      { numRuns: 20000 }
    )
  })

  it("accepted as it is parses, under any syntax, whenever its domain does, to its own local part and its domain lower-cased", () => {
    fc.assert(
      fc.property(local, domain, fc.constantFrom(...syntaxes), (l, d, syntax) => {
        const email = `${l}@${d}`
        const at = acceptedPlainAt(email)
        const parsed = parseEmail(email, syntax)
        if (at < 0) {
          // Refused here: either not of the plain form, or a local part or length parseEmail refuses too.
          if (PLAIN_ADDRESS.test(email)) expect(parsed.ok).toBe(false)
          return
        }
        expect(at).toBe(l.length)
        // Its domain alone decides: the same domain after a one-letter local part parses alike.
        const domainOnly = parseEmail(`a@${d}`, syntax)
        expect(parsed.ok).toBe(domainOnly.ok)
        if (!parsed.ok || !domainOnly.ok) return
        expect(parsed.email.localPart).toBe(l)
        expect(parsed.email.domain).toBe(d.toLowerCase())
        expect(parsed.email.isInternational).toBe(domainOnly.email.isInternational)
        if (d === d.toLowerCase()) expect(parsed.email.address).toBe(email)
      }),
      { numRuns: 20000 }
    )
  })

  it("is refused as it is for a local part or a length that parseEmail refuses", () => {
    for (const email of [
      ".a@mit.edu",
      "a.@mit.edu",
      "a..b@mit.edu",
      `${"y".repeat(65)}@mit.edu`,
      `x@${"a".repeat(250)}.edu`
    ]) {
      expect(acceptedPlainAt(email)).toBe(-1)
      expect(parseEmail(email).ok).toBe(false)
    }
    expect(acceptedPlainAt(`${"x".repeat(64)}@mit.edu`)).toBe(64)
  })
})
