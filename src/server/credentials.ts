/**
 * Who a request is, decided in one place for the Effect pipeline's
 * `Authorization` middleware (`authorization.ts`) and the fast path
 * (`fastPath.ts`), from its header fields and the snapshot in force:
 *
 * - `Authorization: Bearer <key>`: the key, checked by hash
 *   (`MISSING_API_KEY`, `INVALID_API_KEY`). A request with an
 *   `Authorization` field is judged by it alone, whatever cookie it carries.
 * - Otherwise the console's session cookie (`consoleSession.ts`): its
 *   signature, its end under `console.sessionMinutes` as set now, whether
 *   it was signed out (on this daemon or another sharing the store), and
 *   the key it was made from, looked up by id in the live key index, so a
 *   revoked or expired key is refused at once. The request then acts as
 *   that key: same team, scopes and rate limits. A request that may change
 *   something (POST, PUT, PATCH, DELETE) must also carry the session's
 *   `X-CSRF-Token` and, when it has an `Origin`, come from the daemon's own
 *   origin (the `Host` it was sent to, `https` when a TLS-terminating proxy
 *   says so in `X-Forwarded-Proto`, or `verification.publicUrl`); otherwise
 *   403 `CSRF_FAILED`. `SameSite=Strict` already keeps other sites' requests
 *   from carrying the cookie; these checks hold even where it does not.
 */
import { type CsrfFailed, csrfFailed, invalidApiKey, missingApiKey, type Unauthorized } from "../api/problems.ts"
import type { ConfigSnapshot } from "../app/Snapshot.ts"
import type { ApiKeyRecord } from "../domain/ApiKey.ts"
import type { KeyVerification } from "../keys/apiKeys.ts"
import {
  type ConsoleSessionsService,
  CSRF_HEADER,
  cookieValue,
  SESSION_COOKIE,
  type SessionClaims,
  sessionEnd
} from "./consoleSession.ts"

/** A request's method and header fields (names in lower case), as Node and Effect both hold them. */
export interface CredentialRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

export type Authentication =
  | { readonly ok: true; readonly record: ApiKeyRecord; readonly session: SessionClaims | undefined }
  | { readonly ok: false; readonly problem: Unauthorized | CsrfFailed }

const UNSAFE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

const invalidReasons = {
  unknown: "The API key is not valid.",
  revoked: "The API key has been revoked.",
  expired: "The API key has expired."
} as const

const header = (request: CredentialRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}

const refused = (problem: Unauthorized | CsrfFailed): Authentication => ({ ok: false, problem })

const missing = () => refused(missingApiKey("Send an API key: Authorization: Bearer <key>."))

/** Why a key that is not usable is refused. */
export const keyRefused = (reason: keyof typeof invalidReasons): Unauthorized => invalidApiKey(invalidReasons[reason])

const ofVerdict = (verdict: KeyVerification, session: SessionClaims | undefined): Authentication =>
  verdict.ok ? { ok: true, record: verdict.record, session } : refused(keyRefused(verdict.reason))

/** The credential of an `Authorization` field of the bearer scheme (any case), else "" (RFC 9110 11.6.2). */
const bearerCredential = (authorization: string): string =>
  authorization.startsWith("Bearer ") || authorization.slice(0, 7).toLowerCase() === "bearer "
    ? authorization.slice(7).trim()
    : ""

/** Whether the browser reached the daemon over TLS: only a proxy in front can say (the daemon speaks HTTP). */
export const cameOverTls = (request: CredentialRequest): boolean =>
  header(request, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https"

/** Whether `origin` (an `Origin` field) is the daemon's own. */
const isOwnOrigin = (request: CredentialRequest, origin: string, publicUrl: string | undefined): boolean => {
  const host = header(request, "host")
  const scheme = cameOverTls(request) ? "https" : "http"
  if (host !== undefined && origin.toLowerCase() === `${scheme}://${host.toLowerCase()}`) return true
  return publicUrl !== undefined && URL.parse(publicUrl)?.origin === origin.toLowerCase()
}

/**
 * The console session a request's cookie holds and the key it acts as, for
 * a request of `method` (a change needs the CSRF token and the own origin).
 */
export const authenticateSession = (
  request: CredentialRequest,
  snapshot: ConfigSnapshot,
  sessions: ConsoleSessionsService,
  now: number
): Authentication => {
  const token = cookieValue(header(request, "cookie"), SESSION_COOKIE)
  if (token === undefined || token === "") return missing()
  const settings = snapshot.config.settings
  const claims = sessions.open(token)
  if (
    claims === undefined ||
    now >= sessionEnd(claims, settings.console.sessionMinutes) ||
    sessions.hasEnded(claims, now)
  ) {
    return refused(invalidApiKey("The console session has ended; sign in again."))
  }
  const verdict = snapshot.keys.verifyId(claims.keyId, now)
  if (!verdict.ok || !UNSAFE_METHODS.has(request.method)) return ofVerdict(verdict, claims)
  const presented = header(request, CSRF_HEADER)
  if (presented === undefined || !sessions.csrfMatches(claims, presented)) {
    return refused(csrfFailed(`A change made with the console's session needs its CSRF token in ${CSRF_HEADER}.`))
  }
  const origin = header(request, "origin")
  if (origin !== undefined && !isOwnOrigin(request, origin, settings.verification.publicUrl)) {
    return refused(csrfFailed("A change made with the console's session must come from the console's own origin."))
  }
  return ofVerdict(verdict, claims)
}

/** The key a request acts as: its bearer key, else its console session; or the problem that refuses it. */
export const authenticate = (
  request: CredentialRequest,
  snapshot: ConfigSnapshot,
  sessions: ConsoleSessionsService,
  now: number
): Authentication => {
  const authorization = header(request, "authorization")
  if (authorization === undefined) return authenticateSession(request, snapshot, sessions, now)
  const presented = bearerCredential(authorization)
  return presented === "" ? missing() : ofVerdict(snapshot.keys.verify(presented, now), undefined)
}
