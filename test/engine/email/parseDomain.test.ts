import { describe, expect, it } from "vitest"
import { type EmailFormatReason, parseDomain, parseEmail } from "../../../src/engine/email/parseEmail.ts"

const reasonOf = (input: string): EmailFormatReason | "OK" => {
  const result = parseDomain(input)
  return result.ok ? "OK" : result.reason
}

describe("parseDomain", () => {
  it("returns the ASCII and Unicode forms", () => {
    expect(parseDomain("Samples.COM")).toEqual({
      ok: true,
      domain: "samples.com",
      unicodeDomain: "samples.com",
      isInternational: false
    })
    expect(parseDomain("Uni-Köln.de")).toEqual({
      ok: true,
      domain: "xn--uni-kln-e1a.de",
      unicodeDomain: "uni-köln.de",
      isInternational: true
    })
    expect(parseDomain("xn--mller-kva.de")).toEqual({
      ok: true,
      domain: "xn--mller-kva.de",
      unicodeDomain: "müller.de",
      isInternational: true
    })
  })

  it.each<[unknown, EmailFormatReason]>([
    ["", "EMPTY"],
    [undefined, "EMPTY"],
    [42, "EMPTY"],
    ["  ", "EMPTY"],
    [" samples.com", "LEADING_OR_TRAILING_WHITESPACE"],
    ["samples.com\n", "LEADING_OR_TRAILING_WHITESPACE"],
    ["samples.com.", "DOT_PLACEMENT"],
    [".samples.com", "DOT_PLACEMENT"],
    ["example..com", "DOT_PLACEMENT"],
    ["localhost", "DOMAIN_NEEDS_DOT"],
    ["example.123", "NUMERIC_TLD"],
    ["-samples.com", "INVALID_DOMAIN_LABEL"],
    ["exa_mple.com", "INVALID_DOMAIN"],
    ["john@samples.com", "INVALID_DOMAIN"],
    ["samples.com/path", "INVALID_DOMAIN"],
    ["samples.com:443", "INVALID_DOMAIN"],
    ["exa mple.com", "INVALID_DOMAIN"],
    ["exa(mple).com", "COMMENTS_NOT_ALLOWED"],
    ["exa\u0000mple.com", "CONTROL_CHARACTER"],
    ["[192.0.2.1]", "IP_LITERAL_NOT_ALLOWED"],
    [`${"a".repeat(64)}.com`, "LABEL_TOO_LONG"],
    [`${Array.from({ length: 4 }, () => "a".repeat(63)).join(".")}.com`, "DOMAIN_TOO_LONG"],
    ["b".repeat(2000), "DOMAIN_TOO_LONG"],
    ["xn--zz.de", "INVALID_IDN"]
  ])("%j → %s", (input, reason) => {
    expect(reasonOf(input as string)).toBe(reason)
  })

  it("accepts a 253-character domain, which no address can have", () => {
    const domain = `${Array.from({ length: 3 }, () => "a".repeat(63)).join(".")}.${"b".repeat(61)}`
    expect(domain).toHaveLength(253)
    expect(reasonOf(domain)).toBe("OK")
  })

  it("agrees with the domain half of parseEmail", () => {
    for (const domain of ["samples.com", "MÜLLER.de", "xn--mller-kva.de", "a.b", "example..com", "ex_ample.com"]) {
      const alone = parseDomain(domain)
      const inAddress = parseEmail(`a@${domain}`)
      expect(inAddress.ok).toBe(alone.ok)
      if (alone.ok && inAddress.ok) expect(inAddress.email.domain).toBe(alone.domain)
      if (!alone.ok && !inAddress.ok) expect(inAddress.reason).toBe(alone.reason)
    }
  })
})
