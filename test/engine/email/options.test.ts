import { describe, expect, it } from "vitest"
import { itAnswers } from "../../support/tables.ts"
import { reasonOf, valid } from "./emailTesting.ts"

const QUOTED = { allowQuotedLocalPart: true } as const
const LITERAL = { allowIpLiteral: true } as const

describe("allowQuotedLocalPart", () => {
  it.each([
    '"john"@samples.com',
    '"john doe"@samples.com',
    '""@samples.com',
    '"a@b"@samples.com',
    '"(not a comment)"@samples.com',
    '"john..doe"@samples.com',
    '".john."@samples.com',
    '"\\a"@samples.com',
    '"\\""@samples.com',
    '"\\\\"@samples.com',
    '"a\\ b"@samples.com',
    '"jürgen müller"@example.de'
  ])("accepts %s and keeps it as given", (input) => {
    const email = valid(input, QUOTED)
    expect(email.address).toBe(input)
    expect(email.localPart).toBe(input.slice(0, input.lastIndexOf("@")))
  })

  it("does not change how unquoted addresses are parsed", () => {
    expect(valid("john@samples.com", QUOTED).localPart).toBe("john")
    expect(reasonOf('jo"hn"@samples.com', QUOTED)).toBe("INVALID_LOCAL_PART")
  })

  itAnswers("%j → %s", (input: string) => reasonOf(input, QUOTED), [
    ['"john@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john\\"@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john\\', "MISSING_AT"],
    ['"""@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john"doe@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john".doe@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john"."doe"@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john""doe"@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"te\\©st"@samples.com', "INVALID_QUOTED_LOCAL_PART"],
    ['"john\u0000"@samples.com', "CONTROL_CHARACTER"],
    ['"john\\\u0000"@samples.com', "CONTROL_CHARACTER"],
    ['"john\r\n doe"@samples.com', "CONTROL_CHARACTER"],
    ['"john\tdoe"@samples.com', "CONTROL_CHARACTER"],
    ['"\u007f"@samples.com', "CONTROL_CHARACTER"],
    ['"\u0080"@samples.com', "CONTROL_CHARACTER"],
    ['"a\u200bb"@samples.com', "INVALID_LOCAL_PART"],
    ['"\ud800"@samples.com', "INVALID_LOCAL_PART"],
    ['"john"@', "MISSING_DOMAIN"],
    ['"john"@localhost', "DOMAIN_NEEDS_DOT"]
  ])

  it("counts the quotes and escapes towards the 64-octet limit", () => {
    expect(reasonOf(`"${"a".repeat(62)}"@samples.com`, QUOTED)).toBe("OK")
    expect(reasonOf(`"${"a".repeat(63)}"@samples.com`, QUOTED)).toBe("LOCAL_PART_TOO_LONG")
    expect(reasonOf(`"${"a".repeat(60)}\\b"@samples.com`, QUOTED)).toBe("OK")
    expect(reasonOf(`"${"a".repeat(61)}\\b"@samples.com`, QUOTED)).toBe("LOCAL_PART_TOO_LONG")
    expect(reasonOf(`"${"é".repeat(31)}"@samples.com`, QUOTED)).toBe("OK")
    expect(reasonOf(`"${"é".repeat(32)}"@samples.com`, QUOTED)).toBe("LOCAL_PART_TOO_LONG")
  })

  it("normalises a quoted Unicode local part to NFC", () => {
    expect(valid('"jo\u0308rg m"@example.de', QUOTED).localPart).toBe('"jörg m"')
  })
})

describe("allowIpLiteral", () => {
  it.each<[string, string]>([
    ["[192.0.2.1]", "[192.0.2.1]"],
    ["[255.255.255.255]", "[255.255.255.255]"],
    ["[0.0.0.0]", "[0.0.0.0]"],
    ["[010.001.000.009]", "[10.1.0.9]"],
    ["[IPv6:2001:db8::1]", "[IPv6:2001:db8::1]"],
    ["[ipv6:2001:DB8::1]", "[IPv6:2001:db8::1]"],
    ["[IPv6:1111:2222:3333:4444:5555:6666:7777:8888]", "[IPv6:1111:2222:3333:4444:5555:6666:7777:8888]"],
    ["[IPv6:1111:2222:3333:4444:5555::8888]", "[IPv6:1111:2222:3333:4444:5555::8888]"],
    ["[IPv6:::3333:4444:5555:6666:7777:8888]", "[IPv6:::3333:4444:5555:6666:7777:8888]"],
    ["[IPv6:1111:2222:3333:4444:5555:6666::]", "[IPv6:1111:2222:3333:4444:5555:6666::]"],
    ["[IPv6:::]", "[IPv6:::]"],
    ["[IPv6:::1]", "[IPv6:::1]"],
    ["[IPv6:1111:2222:3333:4444:5555:6666:192.0.2.1]", "[IPv6:1111:2222:3333:4444:5555:6666:192.0.2.1]"],
    ["[IPv6:1111:2222:3333:4444::192.0.2.1]", "[IPv6:1111:2222:3333:4444::192.0.2.1]"],
    ["[IPv6:::ffff:192.0.2.1]", "[IPv6:::ffff:192.0.2.1]"],
    ["[IPv6:::192.0.2.1]", "[IPv6:::192.0.2.1]"]
  ])("accepts %s as %s", (literal, normalised) => {
    const email = valid(`john@${literal}`, LITERAL)
    expect(email.domain).toBe(normalised)
    expect(email.unicodeDomain).toBe(normalised)
    expect(email.isIpLiteral).toBe(true)
    expect(email.isInternational).toBe(false)
    expect(email.address).toBe(`john@${normalised}`)
  })

  it.each([
    "[192.0.2]",
    "[192.0.2.1.5]",
    "[192.0.2.256]",
    "[192.0.2.1000]",
    "[192.0..1]",
    "[192.0.2.]",
    "[.192.0.2.1]",
    "[192.0.2.1 ]",
    "[-1.0.0.0]",
    "[]",
    "[",
    "[192.0.2.1",
    "[192.0.2.1]x",
    "[192.0.2.1].com",
    "[1111:2222:3333:4444:5555:6666:7777:8888]",
    "[IPv6:1111:2222:3333:4444:5555:6666:7777]",
    "[IPv6:1111:2222:3333:4444:5555:6666:7777:8888:9999]",
    "[IPv6:1111:2222:3333:4444:5555:6666:7777:888G]",
    "[IPv6:11111::1]",
    "[IPv6:1111:2222:3333:4444:5555:6666::8888]",
    "[IPv6:1111:2222:3333:4444:5555:6666::7777:8888]",
    "[IPv6::3333:4444:5555:6666:7777:8888]",
    "[IPv6:1111::4444:5555::8888]",
    "[IPv6:1::2:]",
    "[IPv6::]",
    "[IPv6::::]",
    "[IPv6:]",
    "[IPv6:1111:2222:3333:4444:5555:192.0.2.1]",
    "[IPv6:1111:2222:3333:4444:5555:6666:7777:192.0.2.1]",
    "[IPv6:1111:2222:3333:4444:5555:6666::192.0.2.1]",
    "[IPv6:1111:2222:3333:4444:::192.0.2.1]",
    "[IPv6::192.0.2.1]",
    "[IPv6:::192.0.2]",
    "[IPv6:192.0.2.1::]",
    "[RFC-5322-domain-literal]",
    "[tag:content]",
    "[192.0.2.1\u0000]",
    "[\u0661.0.0.0]"
  ])("rejects %j as INVALID_IP_LITERAL", (literal) => {
    expect(reasonOf(`john@${literal}`, LITERAL)).toBe("INVALID_IP_LITERAL")
  })

  it("still applies the address length limit", () => {
    expect(reasonOf(`${"a".repeat(64)}@[IPv6:1111:2222:3333:4444:5555:6666:7777:8888]`, LITERAL)).toBe("OK")
  })

  it("works together with quoted local parts", () => {
    const email = valid('"john doe"@[IPv6:::1]', { allowQuotedLocalPart: true, allowIpLiteral: true })
    expect(email.address).toBe('"john doe"@[IPv6:::1]')
  })
})
