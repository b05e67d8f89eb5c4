/**
 * The `Authorization` middleware: who the request is (`credentials.ts`: a
 * bearer key, else the console's session cookie; `MISSING_API_KEY`,
 * `INVALID_API_KEY`, `CSRF_FAILED`), then the scope the endpoint names
 * (`INSUFFICIENT_SCOPE`, saying which). Keys are compared by hash
 * (`ApiKeyIndex`) and never logged. Then the key's rate limit for the
 * endpoint applies (`rateLimit.ts`).
 */
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { Authorization, Caller, keyMayCall, scopesAcceptedBy } from "../api/Authorization.ts"
import { insufficientScope } from "../api/problems.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { ConsoleSessions } from "./consoleSession.ts"
import { authenticate } from "./credentials.ts"
import { answerWith, challengeOf } from "./problemResponse.ts"
import { makeRateLimitCheck } from "./rateLimit.ts"
import { requestKeyIds } from "./requestId.ts"

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const config = yield* Snapshot
    const sessions = yield* ConsoleSessions
    const rateLimit = yield* makeRateLimitCheck
    return Authorization.of({
      // The framework's credential is the bearer's; `authenticate` reads the header fields itself, as the fast path does.
      bearer: Effect.fnUntraced(function* (httpEffect, { endpoint }) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const authenticated = authenticate(request, config.current(), sessions, Date.now())
        if (!authenticated.ok) {
          const { problem } = authenticated
          // Only the console's session meets a CSRF check: answered, not declared in the public contract.
          if (problem._tag === "CsrfFailed") return yield* answerWith(problem)
          // The framework encodes the declared 401; its challenge is added as the response leaves.
          yield* HttpEffect.appendPreResponseHandler((_request, response) =>
            Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", challengeOf(problem)))
          )
          return yield* problem
        }
        const record = authenticated.record
        requestKeyIds.set(request, record.id)
        const accepted = scopesAcceptedBy(endpoint.annotations)
        if (!keyMayCall(record.scopes, accepted)) {
          return yield* insufficientScope(
            `This endpoint needs the scope ${accepted.join(" or ")}; the key has ${record.scopes.join(", ")}.`,
            accepted[0]!
          )
        }
        yield* rateLimit(record.id, endpoint.annotations)
        return yield* Effect.provideService(httpEffect, Caller, {
          keyId: record.id,
          team: record.team,
          scopes: new Set(record.scopes)
        })
      })
    })
  })
)
