import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { canonicalAddress } from "../../../src/engine/email/canonical.ts"
import {
  hashCanonicalAddress,
  hashKeyFromBytes,
  hashPlainAddress,
  hashString,
  lastHash
} from "../../../src/engine/email/canonicalHash.ts"
import { parseEmail } from "../../../src/engine/email/parseEmail.ts"
import { PLAIN_ADDRESS } from "../../../src/engine/email/plainAddress.ts"

const key = hashKeyFromBytes(new Uint8Array(16).map((_, i) => i * 17 + 3))
const options = { allowQuotedLocalPart: true, allowIpLiteral: true } as const

const fast = (address: string): [number, number] => {
  hashCanonicalAddress(key, address)
  return [lastHash.high, lastHash.low]
}
const reference = (address: string): [number, number] => {
  hashString(key, address)
  return [lastHash.high, lastHash.low]
}

const localPart = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9.+_-]{1,20}$/),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  fc.stringMatching(/^"[a-z +.]{1,10}"$/),
  fc.constantFrom("+tag", "a+b+c", "J.O.H.N+news", "Ünïcödé+x", '"plain"', '"with space"')
)
const domain = fc.constantFrom(
  "gmail.com",
  "googlemail.com",
  "GMail.com",
  "ox.ac.uk",
  "münchen.de",
  "mit.edu",
  "[192.0.2.1]"
)

describe("hashCanonicalAddress", () => {
  it("equals the hash of canonicalAddress(parseEmail(email)) for every address that parses", () => {
    fc.assert(
      fc.property(localPart, domain, (local, host) => {
        const parsed = parseEmail(`${local}@${host}`, options)
        if (!parsed.ok) return
        expect(fast(parsed.email.address)).toEqual(reference(canonicalAddress(parsed.email)))
      }),
      { numRuns: 5000 }
    )
  })

  it("gives one identity to the spellings of one mailbox, and others to others", () => {
    const of = (email: string) => {
      const parsed = parseEmail(email, options)
      if (!parsed.ok) throw new Error(email)
      return fast(parsed.email.address)
    }
    expect(of("John.Smith+promo@gmail.com")).toEqual(of("johnsmith@googlemail.com"))
    expect(of("Jane+x@ox.ac.uk")).toEqual(of("jane@OX.AC.UK"))
    expect(of("jane.doe@ox.ac.uk")).not.toEqual(of("janedoe@ox.ac.uk"))
    expect(of("jane@ox.ac.uk")).not.toEqual(of("jane@cam.ac.uk"))
  })

  it("depends on the key", () => {
    const other = hashKeyFromBytes(new Uint8Array(16).fill(9))
    hashCanonicalAddress(other, "jane@ox.ac.uk")
    const withOther = [lastHash.high, lastHash.low]
    expect(fast("jane@ox.ac.uk")).not.toEqual(withOther)
  })
})

describe("hashPlainAddress", () => {
  const plainly = (email: string): [number, number] | undefined =>
    hashPlainAddress(key, email) ? [lastHash.high, lastHash.low] : undefined

  /** Text near the plain form: its characters, and ones that break it (quotes, brackets, spaces, non-ASCII, dots in a row). */
  const nearlyPlain = fc
    .array(
      fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(..."abcXYZ09.-+_!~'") },
        { weight: 2, arbitrary: fc.constant("@") },
        { weight: 1, arbitrary: fc.constantFrom('"', "[", "]", " ", "ü", "é", "..", "@.", ".@", ":") }
      ),
      { maxLength: 24 }
    )
    .map((parts) => parts.join(""))

  it("hashes exactly the texts of the plain form", () => {
    fc.assert(
      fc.property(nearlyPlain, (text) => {
        expect(plainly(text) !== undefined).toBe(PLAIN_ADDRESS.test(text))
      }),
      { numRuns: 20000 }
    )
  })

  it("equals hashCanonicalAddress of the address lower-cased, and the canonical string's hash", () => {
    const local = fc.stringMatching(/^[A-Za-z0-9.+_!~-]{1,16}$/)
    const domain = fc.constantFrom(
      "gmail.com",
      "GMail.COM",
      "GoogleMail.com",
      "Ox.AC.uk",
      "mit.edu",
      "x-y.Samples",
      "a.b"
    )
    fc.assert(
      fc.property(local, domain, (l, d) => {
        const email = `${l}@${d}`
        const hashed = plainly(email)
        if (hashed === undefined) return
        expect(hashed).toEqual(fast(email.toLowerCase()))
        const parsed = parseEmail(email.toLowerCase(), options)
        if (parsed.ok) expect(hashed).toEqual(reference(canonicalAddress(parsed.email)))
      }),
      { numRuns: 5000 }
    )
  })
})
