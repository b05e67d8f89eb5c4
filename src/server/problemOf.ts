/**
 * The application core's error reasons as RFC 9457 problems: the one place
 * a domain reason becomes an HTTP answer. Unexpected failures keep their
 * internals out of the answer (they go to the log).
 */
import * as Effect from "effect/Effect"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"
import {
  BadRequest,
  Conflict,
  Gone,
  InternalError,
  NotFound,
  PreconditionFailed,
  ServiceUnavailable,
  TooManyRequests
} from "../api/problems.ts"
import type { ResourcesError } from "../app/ResourcesError.ts"
import type { ReviewsError } from "../app/Reviews.ts"
import type { JobsError } from "../jobs/errors.ts"
import type { JobStoreError } from "../jobs/JobStore.ts"
import type { VerificationsError } from "../verification/VerificationsError.ts"
import { answerWith } from "./problemResponse.ts"

/** How long a client should wait before retrying when a store cannot be written. */
export const STORE_RETRY_SECONDS = 30
/** How long a client should wait before retrying when the job queue is full. */
const QUEUE_FULL_RETRY_SECONDS = 5

export const resourcesProblem = (
  error: ResourcesError
): BadRequest | NotFound | Conflict | PreconditionFailed | InternalError | ServiceUnavailable => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidResource":
      return new BadRequest({ code: "VALIDATION_ERROR", detail: reason.detail, errors: reason.errors })
    case "ResourceNotFound":
      return new NotFound({ code: "NOT_FOUND", detail: reason.message })
    case "ResourceConflict":
      return new Conflict({ code: "CONFLICT", detail: reason.detail })
    case "StaleVersion":
      return new PreconditionFailed({ code: "PRECONDITION_FAILED", detail: reason.message })
    case "ChangeNotApplied":
      return new InternalError({
        code: "SERVICE_ERROR",
        detail: "The change could not be applied, so nothing was changed; the server log says why."
      })
    case "ResourceStoreUnavailable":
      return new ServiceUnavailable({
        code: "SERVICE_ERROR",
        detail: reason.detail,
        retryAfterSeconds: STORE_RETRY_SECONDS
      })
  }
}

export const jobsProblem = (error: JobsError): BadRequest | NotFound | Conflict | ServiceUnavailable => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidJobCursor":
      return new BadRequest({
        code: "VALIDATION_ERROR",
        detail: reason.message,
        errors: [{ field: "/query/cursor", code: "INVALID_CURSOR", message: reason.message }]
      })
    case "JobNotFound":
      return new NotFound({ code: "NOT_FOUND", detail: reason.message })
    case "IdempotencyConflict":
    case "JobNotFinished":
      return new Conflict({ code: "CONFLICT", detail: reason.message })
    case "QueueFull":
      return new ServiceUnavailable({
        code: "SERVICE_ERROR",
        detail: reason.message,
        retryAfterSeconds: QUEUE_FULL_RETRY_SECONDS
      })
  }
}

/** A job store that cannot do its work (a full disk, a read-only or broken volume): nothing was accepted or changed. */
export const jobStoreProblem = (error: JobStoreError): ServiceUnavailable =>
  new ServiceUnavailable({
    code: "SERVICE_ERROR",
    detail: `The job store cannot take jobs now (${error.message}); nothing was changed or accepted. Try again later.`,
    retryAfterSeconds: STORE_RETRY_SECONDS
  })

/**
 * A problem as a handler's answer: a failure, which the endpoint declares,
 * or, for a 503, the response itself with its `Retry-After` (an endpoint's
 * declared errors cannot set headers).
 */
const answerProblem = <
  P extends BadRequest | NotFound | Conflict | PreconditionFailed | InternalError | ServiceUnavailable
>(
  problem: P
): Effect.Effect<HttpServerResponse, Exclude<P, ServiceUnavailable>> =>
  problem instanceof ServiceUnavailable ? answerWith(problem) : Effect.fail(problem as Exclude<P, ServiceUnavailable>)

/** A handler's answer to its `ResourcesError`; a change that did not apply is logged with its problems. */
export const answerResourcesError = (error: ResourcesError) =>
  Effect.suspend(() => {
    const logged = error.reason._tag === "ChangeNotApplied" ? Effect.logError(error.reason.message) : Effect.void
    return Effect.andThen(logged, answerProblem(resourcesProblem(error)))
  })

/** A handler's answer to the job queue's `JobsError`. */
export const answerJobsError = (
  error: JobsError
): Effect.Effect<HttpServerResponse, BadRequest | NotFound | Conflict> =>
  Effect.suspend(() => answerProblem(jobsProblem(error)))

/** A handler's answer to a job store that is down: logged, and 503 with `Retry-After`. */
export const answerJobStoreError = (error: JobStoreError): Effect.Effect<HttpServerResponse> =>
  Effect.andThen(
    Effect.logWarning("the job store cannot be used now", { error: error.message }),
    answerWith(jobStoreProblem(error))
  )

/** A review queue reason as its problem. */
export const reviewsProblem = (error: ReviewsError): BadRequest | NotFound | Conflict | ServiceUnavailable => {
  switch (error.reason) {
    case "invalid-domain":
      return new BadRequest({
        code: "VALIDATION_ERROR",
        detail: error.detail,
        errors: [{ field: "/path/domain", code: "INVALID_DOMAIN", message: "a domain name such as hfmt-hamburg.de" }]
      })
    case "invalid-cursor":
      return new BadRequest({
        code: "VALIDATION_ERROR",
        detail: error.detail,
        errors: [
          {
            field: "/query/cursor",
            code: "INVALID_CURSOR",
            message: "pass the nextCursor of a previous page as it was given"
          }
        ]
      })
    case "not-found":
      return new NotFound({ code: "NOT_FOUND", detail: error.detail })
    case "listed":
      return new Conflict({ code: "CONFLICT", detail: error.detail })
    case "unavailable":
      return new ServiceUnavailable({
        code: "SERVICE_ERROR",
        detail: error.detail,
        retryAfterSeconds: STORE_RETRY_SECONDS
      })
  }
}

/** A handler's answer to a `ReviewsError`; a store that is down is logged and answered 503 with `Retry-After`. */
export const answerReviewsError = (
  error: ReviewsError
): Effect.Effect<HttpServerResponse, BadRequest | NotFound | Conflict> =>
  Effect.suspend(() => {
    const logged =
      error.reason === "unavailable"
        ? Effect.logWarning("the review store cannot be used now", { error: error.detail })
        : Effect.void
    return Effect.andThen(logged, answerProblem(reviewsProblem(error)))
  })

/** A verification reason as its problem; none carries a code or an address. */
export const verificationsProblem = (
  error: VerificationsError
): BadRequest | NotFound | Conflict | Gone | TooManyRequests | ServiceUnavailable => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidVerificationRequest":
      return new BadRequest({ code: "VALIDATION_ERROR", detail: reason.detail, errors: reason.errors })
    case "TargetGroupNotFound":
    case "OfferNotFound":
    case "VerificationNotFound":
      return new NotFound({ code: "NOT_FOUND", detail: reason.message })
    case "WrongCode":
      return new BadRequest({
        code: "INVALID_CODE",
        detail: reason.message,
        attemptsRemaining: reason.attemptsRemaining
      })
    case "TooManyAttempts":
      return new BadRequest({ code: "TOO_MANY_ATTEMPTS", detail: reason.message, attemptsRemaining: 0 })
    case "VerificationExpired":
      return new Gone({ code: "VERIFICATION_EXPIRED", detail: reason.message })
    case "VerificationNotPending":
      return new Conflict({ code: "VERIFICATION_NOT_PENDING", detail: reason.message })
    case "RedemptionLimitReached":
      return new Conflict({ code: "REDEMPTION_LIMIT_REACHED", detail: reason.message })
    case "ResendTooSoon":
      return new TooManyRequests({
        code: "RESEND_TOO_SOON",
        detail: reason.message,
        retryAfterSeconds: reason.retryAfterSeconds
      })
    case "TooManyMessages":
    case "MailboxLimitReached":
      return new TooManyRequests({
        code: "TOO_MANY_MESSAGES",
        detail: reason.message,
        retryAfterSeconds: reason.retryAfterSeconds
      })
    case "VerificationUnavailable":
      return new ServiceUnavailable({
        code: "SERVICE_ERROR",
        detail: reason.detail,
        retryAfterSeconds: reason.retryAfterSeconds
      })
  }
}

/** A handler's answer to its `VerificationsError`: the problem, answered with `Retry-After` when it has one. */
export const answerVerificationsError = (error: VerificationsError) =>
  Effect.suspend(() => {
    const problem = verificationsProblem(error)
    return "retryAfterSeconds" in problem ? answerWith(problem) : Effect.fail(problem)
  })
