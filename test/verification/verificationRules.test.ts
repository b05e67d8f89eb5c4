/**
 * The one rule for where a verification's result may go (`redirectRefusal`):
 * a link's redirect and the hosted page's `redirect_uri` by their origin,
 * and a popup's opener, which must be an origin alone since the result is
 * posted to exactly it.
 */
import { describe, expect, it } from "vitest"
import type { ResolvedPolicy } from "../../src/domain/VerificationPolicy.ts"
import { redirectRefusal } from "../../src/verification/verificationRules.ts"

const policy = (redirectOrigins: ReadonlyArray<string>) => ({ redirectOrigins }) as ResolvedPolicy
const shop = policy(["https://shop.example", "http://localhost:3000"])

describe("redirectRefusal", () => {
  it("lets a URL go to an allowed origin, whatever its path", () => {
    for (const url of ["https://shop.example", "https://shop.example/cart?x=1", "http://localhost:3000/back"])
      expect(redirectRefusal(url, shop), url).toBeUndefined()
  })

  it("refuses another origin, a lookalike, another scheme or port, and what is no URL", () => {
    for (const url of [
      "https://evil.example/",
      "https://shop.example.evil.example/",
      "http://shop.example/",
      "https://shop.example:8443/",
      "http://localhost:3001/",
      "/relative",
      "javascript:alert(1)",
      "null"
    ])
      expect(redirectRefusal(url, shop), url).toBe("redirects go to https://shop.example, http://localhost:3000 only")
    expect(redirectRefusal("https://shop.example/", policy([]))).toBe(
      "this offer allows no redirects (verification.redirectOrigins)"
    )
  })

  it("takes an opener as an origin alone, by the same list", () => {
    expect(redirectRefusal("https://shop.example", shop, { exactOrigin: true })).toBeUndefined()
    expect(redirectRefusal("http://localhost:3000", shop, { exactOrigin: true })).toBeUndefined()
    for (const opener of ["https://shop.example/", "https://shop.example/cart", "HTTPS://shop.example", "null"])
      expect(redirectRefusal(opener, shop, { exactOrigin: true }), opener).toBe(
        "give an origin alone, such as https://shop.example"
      )
    expect(redirectRefusal("https://evil.example", shop, { exactOrigin: true })).toBe(
      "redirects go to https://shop.example, http://localhost:3000 only"
    )
  })
})
