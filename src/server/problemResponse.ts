/**
 * The one renderer of problems: a problem as the response it answers, its
 * RFC 9457 body (`application/problem+json`, encoded by the problem's own
 * class) and, for a problem that says when to retry (429, 503),
 * `Retry-After`. The Effect app's problem middleware, the handlers that
 * answer a 503 and the fast path all answer through it.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { Problem } from "../api/problems.ts"

export const problemResponse = (problem: Problem): HttpServerResponse.HttpServerResponse => {
  const response = Effect.runSync(HttpServerRespondable.toResponse(problem))
  return "retryAfterSeconds" in problem
    ? HttpServerResponse.setHeader(response, "retry-after", String(problem.retryAfterSeconds))
    : response
}

/** A problem answered as a response rather than a failure: how a handler answers one its endpoint does not declare with its headers (a 503 with `Retry-After`). */
export const answerWith = (problem: Problem): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.sync(() => problemResponse(problem))
