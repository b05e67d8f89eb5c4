import { describe, expect, it } from "vitest"
import { parseDomain, parseEmail } from "../../../src/engine/email/parseEmail.ts"

describe("special-use and reserved names", () => {
  it.each([
    "jane@example.com",
    "jane@mail.example.org",
    "jane@EXAMPLE.NET",
    "jane@x.example",
    "jane@printer.local",
    "jane@box.localhost",
    "jane@site.test",
    "jane@nothing.invalid",
    "jane@abc.onion",
    "jane@router.home.arpa",
    "jane@svc.internal",
    "jane@x.alt"
  ])("rejects %s with its own reason by default", (address) => {
    expect(parseEmail(address)).toMatchObject({ ok: false, reason: "SPECIAL_USE_DOMAIN" })
  })

  it("accepts them when the option allows, and leaves look-alikes alone", () => {
    expect(parseEmail("jane@example.com", { allowSpecialUseDomains: true }).ok).toBe(true)
    for (const address of ["jane@example.co.uk", "jane@myexample.com", "jane@testing.com", "jane@local.edu"]) {
      expect(parseEmail(address).ok).toBe(true)
    }
  })

  it("applies to bare domains too", () => {
    expect(parseDomain("example.com")).toMatchObject({ ok: false, reason: "SPECIAL_USE_DOMAIN" })
    expect(parseDomain("ox.ac.uk").ok).toBe(true)
  })
})

describe("top-level label form", () => {
  it.each(["jane@mit.edu1", "jane@mit.1edu", "jane@x.c0m1"])("rejects %s", (address) => {
    expect(parseEmail(address)).toMatchObject({ ok: false, reason: "INVALID_TLD" })
  })

  it("keeps NUMERIC_TLD for an all-digit label and accepts letters, inner digits and A-labels", () => {
    expect(parseEmail("jane@iana.123")).toMatchObject({ ok: false, reason: "NUMERIC_TLD" })
    for (const address of ["jane@iana.co-uk", "jane@x.m2a", "jane@x.xn--p1ai", "jane@пример.рф"]) {
      expect(parseEmail(address).ok).toBe(true)
    }
  })
})
