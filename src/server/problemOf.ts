/**
 * The error table: every reason the application's services fail with —
 * resources, validation, jobs and the job store, job uploads, reviews,
 * verifications, API keys — and a store outage met as a defect, each as the problem
 * it answers, so a reason's HTTP status, code and `Retry-After` are decided
 * here once: the status and code by the named constructor of
 * `api/problems.ts` its row calls, the wait by the cause's duration in
 * `domain/retryAfter.ts` (or, where the reason computes it, the reason's
 * own: a resend cooldown, a message window).
 *
 * The reasons carry no HTTP status of their own. Their `httpApiStatus`
 * annotations were removed rather than read: Effect's `HttpApi` reads that
 * annotation only on an error an endpoint declares, and our endpoints
 * declare the problems instead, so the annotations were an unread second
 * copy of this table that could drift from it; a status alone does not make
 * the answer either (its code, the field errors, the wait); and the
 * services below the transports know nothing of HTTP (ARCHITECTURE.md).
 * Unexpected failures keep their internals out of the answer (they go to
 * the log).
 */
import * as Effect from "effect/Effect"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"
import {
  conflict,
  invalidCode,
  invalidField,
  malformedJson,
  notFound,
  type Problem,
  payloadTooLarge,
  preconditionFailed,
  queueFull,
  redemptionLimitReached,
  resendTooSoon,
  type ServiceUnavailable,
  scopesNotHeld,
  serviceError,
  serviceUnavailable,
  storeUnavailable,
  type TooManyRequests,
  tooManyAttempts,
  tooManyMessages,
  unsupportedMediaType,
  validationFailed,
  verificationExpired,
  verificationNotPending
} from "../api/problems.ts"
import type { KeysError } from "../app/KeysError.ts"
import type { ResourcesError } from "../app/ResourcesError.ts"
import type { ReviewsError } from "../app/Reviews.ts"
import type { ValidationError } from "../app/Validation.ts"
import type { JobsError } from "../jobs/errors.ts"
import type { JobStoreError } from "../jobs/JobStore.ts"
import type { JobInputError } from "../jobs/jobInputError.ts"
import { isStoreOutage } from "../store/outage.ts"
import type { VerificationsError } from "../verification/VerificationsError.ts"
import { answerWith } from "./problemResponse.ts"

/** A reason of a service's error: one row of the table each, by its tag. */
type Reason =
  | ResourcesError["reason"]
  | ValidationError["reason"]
  | JobsError["reason"]
  | VerificationsError["reason"]
  | KeysError["reason"]

type Rows = { readonly [Tag in Reason["_tag"]]: (reason: Extract<Reason, { readonly _tag: Tag }>) => Problem } & {
  readonly [Code in JobInputError["code"]]: (error: JobInputError) => Problem
} & { readonly [Word in ReviewsError["reason"]]: (error: ReviewsError) => Problem } & {
  readonly JobStoreError: (error: JobStoreError) => Problem
  readonly StoreOutage: () => Problem
}

const CURSOR_MESSAGE = "pass the nextCursor of a previous page as it was given"

const table = {
  // resources (`app/ResourcesError.ts`)
  InvalidResource: (reason) => validationFailed(reason.detail, reason.errors),
  ResourceNotFound: (reason) => notFound(reason.message),
  ResourceConflict: (reason) => conflict(reason.detail),
  StaleVersion: (reason) => preconditionFailed(reason.message),
  ChangeNotApplied: () =>
    serviceError("The change could not be applied, so nothing was changed; the server log says why."),
  ResourceStoreUnavailable: (reason) => storeUnavailable(reason.detail),
  // a target the caller's team cannot see (`domain/errors.ts`: validation and verifications)
  TargetGroupNotFound: (reason) => notFound(reason.message),
  OfferNotFound: (reason) => notFound(reason.message),
  // the job queue (`jobs/errors.ts`) and the job store
  InvalidJobCursor: (reason) => invalidField(reason.message, "/query/cursor", "INVALID_CURSOR", reason.message),
  JobNotFound: (reason) => notFound(reason.message),
  IdempotencyConflict: (reason) => conflict(reason.message),
  JobNotFinished: (reason) => conflict(reason.message),
  QueueFull: (reason) => queueFull(reason.message),
  JobStoreError: (error) =>
    storeUnavailable(
      `The job store cannot take jobs now (${error.message}); nothing was changed or accepted. Try again later.`
    ),
  // a job upload that cannot become a job (`jobs/jobInputError.ts`: the slice names the code, a row each)
  VALIDATION_ERROR: (error) => validationFailed(error.detail, error.errors),
  MALFORMED_JSON: (error) => malformedJson(error.detail, error.errors),
  PAYLOAD_TOO_LARGE: (error) => payloadTooLarge(error.detail),
  UNSUPPORTED_MEDIA_TYPE: (error) => unsupportedMediaType(error.detail),
  // the review queue (`app/Reviews.ts`)
  "invalid-domain": (error) =>
    invalidField(error.detail, "/path/domain", "INVALID_DOMAIN", "a domain name such as hfmt-hamburg.de"),
  "invalid-cursor": (error) => invalidField(error.detail, "/query/cursor", "INVALID_CURSOR", CURSOR_MESSAGE),
  "not-found": (error) => notFound(error.detail),
  listed: (error) => conflict(error.detail),
  unavailable: (error) => storeUnavailable(error.detail),
  // verifications (`verification/VerificationsError.ts`); none carries a code or an address
  InvalidVerificationRequest: (reason) => validationFailed(reason.detail, reason.errors),
  VerificationNotFound: (reason) => notFound(reason.message),
  WrongCode: (reason) => invalidCode(reason.message, reason.attemptsRemaining),
  TooManyAttempts: (reason) => tooManyAttempts(reason.message),
  VerificationExpired: (reason) => verificationExpired(reason.message),
  VerificationNotPending: (reason) => verificationNotPending(reason.message),
  RedemptionLimitReached: (reason) => redemptionLimitReached(reason.message),
  ResendTooSoon: (reason) => resendTooSoon(reason.message, reason.retryAfterSeconds),
  TooManyMessages: (reason) => tooManyMessages(reason.message, reason.retryAfterSeconds),
  MailboxLimitReached: (reason) => tooManyMessages(reason.message, reason.retryAfterSeconds),
  VerificationUnavailable: (reason) => serviceUnavailable(reason.detail, reason.retryAfterSeconds),
  // API keys managed by a key (`app/Keys.ts`)
  InvalidKeyRequest: (reason) => validationFailed(reason.detail, reason.errors),
  ScopesNotHeld: (reason) => scopesNotHeld(reason.message, reason.missing),
  KeyNotFound: (reason) => notFound(reason.message),
  KeyAlreadyRevoked: (reason) => conflict(reason.message),
  KeyInConfigDirectory: (reason) => conflict(reason.message),
  InvalidKeyCursor: (reason) => invalidField(reason.message, "/query/cursor", "INVALID_CURSOR", CURSOR_MESSAGE),
  KeyChangeNotApplied: (reason) => serviceError(`${reason.detail} The server log says why.`),
  KeyStoreUnavailable: (reason) => storeUnavailable(reason.detail),
  // a store of any kind that cannot be used now, met as a defect (`store/outage.ts`)
  StoreOutage: () => storeUnavailable("A store cannot be reached right now; retry shortly.")
} satisfies Rows

type Table = typeof table
/** The problem the table answers for `R`, as precise as the row. */
export type ProblemOf<R extends Reason> = R extends Reason ? ReturnType<Table[R["_tag"]]> : never

/** The row of `key`, called with `input`. */
const row = (key: keyof Table, input: unknown): Problem => (table[key] as (input: unknown) => Problem)(input)

/** A reason's problem: its row of the table. */
export const problemOfReason = <R extends Reason>(reason: R): ProblemOf<R> => row(reason._tag, reason) as ProblemOf<R>

/** The problem of a job upload that cannot become a job. */
export const jobInputProblem = (error: JobInputError) =>
  row(error.code, error) as ReturnType<Table[JobInputError["code"]]>

/** The problem of a review request's failure. */
export const reviewsProblem = (error: ReviewsError) =>
  row(error.reason, error) as ReturnType<Table[ReviewsError["reason"]]>

export const resourcesProblem = (error: ResourcesError) => problemOfReason(error.reason)
export const jobsProblem = (error: JobsError) => problemOfReason(error.reason)
export const verificationsProblem = (error: VerificationsError) => problemOfReason(error.reason)
/** A job store that cannot do its work (a full disk, a read-only or broken volume): nothing was accepted or changed. */
export const jobStoreProblem = table.JobStoreError

/** The 503 of a defect that is a store outage (of any kind: `store/outage.ts`); undefined for any other defect. */
export const storeOutageProblem = (defect: unknown): ServiceUnavailable | undefined =>
  isStoreOutage(defect) ? table.StoreOutage() : undefined

/**
 * A problem as a handler's answer: a failure, which the endpoint declares,
 * or, for one that says when to retry (429, 503), the response itself with
 * its `Retry-After` (an endpoint's declared errors cannot set headers).
 */
const answerProblem = <P extends Problem>(
  problem: P
): Effect.Effect<HttpServerResponse, Exclude<P, TooManyRequests | ServiceUnavailable>> =>
  "retryAfterSeconds" in problem
    ? answerWith(problem)
    : Effect.fail(problem as Exclude<P, TooManyRequests | ServiceUnavailable>)

/** A handler's answer to its `ResourcesError`; a change that did not apply is logged with its problems. */
export const answerResourcesError = (error: ResourcesError) =>
  Effect.suspend(() => {
    const logged = error.reason._tag === "ChangeNotApplied" ? Effect.logError(error.reason.message) : Effect.void
    return Effect.andThen(logged, answerProblem(resourcesProblem(error)))
  })

/** A handler's answer to the job queue's `JobsError`. */
export const answerJobsError = (error: JobsError) => Effect.suspend(() => answerProblem(jobsProblem(error)))

/** A handler's answer to a job store that is down: logged, and 503 with `Retry-After`. */
export const answerJobStoreError = (error: JobStoreError): Effect.Effect<HttpServerResponse> =>
  Effect.andThen(
    Effect.logWarning("the job store cannot be used now", { error: error.message }),
    answerWith(jobStoreProblem(error))
  )

/** A handler's answer to a `ReviewsError`; a store that is down is logged and answered 503 with `Retry-After`. */
export const answerReviewsError = (error: ReviewsError) =>
  Effect.suspend(() => {
    const logged =
      error.reason === "unavailable"
        ? Effect.logWarning("the review store cannot be used now", { error: error.detail })
        : Effect.void
    return Effect.andThen(logged, answerProblem(reviewsProblem(error)))
  })

/** A handler's answer to a `KeysError`; a change that did not apply is logged with its problems, a store that is down too. */
export const answerKeysError = (error: KeysError) =>
  Effect.suspend(() => {
    const { reason } = error
    const logged =
      reason._tag === "KeyChangeNotApplied"
        ? Effect.logError(reason.message)
        : reason._tag === "KeyStoreUnavailable"
          ? Effect.logWarning("the API key store cannot be used now", { error: reason.detail })
          : Effect.void
    return Effect.andThen(logged, answerProblem(problemOfReason(reason)))
  })

/** A handler's answer to its `VerificationsError`: the problem, answered with `Retry-After` when it has one. */
export const answerVerificationsError = (error: VerificationsError) =>
  Effect.suspend(() => answerProblem(verificationsProblem(error)))
