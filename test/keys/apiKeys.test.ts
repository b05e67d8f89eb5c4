import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ApiKeyId, type ApiKeyRecord } from "../../src/domain/ApiKey.ts"
import {
  API_KEY_LENGTH,
  ApiKeyIndex,
  generateApiKey,
  hashApiKey,
  InvalidExpiry,
  keyStatus,
  parseExpiry,
  verifyApiKey
} from "../../src/keys/apiKeys.ts"

const NOW = Date.parse("2026-06-01T12:00:00Z")

const record = (key: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord =>
  ({
    id: generateApiKey().id,
    team: "acme",
    scopes: ["offers:read"],
    hash: hashApiKey(key),
    createdAt: "2026-01-01T00:00:00Z",
    ...extra
  }) as ApiKeyRecord

describe("generateApiKey", () => {
  it("makes cgk_ keys of 43 base64url characters and valid key ids", () => {
    const { id, key } = generateApiKey()
    expect(key).toMatch(/^cgk_[A-Za-z0-9_-]{43}$/)
    expect(key).toHaveLength(API_KEY_LENGTH)
    expect(API_KEY_LENGTH).toBe(47)
    expect(id).toMatch(/^key_[a-z2-7]{12}$/)
    expect(Schema.is(ApiKeyId)(id)).toBe(true)
  })

  it("never repeats a key or an id over many draws, and uses the whole alphabet", () => {
    const draws = Array.from({ length: 5000 }, generateApiKey)
    expect(new Set(draws.map((d) => d.key)).size).toBe(draws.length)
    expect(new Set(draws.map((d) => d.id)).size).toBe(draws.length)
    const keyChars = new Set(draws.flatMap((d) => [...d.key.slice(4)]))
    expect(keyChars.size).toBe(64)
    const idChars = new Set(draws.flatMap((d) => [...d.id.slice(4)]))
    expect(idChars.size).toBe(32)
  })

  it("decodes to 32 random bytes", () => {
    const bytes = Buffer.from(generateApiKey().key.slice(4), "base64url")
    expect(bytes).toHaveLength(32)
  })
})

describe("hashApiKey", () => {
  it("is sha256: and the hex digest", () => {
    expect(hashApiKey("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    const { key } = generateApiKey()
    expect(hashApiKey(key)).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(hashApiKey(key)).not.toContain(key)
  })
})

describe("verifyApiKey", () => {
  const active = generateApiKey().key
  const revoked = generateApiKey().key
  const expired = generateApiKey().key
  const future = generateApiKey().key
  const records = [
    record(active),
    record(revoked, { revokedAt: "2026-05-01T00:00:00Z" }),
    record(expired, { expiresAt: "2026-06-01T12:00:00Z" }),
    record(future, { expiresAt: "2026-06-01T12:00:01Z" })
  ]
  const index = new ApiKeyIndex(records)

  it("finds an active key's record", () => {
    expect(index.size).toBe(4)
    expect(index.verify(active, NOW)).toEqual({ ok: true, record: records[0] })
    expect(verifyApiKey(future, records, NOW)).toEqual({ ok: true, record: records[3] })
  })

  it("says why a key is refused", () => {
    expect(verifyApiKey(revoked, index, NOW)).toEqual({ ok: false, reason: "revoked" })
    expect(verifyApiKey(expired, index, NOW)).toEqual({ ok: false, reason: "expired" })
    expect(verifyApiKey(generateApiKey().key, index, NOW)).toEqual({ ok: false, reason: "unknown" })
  })

  it("refuses keys without the prefix or of the wrong length", () => {
    const body = active.slice(4)
    for (const presented of [`xyz_${body}`, body, `${active}A`, active.slice(0, -1), "", `cgk_${"!".repeat(43)}`]) {
      expect(verifyApiKey(presented, index, NOW)).toEqual({ ok: false, reason: "unknown" })
    }
  })

  it("checks a key by its id as by the key itself (what a console session does on each use)", () => {
    expect(index.verifyId(records[0]!.id, NOW)).toEqual({ ok: true, record: records[0] })
    expect(index.verifyId(records[1]!.id, NOW)).toEqual({ ok: false, reason: "revoked" })
    expect(index.verifyId(records[2]!.id, NOW)).toEqual({ ok: false, reason: "expired" })
    expect(index.verifyId(records[3]!.id, NOW)).toEqual({ ok: true, record: records[3] })
    expect(index.verifyId(records[3]!.id, Date.parse("2026-06-01T12:00:01Z"))).toEqual({
      ok: false,
      reason: "expired"
    })
    expect(index.verifyId("key_unknown0000", NOW)).toEqual({ ok: false, reason: "unknown" })
  })

  it("reports revoked before expired", () => {
    const both = record("x", { revokedAt: "2026-01-02T00:00:00Z", expiresAt: "2026-01-03T00:00:00Z" })
    expect(keyStatus(both, NOW)).toBe("revoked")
    expect(keyStatus(record("x"), NOW)).toBe("active")
  })
})

describe("parseExpiry", () => {
  it("reads durations from now", () => {
    expect(parseExpiry("12h", NOW)).toBe("2026-06-02T00:00:00.000Z")
    expect(parseExpiry("90d", NOW)).toBe("2026-08-30T12:00:00.000Z")
    expect(parseExpiry("4w", NOW)).toBe("2026-06-29T12:00:00.000Z")
    expect(parseExpiry("1y", NOW)).toBe("2027-06-01T12:00:00.000Z")
  })

  it("reads dates and date-times", () => {
    expect(parseExpiry("2027-01-01", NOW)).toBe("2027-01-01T00:00:00.000Z")
    expect(parseExpiry("2027-01-01T10:00:00+02:00", NOW)).toBe("2027-01-01T08:00:00.000Z")
  })

  it("refuses anything else with a clear message", () => {
    for (const input of ["soon", "90", "0d", "-1d", "2027-02-30", "2026-05-01", "2027-01-01T00:00:00", "99999d1"]) {
      expect(() => parseExpiry(input, NOW)).toThrow(InvalidExpiry)
    }
    expect(() => parseExpiry("soon", NOW)).toThrow(/Invalid expiry "soon": use a duration such as 12h, 90d/)
    expect(() => parseExpiry("2026-05-01", NOW)).toThrow(/not in the future/)
    expect(() => parseExpiry("999999y", NOW)).toThrow(/too far in the future/)
  })
})

describe("ApiKeyIndex remembering matched keys", () => {
  it("answers a key it matched before exactly as the first time, expiry still decided at each call", () => {
    const { key } = generateApiKey()
    const expiring = record(key, { expiresAt: "2026-06-01T13:00:00Z" })
    const index = new ApiKeyIndex([expiring])
    expect(index.verify(key, NOW)).toEqual({ ok: true, record: expiring })
    expect(index.verify(key, NOW)).toEqual({ ok: true, record: expiring })
    expect(index.verify(key, Date.parse("2026-06-01T14:00:00Z"))).toEqual({ ok: false, reason: "expired" })
    expect(index.verify(` ${key}`, NOW)).toEqual({ ok: false, reason: "unknown" })
    expect(index.verify(`${key.slice(0, -1)}x`, NOW)).toEqual({ ok: false, reason: "unknown" })
  })

  it("forgets with the index: the index of the next snapshot sees a revocation or a removal", () => {
    const { key } = generateApiKey()
    const active = record(key)
    const before = new ApiKeyIndex([active])
    expect(before.verify(key, NOW).ok).toBe(true)
    const revoked = new ApiKeyIndex([{ ...active, revokedAt: "2026-05-01T00:00:00Z" }])
    expect(revoked.verify(key, NOW)).toEqual({ ok: false, reason: "revoked" })
    expect(new ApiKeyIndex([]).verify(key, NOW)).toEqual({ ok: false, reason: "unknown" })
    expect(before.verify(key, NOW).ok).toBe(true)
  })
})
