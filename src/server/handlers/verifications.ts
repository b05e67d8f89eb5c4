/**
 * Handlers of the verification endpoints, over the `Verifications` service:
 * the caller's team is the viewer (another team's verification is 404),
 * reasons become problems in `problemOf.ts`. A start whose address is not
 * eligible answers the failed validation result, as the validate endpoints
 * do, and an address that is not one at all is 400 `INVALID_EMAIL_FORMAT`.
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { Verifications } from "../../verification/Verifications.ts"
import { answerVerificationsError } from "../problemOf.ts"
import { currentRequestId } from "../requestId.ts"
import { jsonTextResponse, offerResultText, resultText } from "../resultJson.ts"
import { invalid } from "./shared.ts"
import { formatProblem } from "./validation.ts"

export const VerificationsHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "verifications",
  Effect.fn(function* (handlers) {
    const verifications = yield* Verifications
    const team = Effect.map(Effect.service(Caller), (caller) => caller.team)
    return handlers
      .handle("start", ({ payload }) =>
        Effect.gen(function* () {
          const outcome = yield* verifications.start(yield* team, payload)
          if ("started" in outcome) return HttpServerResponse.jsonUnsafe(outcome.started, { status: 201 })
          const requestId = yield* currentRequestId
          const result = outcome.ineligible
          if ("results" in result) {
            const badFormat = result.results.length > 0 ? formatProblem(result.results[0]!) : undefined
            if (badFormat !== undefined) return yield* badFormat
            return jsonTextResponse(offerResultText(result, requestId))
          }
          const badFormat = formatProblem(result)
          if (badFormat !== undefined) return yield* badFormat
          return jsonTextResponse(resultText(result, requestId))
        }).pipe(Effect.catchTag("VerificationsError", answerVerificationsError))
      )
      .handle("lookup", ({ query }) =>
        Effect.gen(function* () {
          if ((query.offerId === undefined) === (query.targetGroupId === undefined)) {
            return yield* invalid("The lookup is not valid.", [
              { field: "/query/offerId", code: "EXACTLY_ONE", message: "give exactly one of offerId and targetGroupId" }
            ])
          }
          const target =
            query.offerId !== undefined ? { offerId: query.offerId } : { targetGroupId: query.targetGroupId! }
          const current = yield* verifications.lookup(yield* team, query.email, target)
          return { current: current ?? null }
        }).pipe(Effect.catchTag("VerificationsError", answerVerificationsError))
      )
      .handle("get", ({ params }) =>
        Effect.flatMap(team, (viewer) => verifications.get(viewer, params.id)).pipe(
          Effect.catchTag("VerificationsError", answerVerificationsError)
        )
      )
      .handle("confirm", ({ params, payload }) =>
        Effect.flatMap(team, (viewer) => verifications.confirm(viewer, params.id, payload.code)).pipe(
          Effect.catchTag("VerificationsError", answerVerificationsError)
        )
      )
      .handle("resend", ({ params }) =>
        Effect.flatMap(team, (viewer) => verifications.resend(viewer, params.id)).pipe(
          Effect.catchTag("VerificationsError", answerVerificationsError)
        )
      )
      .handle("cancel", ({ params }) =>
        Effect.flatMap(team, (viewer) => verifications.cancel(viewer, params.id)).pipe(
          Effect.catchTag("VerificationsError", answerVerificationsError)
        )
      )
      .handle("resetLimit", ({ payload }) =>
        Effect.flatMap(team, (viewer) => verifications.resetLimit(viewer, payload.email, payload.offerId)).pipe(
          Effect.map((reset) => ({ reset })),
          Effect.catchTag("VerificationsError", answerVerificationsError)
        )
      )
  })
)
