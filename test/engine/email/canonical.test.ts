import { describe, expect, it } from "vitest"
import { canonicalAddress } from "../../../src/engine/email/canonical.ts"
import { type EmailSyntaxOptions, parseEmail } from "../../../src/engine/email/parseEmail.ts"
import { itAnswers } from "../../support/tables.ts"

const canonical = (input: string, options?: EmailSyntaxOptions): string => {
  const result = parseEmail(input, options)
  if (!result.ok) throw new Error(`expected ${JSON.stringify(input)} to be valid, got ${result.reason}`)
  return canonicalAddress(result.email)
}

describe("canonicalAddress", () => {
  it("lower-cases the local part (the domain already is)", () => {
    expect(canonical("John.Doe@Samples.COM")).toBe("john.doe@samples.com")
  })

  itAnswers("removes a +tag: %j → %j", canonical, [
    ["john+newsletter@samples.com", "john@samples.com"],
    ["john+a+b@samples.com", "john@samples.com"],
    ["john+@samples.com", "john@samples.com"]
  ])

  it("keeps a local part that starts with +, which would otherwise become empty", () => {
    expect(canonical("+john@samples.com")).toBe("+john@samples.com")
  })

  it("keeps dots everywhere except on Gmail", () => {
    expect(canonical("j.o.h.n@samples.com")).toBe("j.o.h.n@samples.com")
    expect(canonical("j.o.h.n@gmail.com")).toBe("john@gmail.com")
  })

  it("folds googlemail.com into gmail.com, whatever the case", () => {
    expect(canonical("J.Doe+spam@GoogleMail.com")).toBe("jdoe@gmail.com")
    expect(canonical("jdoe@gmail.com")).toBe("jdoe@gmail.com")
  })

  it("leaves Gmail-lookalike domains alone", () => {
    expect(canonical("j.doe@gmail.co")).toBe("j.doe@gmail.co")
    expect(canonical("j.doe@mail.gmail.com")).toBe("j.doe@mail.gmail.com")
  })

  it("uses NFC and Unicode lower case for international local parts", () => {
    expect(canonical("JO\u0308RG+x@example.de")).toBe("jörg@example.de")
    expect(canonical("ÉLÈVE@ÉCOLE.fr")).toBe("élève@xn--cole-9oa.fr")
  })

  it("uses the ASCII (punycode) domain", () => {
    expect(canonical("a@MÜLLER.de")).toBe("a@xn--mller-kva.de")
    expect(canonical("a@xn--mller-kva.de")).toBe("a@xn--mller-kva.de")
  })

  it("maps the spellings of one person to one identity", () => {
    const spellings = ["Jane.Doe@gmail.com", "janedoe@gmail.com", "jane.doe+uni@googlemail.com", "JANEDOE+x@GMAIL.COM"]
    expect(new Set(spellings.map((s) => canonical(s)))).toEqual(new Set(["janedoe@gmail.com"]))
  })

  it("unquotes a quoted local part that needs no quotes", () => {
    const options = { allowQuotedLocalPart: true }
    expect(canonical('"John+x"@samples.com', options)).toBe("john@samples.com")
    expect(canonical('"J.Doe"@gmail.com', options)).toBe("jdoe@gmail.com")
    expect(canonical('"John Doe+x"@samples.com', options)).toBe('"john doe+x"@samples.com')
    expect(canonical('""@samples.com', options)).toBe('""@samples.com')
  })

  it("keeps IP literals", () => {
    expect(canonical("John@[192.0.2.1]", { allowIpLiteral: true })).toBe("john@[192.0.2.1]")
  })
})
