/**
 * Console sessions (issue 17): an API key exchanged at `POST
 * /console/session` for a cookie, so the browser never keeps the key.
 * The cookie holds a stateless token — the key's id, when it was issued,
 * when it ends, a random nonce — signed with HMAC-SHA-256 under a key
 * derived from the deployment's console secret; nothing is stored per
 * session until it is signed out. Each use is checked against the live key index
 * (`credentials.ts`), so revoking or expiring the key ends its sessions at
 * once, against `console.sessionMinutes` as it is now, so lowering it
 * shortens sessions already open, and against the sessions ended by signing
 * out (`sessions/EndedSessions.ts`: the nonce, kept until the token's own
 * end), so a copy of a signed-out cookie is refused too. The session's CSRF token is an HMAC of
 * its nonce under a second derived key: the daemon recomputes it, the
 * page holds it in memory and sends it as `X-CSRF-Token` on every change.
 *
 * The secret is `CAMPUSGATE_CONSOLE_SECRET`, else generated once into
 * `<dataDir>/console-secret` (mode 0600) or, when daemons share Redis, into
 * Redis (`deployment/secrets.ts`), so every daemon accepts the sessions
 * of the others, a restart keeps them and `campusgate migrate` carries them.
 */
import { createHmac, createSecretKey, hkdfSync, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ApiKeyId } from "../domain/ApiKey.ts"
import type { EndedSessionsError, EndedSessionsService } from "../sessions/EndedSessions.ts"

export const SESSION_COOKIE = "campusgate_console"
export const CSRF_HEADER = "x-csrf-token"

/** What a session token says (times in epoch milliseconds). */
export interface SessionClaims {
  readonly keyId: ApiKeyId
  readonly issuedAt: number
  /** When the session ends at the latest: the sign-in's TTL, or its key's expiry when sooner. */
  readonly expiresAt: number
  readonly nonce: string
}

export interface SessionKeys {
  /** A new session of the key, with its token (the cookie's value). */
  issue(keyId: ApiKeyId, now: number, expiresAt: number): { readonly token: string; readonly claims: SessionClaims }
  /** The claims of a token this deployment signed; undefined for anything else (its lifetime is checked apart). */
  open(token: string): SessionClaims | undefined
  /** The session's CSRF token. */
  csrfToken(claims: SessionClaims): string
  /** Whether `presented` is the session's CSRF token (constant time). */
  csrfMatches(claims: SessionClaims, presented: string): boolean
}

const derive = (secret: string, label: string): KeyObject =>
  createSecretKey(Buffer.from(hkdfSync("sha256", secret, "campusgate-console", label, 32)))

const mac = (key: KeyObject, text: string): string => createHmac("sha256", key).update(text).digest("base64url")

const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

const TOKEN = /^(key_[a-z0-9]{8,32})\.(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

export const makeSessionKeys = (secret: string): SessionKeys => {
  const tokenKey = derive(secret, "session")
  const csrfKey = derive(secret, "csrf")
  const csrfToken = (claims: SessionClaims) => mac(csrfKey, `${claims.keyId}.${claims.nonce}`)
  return {
    issue: (keyId, now, expiresAt) => {
      const claims = { keyId, issuedAt: now, expiresAt, nonce: randomBytes(16).toString("base64url") }
      const payload = `${keyId}.${now}.${expiresAt}.${claims.nonce}`
      return { token: `${payload}.${mac(tokenKey, payload)}`, claims }
    },
    open: (token) => {
      const parts = TOKEN.exec(token)
      if (parts === null) return undefined
      const [, keyId, issuedAt, expiresAt, nonce, signature] = parts
      if (!sameText(mac(tokenKey, `${keyId}.${issuedAt}.${expiresAt}.${nonce}`), signature!)) return undefined
      return { keyId: keyId as ApiKeyId, issuedAt: Number(issuedAt), expiresAt: Number(expiresAt), nonce: nonce! }
    },
    csrfToken,
    csrfMatches: (claims, presented) => sameText(csrfToken(claims), presented)
  }
}

/** When the session ends under `sessionMinutes` as set now (epoch milliseconds). */
export const sessionEnd = (claims: SessionClaims, sessionMinutes: number): number =>
  Math.min(claims.expiresAt, claims.issuedAt + sessionMinutes * 60_000)

/** The value of cookie `name` in a `Cookie` header field (RFC 6265 5.4: `name=value` pairs separated by `;`). */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=")
    if (equals > 0 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim()
  }
  return undefined
}

/** The `Set-Cookie` value of a session: script-proof, same-site only, `Secure` when the browser came over TLS. */
export const sessionCookie = (token: string, maxAgeSeconds: number, secure: boolean): string =>
  `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.max(0, maxAgeSeconds)}${secure ? "; Secure" : ""}`

/** The `Set-Cookie` value that removes the session's cookie. */
export const clearedCookie = (secure: boolean): string => sessionCookie("", 0, secure)

/** The deployment's session keys, and the sessions ended by signing out. */
export interface ConsoleSessionsService extends SessionKeys {
  /** Whether the session was ended by signing out: its cookie is refused from then on, wherever it comes from. */
  hasEnded(claims: SessionClaims, now: number): boolean
  /** Ends the session for every daemon sharing the store, until its token's own end. */
  end(claims: SessionClaims): Effect.Effect<void, EndedSessionsError>
}

/** Session keys derived once from the console secret, over the store of ended sessions. */
export const makeConsoleSessions = (secret: string, ended: EndedSessionsService): ConsoleSessionsService => ({
  ...makeSessionKeys(secret),
  hasEnded: (claims, now) => ended.hasEnded(claims.nonce, now),
  end: (claims) => ended.end({ nonce: claims.nonce, until: claims.expiresAt })
})

export class ConsoleSessions extends Context.Service<ConsoleSessions, ConsoleSessionsService>()(
  "campusgate/server/ConsoleSessions"
) {}
