/**
 * The `Authorization` middleware: the bearer key must be known, not revoked
 * and not expired (`INVALID_API_KEY`), present at all (`MISSING_API_KEY`),
 * and carry the scope the endpoint names (`INSUFFICIENT_SCOPE`, saying which).
 * Keys are compared by hash (`ApiKeyIndex`) and never logged. Then the
 * key's rate limit for the endpoint applies (`rateLimit.ts`).
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Authorization, Caller, keyMayCall, scopesAcceptedBy } from "../api/Authorization.ts"
import { Forbidden, Unauthorized } from "../api/problems.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { makeRateLimitCheck } from "./rateLimit.ts"
import { requestKeyIds } from "./requestId.ts"

const invalidReasons = {
  unknown: "The API key is not valid.",
  revoked: "The API key has been revoked.",
  expired: "The API key has expired."
} as const

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const config = yield* Snapshot
    const rateLimit = yield* makeRateLimitCheck
    return Authorization.of({
      bearer: Effect.fnUntraced(function* (httpEffect, { credential, endpoint }) {
        const presented = Redacted.value(credential).trim()
        if (presented === "") {
          return yield* new Unauthorized({
            code: "MISSING_API_KEY",
            detail: "Send an API key: Authorization: Bearer <key>."
          })
        }
        const verdict = config.current().keys.verify(presented, Date.now())
        if (!verdict.ok) {
          return yield* new Unauthorized({ code: "INVALID_API_KEY", detail: invalidReasons[verdict.reason] })
        }
        const record = verdict.record
        requestKeyIds.set(yield* HttpServerRequest.HttpServerRequest, record.id)
        const accepted = scopesAcceptedBy(endpoint.annotations)
        if (!keyMayCall(record.scopes, accepted)) {
          return yield* new Forbidden({
            code: "INSUFFICIENT_SCOPE",
            detail: `This endpoint needs the scope ${accepted.join(" or ")}; the key has ${record.scopes.join(", ")}.`,
            requiredScope: accepted[0]!
          })
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
