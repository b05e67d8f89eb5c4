import { domainToASCII } from "node:url"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodePunycode } from "../../../src/engine/email/punycode.ts"
import { itAnswers } from "../../support/tables.ts"

describe("decodePunycode", () => {
  itAnswers("%s → %s", decodePunycode, [
    ["mller-kva", "müller"],
    ["bcher-kva", "bücher"],
    ["fa-hia", "faß"],
    ["tda", "ü"],
    ["hxajbheg2az3al", "παράδειγμα"],
    ["r8jz45g", "例え"],
    ["k28h", "😆"],
    ["uni-kln-e1a", "uni-köln"],
    ["abc-", "abc"],
    ["", ""]
  ])

  it("decodes digits of either case", () => {
    expect(decodePunycode("MLLER-KVA")).toBe("MüLLER")
    expect(decodePunycode("TDA")).toBe("ü")
  })

  it.each(["zz", "-", "-abc", "99999999999", "a!", "ab-c!d", "ü-tda", "xyz-ä"])("rejects %j", (encoded) => {
    expect(decodePunycode(encoded)).toBeUndefined()
  })

  it("inverts UTS-46 encoding of arbitrary labels", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-composite", minLength: 1, maxLength: 12 }), (label) => {
        const ascii = domainToASCII(`${label}.example`)
        const first = ascii.split(".")[0] ?? ""
        fc.pre(ascii.endsWith(".example") && first.startsWith("xn--") && ascii.split(".").length === 2)
        const decoded = decodePunycode(first.slice(4))
        expect(decoded).toBeDefined()
        expect(domainToASCII(`${decoded}.example`)).toBe(ascii)
      }),
      { numRuns: 500 }
    )
  })

  it("never throws on arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 40 }), (encoded) => {
        const decoded = decodePunycode(encoded)
        expect(decoded === undefined || typeof decoded === "string").toBe(true)
      }),
      { numRuns: 2000 }
    )
  })
})
