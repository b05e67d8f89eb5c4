import { describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/keys/apiKeys.ts"
import { maskEmail, redact, redactAddresses, redactApiKeys, redactCredentials } from "../../src/observability/redact.ts"

describe("redacting log text", () => {
  it("shows an address as its domain only", () => {
    expect(maskEmail("jane.doe@ox.ac.uk")).toBe("***@ox.ac.uk")
    expect(redactAddresses("examples.valid[0]: jane.doe@ox.ac.uk is refused", false)).toBe(
      "examples.valid[0]: ***@ox.ac.uk is refused"
    )
    expect(redactAddresses('"a+b@mit.edu", <c@x.org>; d@ünï.de', false)).toBe('"***@mit.edu", <***@x.org>; ***@ünï.de')
    expect(redactAddresses("https://user:secret@hooks.samples.com/x?to=jane@ox.ac.uk", false)).toBe(
      "https://user:***@hooks.samples.com/x?to=***@ox.ac.uk"
    )
  })

  it("leaves addresses whole when logEmails is on, and text without an @ untouched", () => {
    expect(redactAddresses("jane.doe@ox.ac.uk", true)).toBe("jane.doe@ox.ac.uk")
    expect(redactAddresses("no address here", false)).toBe("no address here")
  })

  it("replaces every API key by its prefix, whatever logEmails says", () => {
    const { key } = generateApiKey()
    expect(redactApiKeys(`Bearer ${key} and /offers/${key}/status`)).toBe("Bearer cgk_*** and /offers/cgk_***/status")
    expect(redact(`${key} jane@ox.ac.uk`, true)).toBe("cgk_*** jane@ox.ac.uk")
    expect(redact(`${key} jane@ox.ac.uk`, false)).toBe("cgk_*** ***@ox.ac.uk")
  })

  it("never writes a URL's password, whatever logEmails says", () => {
    expect(redactCredentials("to redis://:s3cret@cache:6379 (prefix x)")).toBe("to redis://:***@cache:6379 (prefix x)")
    expect(redact("postgres://app:p%40ss@db.internal/campusgate failed", true)).toBe(
      "postgres://app:***@db.internal/campusgate failed"
    )
    expect(redactCredentials("redis://cache:6379 and https://example.org/a:b")).toBe(
      "redis://cache:6379 and https://example.org/a:b"
    )
  })
})
