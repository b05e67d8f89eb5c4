/**
 * The one renderer of problems: a problem as the response it answers, its
 * RFC 9457 body (`application/problem+json`, encoded by the problem's own
 * class) and, for a problem that says when to retry (429, 503),
 * `Retry-After`. The Effect app's problem middleware, the handlers that
 * answer a 503 and the fast path all answer through it.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import { type Problem, withRequestId } from "../api/problems.ts"
import { REQUEST_ID_HEADER } from "./requestId.ts"

export const problemResponse = (problem: Problem): HttpServerResponse.HttpServerResponse => {
  const response = Effect.runSync(HttpServerRespondable.toResponse(problem))
  return "retryAfterSeconds" in problem
    ? HttpServerResponse.setHeader(response, "retry-after", String(problem.retryAfterSeconds))
    : response
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
