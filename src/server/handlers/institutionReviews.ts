/**
 * Handlers of the institution review queue: the calling key's team's
 * unknown domains, and the decision on each (`app/Reviews.ts`). The key
 * that decides is recorded as `approvedBy` / `rejectedBy`.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { Reviews } from "../../app/Reviews.ts"
import { answerReviewsError } from "../problemOf.ts"

export const InstitutionReviewsHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "institutionReviews",
  Effect.fn(function* (handlers) {
    const reviews = yield* Reviews
    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(Caller, (caller) => reviews.list(caller.team, query)).pipe(
          Effect.catchTag("ReviewsError", answerReviewsError)
        )
      )
      .handle("get", ({ params }) =>
        Effect.flatMap(Caller, (caller) => reviews.get(caller.team, params.domain)).pipe(
          Effect.catchTag("ReviewsError", answerReviewsError)
        )
      )
      .handle("approve", ({ params, payload }) =>
        Effect.flatMap(Caller, (caller) => reviews.approve(caller, params.domain, payload)).pipe(
          Effect.catchTag("ReviewsError", answerReviewsError)
        )
      )
      .handle("reject", ({ params, payload }) =>
        Effect.flatMap(Caller, (caller) => reviews.reject(caller, params.domain, payload)).pipe(
          Effect.catchTag("ReviewsError", answerReviewsError)
        )
      )
  })
)
