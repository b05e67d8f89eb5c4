/**
 * Handlers of the API-key endpoints: the calling key's team's keys listed,
 * made and revoked through the application core (`app/Keys.ts`), which
 * holds every rule (team, scopes held, expiry, visibility) and makes each
 * change serve before the answer; here the request is handed over as the
 * `Caller` and the answer or the problem given back.
 */
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import { Keys } from "../../app/Keys.ts"
import { answerKeysError } from "../problemOf.ts"

/** An answer without the problems the operation cannot meet (a list names no key, a create none either, a revocation asks for no scope). */
const only = <A, E extends { readonly _tag: string }, const Tags extends ReadonlyArray<E["_tag"]>>(
  answer: Effect.Effect<A, E>,
  ...impossible: Tags
): Effect.Effect<A, Exclude<E, { readonly _tag: Tags[number] }>> =>
  Effect.catchIf(
    answer,
    (error): error is Extract<E, { readonly _tag: Tags[number] }> => impossible.includes(error._tag),
    Effect.die
  ) as Effect.Effect<A, Exclude<E, { readonly _tag: Tags[number] }>>

/** The answer holding a new key is kept by no cache (RFC 9111, 5.2.2.5), as a token's answer is not (RFC 6749, 5.1). */
const notStored = HttpEffect.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "no-store"))
)

export const KeysHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "keys",
  Effect.fn(function* (handlers) {
    const keys = yield* Keys
    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(Caller, (caller) =>
          keys.listFor(caller.team, { limit: query.limit ?? PAGE_LIMIT_DEFAULT, cursor: query.cursor })
        ).pipe(
          Effect.catchTag("KeysError", (error) => only(answerKeysError(error), "Forbidden", "NotFound", "Conflict"))
        )
      )
      .handle("create", ({ payload }) =>
        Effect.flatMap(Caller, (caller) => Effect.andThen(notStored, keys.createFor(caller, payload))).pipe(
          Effect.catchTag("KeysError", (error) => only(answerKeysError(error), "NotFound", "Conflict"))
        )
      )
      .handle("revoke", ({ params }) =>
        Effect.flatMap(Caller, (caller) => keys.revokeFor(caller, params.id)).pipe(
          Effect.catchTag("KeysError", (error) => only(answerKeysError(error), "Forbidden"))
        )
      )
  })
)
