/**
 * The one renderer of problems: a problem as the response it answers, its
 * RFC 9457 body (`application/problem+json`, encoded by the problem's own
 * class) and, for a problem that says when to retry (429, 503),
 * `Retry-After`; for a 401, the `WWW-Authenticate` challenge. The Effect app's problem middleware, the handlers that
 * answer a 503 and the fast path all answer through it.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import { type Problem, withRequestId } from "../api/problems.ts"
import { REQUEST_ID_HEADER } from "./requestId.ts"

/**
 * The challenge of a 401 (RFC 9110, 11.6.1; RFC 6750, 3): the bearer scheme,
 * and for a key that was sent but refused, `error="invalid_token"`.
 */
export const challengeOf = (problem: Problem): string =>
  problem.code === "MISSING_API_KEY" ? 'Bearer realm="campusgate"' : 'Bearer realm="campusgate", error="invalid_token"'

export const problemResponse = (problem: Problem): HttpServerResponse.HttpServerResponse => {
  const response = Effect.runSync(HttpServerRespondable.toResponse(problem))
  if ("retryAfterSeconds" in problem)
    return HttpServerResponse.setHeader(response, "retry-after", String(problem.retryAfterSeconds))
  if (problem.status === 401) return HttpServerResponse.setHeader(response, "www-authenticate", challengeOf(problem))
  return response
}

/**
 * A problem answered as a response rather than a failure: how a handler
 * answers one its endpoint does not declare with its headers (a 503 with
 * `Retry-After`). It names the request being served, as `RequestIds` does
 * for failures.
 */
export const answerWith = (problem: Problem): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) => {
    const requestId = Option.getOrUndefined(request)?.headers[REQUEST_ID_HEADER]
    return problemResponse(requestId === undefined ? problem : withRequestId(problem, requestId))
  })
