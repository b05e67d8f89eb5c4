/**
 * `Idempotency-Key` on the POSTs that create or send (issue 44), with
 * Stripe's semantics: the first request with a key runs, and its answer is
 * kept for 24 hours; the same key with the same request (method, path,
 * body) is answered with that answer again, marked `Idempotent-Replayed:
 * true`, instead of creating or sending twice; the same key with another
 * request, or while the first is still running, is a 409. Keys are the
 * caller's team's. Only an accepted answer (2xx) is kept: a refused request
 * may be corrected and sent again with its key. The server implements the
 * middleware (`server/idempotency.ts`) over the idempotency store.
 */
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Schema from "effect/Schema"
import type { Caller } from "./Authorization.ts"
import { Conflict, ServiceUnavailable } from "./problems.ts"

/** What a key may be: 1 to 255 visible ASCII characters (a UUID, an order number). */
export const IdempotencyKey = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^[\x21-\x7e]{1,255}$/, {
      message: "an Idempotency-Key is 1 to 255 visible ASCII characters, e.g. a UUID"
    })
  )
)

/** The header fields of an endpoint that honours `Idempotency-Key`. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(IdempotencyKey)
})

/** How long an answer is replayed for its key. */
export const IDEMPOTENCY_RETENTION_HOURS = 24

export class Idempotency extends HttpApiMiddleware.Service<Idempotency, { requires: Caller }>()(
  "campusgate/api/Idempotency",
  { error: [Conflict, ServiceUnavailable] }
) {}
