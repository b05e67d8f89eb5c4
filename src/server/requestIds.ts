/**
 * The `RequestIds` middleware: every problem an endpoint fails with — its
 * handler's, the authorisation's, the request decoding's — leaves with the
 * request's id (`withRequestId`), so no handler threads the id by hand.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RequestIds } from "../api/Api.ts"
import { isProblem, withRequestId } from "../api/problems.ts"
import { currentRequestId } from "./requestId.ts"

export const RequestIdsLive = Layer.succeed(
  RequestIds,
  RequestIds.of((httpEffect) =>
    Effect.catch(httpEffect, (error) =>
      isProblem(error)
        ? Effect.flatMap(currentRequestId, (id) => Effect.fail(withRequestId(error, id)))
        : Effect.fail(error)
    )
  )
)
