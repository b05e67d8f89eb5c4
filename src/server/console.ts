/**
 * The operator console as a browser gets it (issue 17): `GET /console` and
 * any `/console/<path>` without a file extension answer the app's
 * `index.html` (the app routes in the browser; revalidated, `no-cache`),
 * `/console/assets/<hashed file>` the bundled files (cached for a year,
 * `immutable`), each compressed when the client accepts it and with an
 * `ETag` (`staticAsset.ts`). Every answer under `/console` — problems
 * included — carries `consoleHeaders`, set by the outermost middleware
 * (`http.ts`): a strict Content-Security-Policy (nothing from another
 * host, no inline script or style), `nosniff`, no referrer, no framing.
 *
 * The session (`consoleSession.ts`; not part of the public API):
 * - `POST /console/session` `{ "key": "<api key>" }` → 200 with the key's
 *   team, scopes and id, when the session ends, and its CSRF token, and the
 *   session cookie (`HttpOnly; SameSite=Strict; Path=/`, `Secure` behind
 *   TLS). A bad key is a 401 problem. Sign-ins draw on the `signIn` rate
 *   limit of the client's address, good keys and bad alike.
 * - `GET /console/session` → the same answer for the session the cookie
 *   holds, so a reload keeps the console signed in; 401 when there is none
 *   (and a cookie that no longer works is removed).
 * - `DELETE /console/session` → 204 and the cookie removed; a live session
 *   is ended only with its CSRF token (403 otherwise), and ended for good:
 *   recorded in the daemon's store (`sessions/EndedSessions.ts`) before
 *   the answer, so a copy of the cookie is refused by every daemon (503,
 *   the cookie kept, when the store cannot take it).
 * Session answers are never cached (`no-store`).
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { missingApiKey, notBuilt as notBuiltProblem, notFound, storeUnavailable } from "../api/problems.ts"
import { type ConfigSnapshot, Snapshot } from "../app/Snapshot.ts"
import type { ApiKeyRecord } from "../domain/ApiKey.ts"
import { CONSOLE_INDEX, ConsoleAssets } from "./consoleAssets.ts"
import {
  ConsoleSessions,
  type ConsoleSessionsService,
  clearedCookie,
  SESSION_COOKIE,
  type SessionClaims,
  sessionCookie,
  sessionEnd
} from "./consoleSession.ts"
import { authenticateSession, cameOverTls, keyRefused } from "./credentials.ts"
import { answerWith } from "./problemResponse.ts"
import { makeRateLimitDecider } from "./rateLimit.ts"
import { payloadParseOptions, requestProblem, unreadableBody } from "./requestErrors.ts"
import { CONSOLE_FILES_PATH, CONSOLE_PATH, CONSOLE_SESSION_PATH, routedPath } from "./routes.ts"
import { assetResponse } from "./staticAsset.ts"

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The header fields of every answer under `/console`. */
export const consoleHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const notBuilt = answerWith(notBuiltProblem("The console has not been built: run `npm run build`."))

/** The file a console path names: its path under the console directory, or the page for an app address. */
const fileOf = (path: string): string => {
  const rest = path.slice(CONSOLE_PATH.length + 1)
  const last = rest.slice(rest.lastIndexOf("/") + 1)
  return last.includes(".") ? decodeURIComponent(rest) : CONSOLE_INDEX
}

const serveConsole = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const files = (yield* ConsoleAssets).files()
  if (files === undefined) return yield* notBuilt
  const path = routedPath(request.url)
  const name = path === CONSOLE_PATH ? CONSOLE_INDEX : fileOf(path)
  const asset = files.get(name)
  if (asset === undefined) {
    return yield* answerWith(notFound(`The console has no file ${path}.`))
  }
  return assetResponse(asset, request.headers)
})

const notEnded = storeUnavailable("The session could not be ended: the store is unavailable. Try signing out again.")

const SignIn = Schema.Struct({ key: Schema.String })
const decodeSignIn = Schema.decodeUnknownEffect(SignIn, payloadParseOptions)

const NO_STORE = { "cache-control": "no-store" }

/** The session as the console sees it: whose it is, what it may do, when it ends, its CSRF token. */
const sessionAnswer = (
  snapshot: ConfigSnapshot,
  sessions: ConsoleSessionsService,
  record: ApiKeyRecord,
  claims: SessionClaims,
  headers: Record<string, string> = {}
) =>
  HttpServerResponse.jsonUnsafe(
    {
      team: record.team,
      scopes: record.scopes,
      keyId: record.id,
      expiresAt: new Date(sessionEnd(claims, snapshot.config.settings.console.sessionMinutes)).toISOString(),
      csrfToken: sessions.csrfToken(claims)
    },
    { headers: { ...NO_STORE, ...headers } }
  )

const withHeaders = (headers: Record<string, string>) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, { ...NO_STORE, ...headers })

const signIn = Effect.map(makeRateLimitDecider, ({ decide }) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const snapshot = (yield* Snapshot).current()
    const sessions = yield* ConsoleSessions
    const address = Option.getOrElse(request.remoteAddress, () => "unknown")
    const decision = yield* decide(`address:${address}`, "signIn")
    const answer = (problem: Parameters<typeof answerWith>[0]) =>
      Effect.map(answerWith(problem), withHeaders(decision.headers))
    if (decision.problem !== undefined) return yield* answer(decision.problem)
    const body = yield* Effect.result(request.json)
    if (body._tag === "Failure") return yield* answer(unreadableBody(body.failure))
    const payload = yield* Effect.result(decodeSignIn(body.success))
    if (payload._tag === "Failure") return yield* answer(requestProblem("Payload", payload.failure))
    const presented = payload.success.key.trim()
    if (presented === "") {
      return yield* answer(missingApiKey("Sign in with an API key."))
    }
    const now = Date.now()
    const verdict = snapshot.keys.verify(presented, now)
    if (!verdict.ok) {
      return yield* answer(keyRefused(verdict.reason))
    }
    const record = verdict.record
    const keyEnds = record.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.expiresAt)
    const ttl = snapshot.config.settings.console.sessionMinutes * 60_000
    const { token, claims } = sessions.issue(record.id, now, Math.min(now + ttl, keyEnds))
    const maxAge = Math.floor((sessionEnd(claims, snapshot.config.settings.console.sessionMinutes) - now) / 1000)
    return sessionAnswer(snapshot, sessions, record, claims, {
      ...decision.headers,
      "set-cookie": sessionCookie(token, maxAge, cameOverTls(request))
    })
  })
)

const currentSession = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const snapshot = (yield* Snapshot).current()
  const sessions = yield* ConsoleSessions
  const session = authenticateSession(request, snapshot, sessions, Date.now())
  if (session.ok) return sessionAnswer(snapshot, sessions, session.record, session.session!)
  const refused = yield* answerWith(session.problem)
  return withHeaders(
    request.cookies[SESSION_COOKIE] === undefined ? {} : { "set-cookie": clearedCookie(cameOverTls(request)) }
  )(refused)
})

const signOut = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const snapshot = (yield* Snapshot).current()
  const sessions = yield* ConsoleSessions
  const session = authenticateSession(request, snapshot, sessions, Date.now())
  // A live session ends only with its CSRF token; a cookie that no longer works is simply removed.
  if (!session.ok && session.problem._tag === "CsrfFailed") return yield* answerWith(session.problem)
  // Ended for every daemon before the answer; if the store cannot say so, the cookie stays for another try.
  if (session.ok && (yield* Effect.isFailure(sessions.end(session.session!)))) {
    return yield* Effect.map(answerWith(notEnded), withHeaders({}))
  }
  return HttpServerResponse.empty({
    status: 204,
    headers: { ...NO_STORE, "set-cookie": clearedCookie(cameOverTls(request)) }
  })
})

// The wildcard route also serves `/console` itself; the session's path is its own route.
export const ConsoleRoutes = Layer.mergeAll(
  HttpRouter.add("GET", CONSOLE_FILES_PATH, serveConsole),
  Layer.unwrap(Effect.map(signIn, (handler) => HttpRouter.add("POST", CONSOLE_SESSION_PATH, handler))),
  HttpRouter.add("GET", CONSOLE_SESSION_PATH, currentSession),
  HttpRouter.add("DELETE", CONSOLE_SESSION_PATH, signOut)
)
