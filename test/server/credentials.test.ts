/**
 * Who a request is (`credentials.ts`), at chosen instants: console session
 * tokens signed and opened (`consoleSession.ts`), a session's end under the
 * TTL as set now and its key's expiry, signed-out sessions, the CSRF and Origin checks of
 * changes, and the bearer key winning over the cookie. The key index and
 * the settings are the real ones; the snapshot holds only what the checks
 * read, as in rateLimitMemory.test.ts.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import type { ConfigSnapshot } from "../../src/app/Snapshot.ts"
import { Settings, type SettingsInput } from "../../src/config/Settings.ts"
import type { ApiKeyRecord } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyIndex, generateApiKey, hashApiKey } from "../../src/keys/apiKeys.ts"
import { cookieValue, makeConsoleSessions, makeSessionKeys, SESSION_COOKIE } from "../../src/server/consoleSession.ts"
import { type Authentication, authenticate, type CredentialRequest } from "../../src/server/credentials.ts"
import { EndedSessions } from "../../src/sessions/EndedSessions.ts"

const NOW = Date.parse("2026-06-01T12:00:00Z")
const MINUTE = 60_000

const { id, key } = generateApiKey()
const record = (extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  team: "acme" as TeamId,
  scopes: ["offers:read", "offers:write"],
  hash: hashApiKey(key),
  createdAt: "2026-01-01T00:00:00Z",
  ...extra
})

const snapshotOf = (records: ReadonlyArray<ApiKeyRecord>, settings: SettingsInput = {}): ConfigSnapshot =>
  ({
    keys: new ApiKeyIndex(records),
    config: { settings: Schema.decodeUnknownSync(Settings)(settings) }
  }) as unknown as ConfigSnapshot

const sessions = makeConsoleSessions("a console secret for tests", EndedSessions.makeMemory())
const live = snapshotOf([record()])

const request = (method: string, headers: CredentialRequest["headers"]): CredentialRequest => ({ method, headers })
const outcome = (authentication: Authentication) =>
  authentication.ok ? { ok: true, keyId: authentication.record.id } : { ok: false, code: authentication.problem.code }

describe("session tokens", () => {
  it("open to what was issued, and only when this secret signed them unchanged", () => {
    const { token, claims } = sessions.issue(id, NOW, NOW + 60 * MINUTE)
    expect(sessions.open(token)).toEqual(claims)
    expect(claims).toMatchObject({ keyId: id, issuedAt: NOW, expiresAt: NOW + 60 * MINUTE })
    expect(makeSessionKeys("another secret").open(token)).toBeUndefined()
    const later = token.replace(`.${NOW + 60 * MINUTE}.`, `.${NOW + 600 * MINUTE}.`)
    expect(later).not.toBe(token)
    expect(sessions.open(later)).toBeUndefined()
    expect(sessions.open(`${token}x`)).toBeUndefined()
    expect(sessions.open("")).toBeUndefined()
    // Each session has its own nonce, so its own CSRF token.
    const other = sessions.issue(id, NOW, NOW + 60 * MINUTE).claims
    expect(sessions.csrfToken(other)).not.toBe(sessions.csrfToken(claims))
    expect(sessions.csrfMatches(claims, sessions.csrfToken(claims))).toBe(true)
    expect(sessions.csrfMatches(claims, sessions.csrfToken(other))).toBe(false)
  })

  it("are read from a Cookie field among other cookies", () => {
    expect(cookieValue(`theme=dark; ${SESSION_COOKIE}=abc.def; other=1`, SESSION_COOKIE)).toBe("abc.def")
    expect(cookieValue(`x${SESSION_COOKIE}=nope`, SESSION_COOKIE)).toBeUndefined()
    expect(cookieValue(undefined, SESSION_COOKIE)).toBeUndefined()
  })
})

describe("authenticate", () => {
  const signedIn = (now = NOW, ends = now + 60 * MINUTE) => {
    const { token, claims } = sessions.issue(id, now, ends)
    return { cookie: `${SESSION_COOKIE}=${token}`, csrf: sessions.csrfToken(claims) }
  }

  it("takes a bearer key, in any case of the scheme, and judges a request with Authorization by it alone", () => {
    const { cookie } = signedIn()
    expect(outcome(authenticate(request("GET", { authorization: `Bearer ${key}` }), live, sessions, NOW))).toEqual({
      ok: true,
      keyId: id
    })
    expect(outcome(authenticate(request("GET", { authorization: `bearer  ${key}` }), live, sessions, NOW)).ok).toBe(
      true
    )
    expect(outcome(authenticate(request("GET", { authorization: "Basic x", cookie }), live, sessions, NOW))).toEqual({
      ok: false,
      code: "MISSING_API_KEY"
    })
    expect(outcome(authenticate(request("GET", {}), live, sessions, NOW))).toEqual({
      ok: false,
      code: "MISSING_API_KEY"
    })
  })

  it("takes the session cookie for reads until the session ends", () => {
    const { cookie } = signedIn()
    const read = (now: number) => outcome(authenticate(request("GET", { cookie }), live, sessions, now))
    expect(read(NOW)).toEqual({ ok: true, keyId: id })
    expect(read(NOW + 60 * MINUTE - 1)).toEqual({ ok: true, keyId: id })
    expect(read(NOW + 60 * MINUTE)).toEqual({ ok: false, code: "INVALID_API_KEY" })
  })

  it("refuses a signed-out session, for reads and changes, and only that one", () => {
    const { token, claims } = sessions.issue(id, NOW, NOW + 60 * MINUTE)
    const other = signedIn()
    const cookie = `${SESSION_COOKIE}=${token}`
    const change = request("POST", { cookie, "x-csrf-token": sessions.csrfToken(claims) })
    expect(outcome(authenticate(change, live, sessions, NOW)).ok).toBe(true)
    Effect.runSync(sessions.end(claims))
    expect(outcome(authenticate(request("GET", { cookie }), live, sessions, NOW))).toEqual({
      ok: false,
      code: "INVALID_API_KEY"
    })
    expect(outcome(authenticate(change, live, sessions, NOW))).toEqual({ ok: false, code: "INVALID_API_KEY" })
    expect(outcome(authenticate(request("GET", { cookie: other.cookie }), live, sessions, NOW)).ok).toBe(true)
  })

  it("ends sessions already open when console.sessionMinutes is lowered", () => {
    const { cookie } = signedIn()
    const shorter = snapshotOf([record()], { console: { sessionMinutes: 5 } })
    expect(outcome(authenticate(request("GET", { cookie }), shorter, sessions, NOW + 4 * MINUTE)).ok).toBe(true)
    expect(outcome(authenticate(request("GET", { cookie }), shorter, sessions, NOW + 5 * MINUTE)).ok).toBe(false)
  })

  it("refuses a session whose key is revoked, expired or gone", () => {
    const { cookie } = signedIn()
    for (const keys of [
      [record({ revokedAt: "2026-06-01T11:59:00Z" })],
      [record({ expiresAt: "2026-06-01T12:00:00Z" })],
      []
    ]) {
      expect(outcome(authenticate(request("GET", { cookie }), snapshotOf(keys), sessions, NOW))).toEqual({
        ok: false,
        code: "INVALID_API_KEY"
      })
    }
  })

  it("needs the CSRF token for every method that may change something", () => {
    const { cookie, csrf } = signedIn()
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(outcome(authenticate(request(method, { cookie }), live, sessions, NOW))).toEqual({
        ok: false,
        code: "CSRF_FAILED"
      })
      expect(outcome(authenticate(request(method, { cookie, "x-csrf-token": csrf }), live, sessions, NOW)).ok).toBe(
        true
      )
    }
    expect(outcome(authenticate(request("HEAD", { cookie }), live, sessions, NOW)).ok).toBe(true)
  })

  it("takes a change only from the daemon's own origin: the Host it was sent to, https behind a TLS proxy, or publicUrl", () => {
    const { cookie, csrf } = signedIn()
    const change = (headers: CredentialRequest["headers"], snapshot = live) =>
      outcome(authenticate(request("POST", { cookie, "x-csrf-token": csrf, ...headers }), snapshot, sessions, NOW))
    expect(change({ host: "campusgate.samples.com:8080", origin: "http://campusgate.samples.com:8080" }).ok).toBe(true)
    expect(change({ host: "campusgate.samples.com:8080", origin: "http://other.samples.com:8080" })).toEqual({
      ok: false,
      code: "CSRF_FAILED"
    })
    expect(change({ host: "campusgate.samples.com", origin: "https://campusgate.samples.com" }).ok).toBe(false)
    expect(
      change({
        host: "campusgate.samples.com",
        origin: "https://campusgate.samples.com",
        "x-forwarded-proto": "https"
      }).ok
    ).toBe(true)
    const published = snapshotOf([record()], { verification: { publicUrl: "https://verify.samples.com/base" } })
    expect(change({ host: "10.0.0.5:8080", origin: "https://verify.samples.com" }, published).ok).toBe(true)
    expect(change({ host: "10.0.0.5:8080", origin: "https://verify.samples.com.evil.samples" }, published).ok).toBe(
      false
    )
  })
})
