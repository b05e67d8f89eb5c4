import { describe, expect, it } from "vitest"
import {
  EMAIL_FORMAT_REASONS,
  type EmailSyntaxOptions,
  isFormatFailure,
  parseAddress,
  parseEmail,
  WIDEST_SYNTAX
} from "../../../src/engine/email/parseEmail.ts"
import { itAnswers, itAnswersAlike } from "../../support/tables.ts"
import { reasonOf, valid } from "./emailTesting.ts"

describe("parseEmail: plain addresses", () => {
  it.each([
    "a@samples.com",
    "first.last@samples.com",
    "x@a.b.c.d.samples.org",
    "1234@samples.com",
    "user@123.samples",
    "o'neil@example.ie",
    "a+tag@samples.com",
    "!#$%&'*+-/=?^_`{|}~@samples.com",
    "xn--not-really@samples.com",
    "user@mason-dixon.com",
    "user@c--n.com",
    "user@x.y",
    "user@example.co-uk"
  ])("accepts %s", (input) => {
    expect(valid(input).address).toBe(input)
  })

  it("returns the parts of a plain address without copying the input", () => {
    const input = "Ada.Lovelace@samples.com"
    expect(valid(input)).toEqual({
      localPart: "Ada.Lovelace",
      domain: "samples.com",
      unicodeDomain: "samples.com",
      isInternational: false,
      isIpLiteral: false,
      address: input
    })
  })

  it("lower-cases the domain but keeps the local part as given", () => {
    const email = valid("Ada.Lovelace@Samples.COM")
    expect(email.localPart).toBe("Ada.Lovelace")
    expect(email.domain).toBe("samples.com")
    expect(email.unicodeDomain).toBe("samples.com")
    expect(email.address).toBe("Ada.Lovelace@samples.com")
  })
})

describe("parseEmail: structure", () => {
  itAnswers("%j → %s", reasonOf, [
    ["", "EMPTY"],
    ["   ", "EMPTY"],
    ["\t\r\n", "EMPTY"],
    ["john.doe", "MISSING_AT"],
    ["john..doe", "MISSING_AT"],
    ["john doe", "MISSING_AT"],
    ["@samples.com", "MISSING_LOCAL_PART"],
    ["@", "MISSING_LOCAL_PART"],
    ["john@", "MISSING_DOMAIN"],
    ["a@b@samples.com", "INVALID_LOCAL_PART"],
    ["a@samples.com@samples.com", "INVALID_LOCAL_PART"],
    ["a\\@b@samples.com", "INVALID_LOCAL_PART"]
  ])

  it("treats non-strings as EMPTY instead of throwing", () => {
    for (const input of [undefined, null, 42, {}, [], Symbol("x"), () => "a@b.com"]) {
      const result = parseEmail(input as unknown as string)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.reason).toBe("EMPTY")
    }
  })

  it("answers as parseAddress does, the email wrapped (parseAddress: the per-email path's form)", () => {
    const inputs = [
      "a@samples.com",
      "Ada@Samples.COM",
      "a@müller.de",
      '"a b"@samples.com',
      "a@[192.0.2.1]",
      "a@",
      "",
      "a@b"
    ]
    for (const options of [undefined, WIDEST_SYNTAX]) {
      for (const input of inputs) {
        const address = parseAddress(input, options)
        const parsed = parseEmail(input, options)
        expect(parsed).toEqual(isFormatFailure(address) ? address : { ok: true, email: address })
        expect(isFormatFailure(address)).toBe(!parsed.ok)
      }
    }
  })

  it("ignores an options object that is not one", () => {
    expect(reasonOf("a@samples.com", null as unknown as EmailSyntaxOptions)).toBe("OK")
    expect(reasonOf('"a"@samples.com', null as unknown as EmailSyntaxOptions)).toBe("QUOTED_LOCAL_PART_NOT_ALLOWED")
  })
})

describe("parseEmail: white space is never trimmed", () => {
  itAnswersAlike("%j → LEADING_OR_TRAILING_WHITESPACE", reasonOf, "LEADING_OR_TRAILING_WHITESPACE", [
    " a@samples.com",
    "a@samples.com ",
    "\ta@samples.com",
    "a@samples.com\n",
    "a@samples.com\r\n",
    "\r\n a@samples.com",
    "a@samples.com\r\n ",
    "\u00a0a@samples.com",
    "a@samples.com\u3000",
    "\ufeffa@samples.com",
    "a@samples.com\u200b"
  ])

  itAnswers("inner white space or folding: %j → %s", reasonOf, [
    ["john doe@samples.com", "INVALID_LOCAL_PART"],
    ["john . doe@samples.com", "INVALID_LOCAL_PART"],
    ["john @samples.com", "INVALID_LOCAL_PART"],
    ["john@ samples.com", "INVALID_DOMAIN"],
    ["john@example. com", "INVALID_DOMAIN"],
    ["john\r\n doe@samples.com", "CONTROL_CHARACTER"],
    ["john@example\r\n .com", "CONTROL_CHARACTER"],
    ["john\tdoe@samples.com", "CONTROL_CHARACTER"],
    ["john\u00a0doe@samples.com", "INVALID_LOCAL_PART"],
    ["john@exa\u00a0mple.com", "INVALID_DOMAIN"]
  ])
})

describe("parseEmail: dots", () => {
  itAnswers("%j → %s", reasonOf, [
    [".john@samples.com", "DOT_PLACEMENT"],
    ["john.@samples.com", "DOT_PLACEMENT"],
    ["jo..hn@samples.com", "DOT_PLACEMENT"],
    ["john@.samples.com", "DOT_PLACEMENT"],
    ["john@example..com", "DOT_PLACEMENT"],
    ["john@samples.com.", "DOT_PLACEMENT"],
    ["john@.", "DOT_PLACEMENT"],
    ["john@..", "DOT_PLACEMENT"]
  ])
})

describe("parseEmail: characters", () => {
  itAnswers("%j → %s", reasonOf, [
    ["a,b@samples.com", "INVALID_LOCAL_PART"],
    ["a:b@samples.com", "INVALID_LOCAL_PART"],
    ["a;b@samples.com", "INVALID_LOCAL_PART"],
    ["a<b>@samples.com", "INVALID_LOCAL_PART"],
    ["a[b]@samples.com", "INVALID_LOCAL_PART"],
    ['a"b"@samples.com', "INVALID_LOCAL_PART"],
    ["a@exam_ple.com", "INVALID_DOMAIN"],
    ["a@example+.com", "INVALID_DOMAIN"],
    ["a@samples.com/path", "INVALID_DOMAIN"],
    ["a@samples.com:8080", "INVALID_DOMAIN"],
    ["a@samples.com#", "INVALID_DOMAIN"],
    ["a@exa%6dple.com", "INVALID_DOMAIN"],
    ["a@<example>.com", "INVALID_DOMAIN"],
    ["a@a[1.2.3.4]", "INVALID_DOMAIN"],
    ["a@-samples.com", "INVALID_DOMAIN_LABEL"],
    ["a@example-.com", "INVALID_DOMAIN_LABEL"],
    ["a@samples.com-", "INVALID_DOMAIN_LABEL"],
    ["a@example.-com", "INVALID_DOMAIN_LABEL"]
  ])

  itAnswersAlike("%j → CONTROL_CHARACTER", reasonOf, "CONTROL_CHARACTER", [
    "\u0000a@samples.com",
    "a\u0000@samples.com",
    "a\u0007b@samples.com",
    "\u007f@samples.com",
    "a@exa\u0007mple.com",
    "a@example\u007f.com",
    "a\u0085b@samples.com",
    "a\u009fb@samples.com",
    "a@exa\u0085mple.de"
  ])
})

describe("parseEmail: comments", () => {
  itAnswersAlike("%j → COMMENTS_NOT_ALLOWED", reasonOf, "COMMENTS_NOT_ALLOWED", [
    "(comment)john@samples.com",
    "john(comment)@samples.com",
    "jo(comment)hn@samples.com",
    "john.(comment)doe@samples.com",
    "john@(comment)samples.com",
    "john@samples.com(comment)",
    "john@example.(comment)com",
    "((nested)comment)john@samples.com",
    "(unclosed john@samples.com",
    "john@samples.com(\\"
  ])
})

describe("parseEmail: domain shape", () => {
  itAnswers("%j → %s", reasonOf, [
    ["john@localhost", "DOMAIN_NEEDS_DOT"],
    ["john@io", "DOMAIN_NEEDS_DOT"],
    ["john@xn--unup4y", "DOMAIN_NEEDS_DOT"],
    ["john@example.123", "NUMERIC_TLD"],
    ["john@1.2.3.4", "NUMERIC_TLD"],
    ["john@255.255.255.255", "NUMERIC_TLD"]
  ])

  it("accepts numeric labels other than the last and a top-level label with inner digits, not at its ends", () => {
    expect(valid("john@123.456.samples").domain).toBe("123.456.samples")
    expect(valid("john@samples.m2a").domain).toBe("samples.m2a")
    expect(reasonOf("john@samples.a1")).toBe("INVALID_TLD")
    expect(reasonOf("john@samples.1a")).toBe("INVALID_TLD")
  })
})

describe("parseEmail: quoted local parts and IP literals are off by default", () => {
  itAnswers("%j → %s", reasonOf, [
    ['"john"@samples.com', "QUOTED_LOCAL_PART_NOT_ALLOWED"],
    ['"john doe"@samples.com', "QUOTED_LOCAL_PART_NOT_ALLOWED"],
    ['""@samples.com', "QUOTED_LOCAL_PART_NOT_ALLOWED"],
    ['"john@samples.com', "INVALID_LOCAL_PART"],
    ['"john".doe@samples.com', "INVALID_LOCAL_PART"],
    ["john@[192.0.2.1]", "IP_LITERAL_NOT_ALLOWED"],
    ["john@[IPv6:2001:db8::1]", "IP_LITERAL_NOT_ALLOWED"],
    ["john@[not a literal", "IP_LITERAL_NOT_ALLOWED"]
  ])
})

describe("parseEmail: messages", () => {
  it("gives one plain sentence for every failure", () => {
    for (const input of ["", " a@b.com", "a", "@b.com", "a@", "a..b@c.de", "a@b", "a@b.1", "(a)b@c.de"]) {
      const result = parseEmail(input)
      expect(result.ok).toBe(false)
      if (result.ok) continue
      expect(EMAIL_FORMAT_REASONS).toContain(result.reason)
      expect(result.message).toMatch(/^[A-Z][^\n]*\.$/)
    }
  })
})
