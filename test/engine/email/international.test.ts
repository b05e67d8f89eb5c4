import { describe, expect, it } from "vitest"
import type { EmailFormatReason } from "../../../src/engine/email/parseEmail.ts"
import { itAnswersNamed } from "../../support/tables.ts"
import { reasonOf, valid } from "./emailTesting.ts"

describe("UTF-8 local parts (RFC 6531)", () => {
  it.each(["jürgen", "用户", "δοκιμή", "ñoño1234", "пользователь", "𐐷𤭢", "jean-françois.dupont", "ünïcödé+tag"])(
    "accepts %s",
    (local) => {
      const email = valid(`${local}@samples.com`)
      expect(email.localPart).toBe(local)
      expect(email.isInternational).toBe(false)
      expect(email.address).toBe(`${local}@samples.com`)
    }
  )

  it("normalises the local part to NFC", () => {
    const email = valid("jo\u0308rg@example.de")
    expect(email.localPart).toBe("jörg")
    expect(email.address).toBe("jörg@example.de")
  })

  it("checks the local part again after NFC, which can produce ASCII", () => {
    // U+212A KELVIN SIGN becomes K; U+037E GREEK QUESTION MARK becomes ";" which atext excludes.
    expect(valid("\u212a@samples.com").localPart).toBe("K")
    expect(reasonOf("a\u037eb@samples.com")).toBe("INVALID_LOCAL_PART")
  })

  itAnswersNamed("rejects a %s", (local: string) => reasonOf(`${local}@samples.com`), {
    "zero-width space": ["a\u200bb", "INVALID_LOCAL_PART"],
    "zero-width joiner": ["\u{1f469}\u200d\u{1f4bb}", "INVALID_LOCAL_PART"],
    "right-to-left override": ["a\u202eb", "INVALID_LOCAL_PART"],
    "soft hyphen": ["a\u00adb", "INVALID_LOCAL_PART"],
    "no-break space": ["a\u00a0b", "INVALID_LOCAL_PART"],
    "ideographic space": ["a\u3000b", "INVALID_LOCAL_PART"],
    "line separator": ["a\u2028b", "INVALID_LOCAL_PART"],
    "private use": ["a\ue000b", "INVALID_LOCAL_PART"],
    noncharacter: ["a\ufffeb", "INVALID_LOCAL_PART"],
    unassigned: ["a\u0378b", "INVALID_LOCAL_PART"],
    "tag character": ["a\u{e0001}b", "INVALID_LOCAL_PART"],
    "lone high surrogate": ["a\ud800b", "INVALID_LOCAL_PART"],
    "lone low surrogate": ["a\udc00", "INVALID_LOCAL_PART"],
    "C1 control": ["a\u0090b", "CONTROL_CHARACTER"],
    "next line": ["a\u0085b", "CONTROL_CHARACTER"],
    "ASCII punctuation next to Unicode": ["ü:b", "INVALID_LOCAL_PART"],
    "dots next to Unicode": ["ü..b", "DOT_PLACEMENT"]
  })
})

describe("internationalised domains (UTS-46 → punycode)", () => {
  it.each<[string, string]>([
    ["müller.de", "xn--mller-kva.de"],
    ["MÜLLER.DE", "xn--mller-kva.de"],
    ["bücher.samples", "xn--bcher-kva.samples"],
    ["bücher\u3002samples", "xn--bcher-kva.samples"],
    ["ｂüｃher．samples", "xn--bcher-kva.samples"],
    ["faß.de", "xn--fa-hia.de"],
    ["例え.テスト", "xn--r8jz45g.xn--zckzah"],
    ["παράδειγμα.δοκιμή", "xn--hxajbheg2az3al.xn--jxalpdlp"],
    ["uni-köln.de", "xn--uni-kln-e1a.de"],
    ["😆.de", "xn--k28h.de"]
  ])("%s → %s", (unicode, ascii) => {
    const email = valid(`student@${unicode}`)
    expect(email.domain).toBe(ascii)
    expect(email.address).toBe(`student@${ascii}`)
    expect(email.isInternational).toBe(true)
    expect(email.isIpLiteral).toBe(false)
  })

  it("gives the Unicode form for display", () => {
    expect(valid("a@MÜLLER.de").unicodeDomain).toBe("müller.de")
    expect(valid("a@bücher\u3002samples").unicodeDomain).toBe("bücher.samples")
    expect(valid("伊昭傑@郵件.商務")).toEqual({
      localPart: "伊昭傑",
      domain: "xn--5nqv22n.xn--lhr59c",
      unicodeDomain: "郵件.商務",
      isInternational: true,
      isIpLiteral: false,
      address: "伊昭傑@xn--5nqv22n.xn--lhr59c"
    })
  })

  it.each<[string, EmailFormatReason]>([
    ["müller.de.", "DOT_PLACEMENT"],
    ["müller.de\u3002", "DOT_PLACEMENT"],
    ["müller..de", "DOT_PLACEMENT"],
    [".müller.de", "DOT_PLACEMENT"],
    ["-müller.de", "INVALID_DOMAIN_LABEL"],
    ["müller-.de", "INVALID_DOMAIN_LABEL"],
    ["müller", "DOMAIN_NEEDS_DOT"],
    ["müller.123", "NUMERIC_TLD"],
    ["mül ler.de", "INVALID_DOMAIN"],
    ["mül\u00a0ler.de", "INVALID_DOMAIN"],
    ["mül_ler.de", "INVALID_DOMAIN"],
    ["mül%6cer.de", "INVALID_DOMAIN"],
    ["müller.de/path", "INVALID_DOMAIN"],
    ["mül\u200bler.de", "INVALID_DOMAIN"],
    ["mül\u00adler.de", "INVALID_DOMAIN"],
    ["mül(ler).de", "COMMENTS_NOT_ALLOWED"],
    ["mül\u0085ler.de", "CONTROL_CHARACTER"],
    ["mü\ud800ller.de", "INVALID_IDN"],
    ["ü\u200c.de", "INVALID_IDN"],
    ["١٢٣.com", "INVALID_IDN"]
  ])("rejects %j with %s", (domain, reason) => {
    expect(reasonOf(`a@${domain}`)).toBe(reason)
  })
})

describe("xn-- labels (A-labels) typed in ASCII", () => {
  it("accepts valid A-labels in any case and decodes them for display", () => {
    for (const domain of ["xn--mller-kva.de", "XN--MLLER-KVA.DE", "Xn--Mller-Kva.De"]) {
      const email = valid(`a@${domain}`)
      expect(email.domain).toBe("xn--mller-kva.de")
      expect(email.unicodeDomain).toBe("müller.de")
      expect(email.isInternational).toBe(true)
    }
    expect(valid("a@xn--hxajbheg2az3al.xn--jxalpdlp").unicodeDomain).toBe("παράδειγμα.δοκιμή")
  })

  it("treats xn-- as ordinary text in the local part", () => {
    expect(valid("xn--test@samples.com").localPart).toBe("xn--test")
  })

  itAnswersNamed("rejects an A-label with %s", (domain: string) => reasonOf(`a@${domain}`), {
    "truncated punycode": ["xn--zz.de", "INVALID_IDN"],
    "nothing after the prefix": ["xn--.de", "INVALID_DOMAIN_LABEL"],
    "overflowing punycode": ["xn--99999999999.de", "INVALID_IDN"],
    "a control character": ["xn--a.de", "INVALID_IDN"],
    "only ASCII": ["xn--ab-.de", "INVALID_DOMAIN_LABEL"],
    "an upper-case letter": ["xn--wca.de", "INVALID_IDN"],
    "text that is not NFC": ["xn--u-ccb.de", "INVALID_IDN"],
    "a hidden zero-width space": ["xn--abc-6m0a.de", "INVALID_IDN"],
    "a hidden soft hyphen": ["xn--kba2n.de", "INVALID_IDN"],
    "a hidden full stop": ["xn--ab-r13a.de", "INVALID_IDN"],
    "a leading hyphen": ["xn----eha.de", "INVALID_DOMAIN_LABEL"],
    "a trailing hyphen": ["xn----dha.de", "INVALID_DOMAIN_LABEL"],
    "a bad top-level label": ["müller.xn--zz", "INVALID_IDN"],
    "a bad label after a good one": ["xn--bcher-kva.xn--zz.de", "INVALID_IDN"]
  })
})
