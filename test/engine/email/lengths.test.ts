import { describe, expect, it } from "vitest"
import { parseEmail } from "../../../src/engine/email/parseEmail.ts"
import { reasonOf } from "./emailTesting.ts"

/** `count` labels of `size` letters joined by dots, e.g. labels(2, 3) = "aaa.aaa". */
const labels = (count: number, size: number): string => Array.from({ length: count }, () => "a".repeat(size)).join(".")

/** An ASCII domain of exactly `length` characters (length >= 5) made of 63-character labels and a `.com` end. */
const domainOf = (length: number): string => {
  let rest = length - 4
  const parts: string[] = []
  while (rest > 0) {
    const size = Math.min(63, rest - (parts.length > 0 ? 1 : 0))
    if (size <= 0) break
    parts.push("d".repeat(size))
    rest -= size + (parts.length > 1 ? 1 : 0)
  }
  const domain = `${parts.join(".")}.com`
  if (domain.length !== length) throw new Error(`domainOf(${length}) built ${domain.length}`)
  return domain
}

describe("local part: at most 64 octets", () => {
  it("accepts 64 ASCII characters and rejects 65", () => {
    expect(reasonOf(`${"a".repeat(64)}@samples.com`)).toBe("OK")
    expect(reasonOf(`${"a".repeat(65)}@samples.com`)).toBe("LOCAL_PART_TOO_LONG")
  })

  it("counts UTF-8 octets, not characters", () => {
    expect(reasonOf(`${"é".repeat(32)}@samples.com`)).toBe("OK")
    expect(reasonOf(`${"é".repeat(33)}@samples.com`)).toBe("LOCAL_PART_TOO_LONG")
    expect(reasonOf(`${"用".repeat(21)}a@samples.com`)).toBe("OK")
    expect(reasonOf(`${"用".repeat(22)}@samples.com`)).toBe("LOCAL_PART_TOO_LONG")
    expect(reasonOf(`${"😆".repeat(16)}@samples.com`)).toBe("OK")
    expect(reasonOf(`${"😆".repeat(17)}@samples.com`)).toBe("LOCAL_PART_TOO_LONG")
  })

  it("measures the NFC form", () => {
    // 32 × (e + U+0301 COMBINING ACUTE) is 96 octets as typed but 64 once composed to é.
    const decomposed = "e\u0301".repeat(32)
    const result = parseEmail(`${decomposed}@samples.com`)
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.email.localPart).toBe("é".repeat(32))
    expect(reasonOf(`${"e\u0301".repeat(33)}@samples.com`)).toBe("LOCAL_PART_TOO_LONG")
  })
})

describe("domain labels: at most 63 characters after IDNA", () => {
  it("accepts a 63-character label and rejects 64", () => {
    expect(reasonOf(`a@${"b".repeat(63)}.com`)).toBe("OK")
    expect(reasonOf(`a@${"b".repeat(64)}.com`)).toBe("LABEL_TOO_LONG")
    expect(reasonOf(`a@example.${"c".repeat(64)}`)).toBe("LABEL_TOO_LONG")
    expect(reasonOf(`a@${"b".repeat(64)}`)).toBe("LABEL_TOO_LONG")
  })

  it("measures an internationalised label by its A-label", () => {
    // ü + 55 letters is 56 characters and encodes to a 63-character A-label; one more letter gives 64.
    expect(reasonOf(`a@ü${"a".repeat(55)}.de`)).toBe("OK")
    expect(reasonOf(`a@ü${"a".repeat(56)}.de`)).toBe("LABEL_TOO_LONG")
  })
})

describe("domain: at most 253 characters after IDNA", () => {
  it("rejects a 254-character domain", () => {
    expect(domainOf(254)).toHaveLength(254)
    expect(reasonOf(`a@${domainOf(254)}`)).toBe("DOMAIN_TOO_LONG")
  })

  it("lets the address limit catch a 253-character domain, since a local part needs at least 1 octet", () => {
    expect(reasonOf(`a@${domainOf(253)}`)).toBe("ADDRESS_TOO_LONG")
  })

  it("accepts a domain of many one-letter labels up to the limit", () => {
    const domain = `${labels(125, 1)}.ab` // 249 + 3 = 252 characters
    expect(domain).toHaveLength(252)
    expect(reasonOf(`a@${domain}`)).toBe("OK")
  })
})

describe("address: at most 254 octets after IDNA and UTF-8", () => {
  it("accepts 254 and rejects 255 octets", () => {
    expect(reasonOf(`${"a".repeat(64)}@${domainOf(189)}`)).toBe("OK")
    expect(reasonOf(`${"a".repeat(64)}@${domainOf(190)}`)).toBe("ADDRESS_TOO_LONG")
  })

  it("counts a UTF-8 local part in octets", () => {
    // 32 é are 32 characters but 64 octets.
    expect(reasonOf(`${"é".repeat(32)}@${domainOf(189)}`)).toBe("OK")
    expect(reasonOf(`${"é".repeat(32)}@${domainOf(190)}`)).toBe("ADDRESS_TOO_LONG")
  })

  it("counts an internationalised domain in its ASCII form", () => {
    // Each 4-character label "üabc" becomes the 11-character A-label "xn--abc-goa".
    const unicodeDomain = `${Array.from({ length: 17 }, () => "üabc").join(".")}.de`
    expect(unicodeDomain.length).toBeLessThan(100)
    const result = parseEmail(`${"a".repeat(60)}@${unicodeDomain}`)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.reason).toBe("ADDRESS_TOO_LONG")
    expect(reasonOf(`${"a".repeat(30)}@${unicodeDomain}`)).toBe("OK")
  })

  it("rejects absurdly long input before looking at it", () => {
    expect(reasonOf(`${"a".repeat(2000)}@samples.com`)).toBe("ADDRESS_TOO_LONG")
    expect(reasonOf(`a@${"b".repeat(5000)}.com`)).toBe("ADDRESS_TOO_LONG")
  })
})
