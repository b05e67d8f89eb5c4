/**
 * Every error the HTTP API answers, as RFC 9457 problem details
 * (`application/problem+json`) with the extensions DESIGN.md fixes: `code`
 * (the spec's error codes), `requestId`, and for request-validation failures
 * `errors: [{ field, code, message }]`. One class per HTTP status; classes
 * that share a status are told apart by `type`.
 *
 * A problem is made by its named constructor (`notFound(detail)`,
 * `validationFailed(detail, errors)`, `storeUnavailable(detail)`, ...), one
 * per code, never by its class: the constructor fixes the status and the
 * code, and for a cause the caller is told to wait out, the `Retry-After`
 * from the one table of waits (`domain/retryAfter.ts`). Which reason
 * answers which problem is the server's error table (`server/problemOf.ts`).
 */

import * as Effect from "effect/Effect"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { FieldError } from "../domain/errors.ts"
import { RETRY_AFTER_SECONDS } from "../domain/retryAfter.ts"

const typeBase = "https://campusgate.dev/problems/"

export { FieldError } from "../domain/errors.ts"

/**
 * Every problem names its request; handlers construct problems without it
 * and the server stamps it on the way out (`RequestIds`), once for every
 * answer, the fast path's included.
 */
const common = {
  detail: Schema.String,
  requestId: Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed("")))
}

/** A problem type's declaration: its URI under `typeBase`, its status and the status's title. */
const declared = <const Status extends number, const Name extends string>(
  status: Status,
  name: Name,
  title: string
) => ({
  type: `${typeBase}${name}` as const,
  status,
  title
})

export class BadRequest extends HttpApiError.Problem<BadRequest>()(
  "BadRequest",
  declared(400, "bad-request", "Bad Request"),
  {
    ...common,
    code: Schema.Literals([
      "VALIDATION_ERROR",
      "MALFORMED_JSON",
      "INVALID_EMAIL_FORMAT",
      "INVALID_CODE",
      "TOO_MANY_ATTEMPTS"
    ]),
    errors: Schema.optionalKey(Schema.Array(FieldError)),
    /** For `INVALID_CODE` and `TOO_MANY_ATTEMPTS`: wrong codes the verification still accepts. */
    attemptsRemaining: Schema.optionalKey(Count)
  }
) {}

export class Unauthorized extends HttpApiError.Problem<Unauthorized>()(
  "Unauthorized",
  declared(401, "unauthorized", "Unauthorized"),
  { ...common, code: Schema.Literals(["MISSING_API_KEY", "INVALID_API_KEY"]) }
) {}

export class Forbidden extends HttpApiError.Problem<Forbidden>()(
  "Forbidden",
  declared(403, "insufficient-scope", "Forbidden"),
  {
    ...common,
    code: Schema.Literal("INSUFFICIENT_SCOPE"),
    requiredScope: Schema.String,
    /** For a key asked to make a key: the scopes asked for that it does not hold itself. */
    missingScopes: Schema.optionalKey(Schema.Array(Schema.String))
  }
) {}

/**
 * A request authenticated by the console's session cookie that changes
 * something without the session's `X-CSRF-Token`, or from another origin
 * (`server/credentials.ts`).
 */
export class CsrfFailed extends HttpApiError.Problem<CsrfFailed>()(
  "CsrfFailed",
  declared(403, "csrf-failed", "Forbidden"),
  { ...common, code: Schema.Literal("CSRF_FAILED") }
) {}

export class NotFound extends HttpApiError.Problem<NotFound>()("NotFound", declared(404, "not-found", "Not Found"), {
  ...common,
  code: Schema.Literal("NOT_FOUND")
}) {}

export class MethodNotAllowed extends HttpApiError.Problem<MethodNotAllowed>()(
  "MethodNotAllowed",
  declared(405, "method-not-allowed", "Method Not Allowed"),
  { ...common, code: Schema.Literal("METHOD_NOT_ALLOWED") }
) {}

export class Conflict extends HttpApiError.Problem<Conflict>()("Conflict", declared(409, "conflict", "Conflict"), {
  ...common,
  code: Schema.Literals(["CONFLICT", "VERIFICATION_NOT_PENDING", "REDEMPTION_LIMIT_REACHED"])
}) {}

export class Gone extends HttpApiError.Problem<Gone>()("Gone", declared(410, "gone", "Gone"), {
  ...common,
  code: Schema.Literal("VERIFICATION_EXPIRED")
}) {}

export class PreconditionFailed extends HttpApiError.Problem<PreconditionFailed>()(
  "PreconditionFailed",
  declared(412, "precondition-failed", "Precondition Failed"),
  { ...common, code: Schema.Literal("PRECONDITION_FAILED") }
) {}

export class PayloadTooLarge extends HttpApiError.Problem<PayloadTooLarge>()(
  "PayloadTooLarge",
  declared(413, "payload-too-large", "Payload Too Large"),
  { ...common, code: Schema.Literal("PAYLOAD_TOO_LARGE") }
) {}

export class UnsupportedMediaType extends HttpApiError.Problem<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  declared(415, "unsupported-media-type", "Unsupported Media Type"),
  { ...common, code: Schema.Literal("UNSUPPORTED_MEDIA_TYPE") }
) {}

export class TooManyRequests extends HttpApiError.Problem<TooManyRequests>()(
  "TooManyRequests",
  declared(429, "rate-limit-exceeded", "Too Many Requests"),
  {
    ...common,
    code: Schema.Literals(["RATE_LIMIT_EXCEEDED", "RESEND_TOO_SOON", "TOO_MANY_MESSAGES"]),
    retryAfterSeconds: Count
  }
) {}

export class InternalError extends HttpApiError.Problem<InternalError>()(
  "InternalError",
  declared(500, "service-error", "Internal Server Error"),
  { ...common, code: Schema.Literal("SERVICE_ERROR") }
) {}

export class ServiceUnavailable extends HttpApiError.Problem<ServiceUnavailable>()(
  "ServiceUnavailable",
  declared(503, "service-unavailable", "Service Unavailable"),
  { ...common, code: Schema.Literals(["SERVICE_ERROR", "STORE_LOST"]), retryAfterSeconds: Count }
) {}

// The named constructors, by status.

/** 400 `VALIDATION_ERROR`: the request is not valid, with the field errors that say where. */
export const validationFailed = (detail: string, errors: ReadonlyArray<FieldError>): BadRequest =>
  new BadRequest({ code: "VALIDATION_ERROR", detail, errors })

/** 400 `VALIDATION_ERROR` for one field: the problem with `field` (a JSON pointer) alone. */
export const invalidField = (detail: string, field: string, code: string, message: string): BadRequest =>
  validationFailed(detail, [{ field, code, message }])

/** 400 `MALFORMED_JSON`: the body is not JSON (with what a streamed reader found, for a job's upload). */
export const malformedJson = (
  detail = "The request body is not valid JSON.",
  errors?: ReadonlyArray<FieldError>
): BadRequest =>
  new BadRequest(errors === undefined ? { code: "MALFORMED_JSON", detail } : { code: "MALFORMED_JSON", detail, errors })

/** 400 `INVALID_EMAIL_FORMAT`: the one email of a request does not parse. */
export const invalidEmailFormat = (detail: string, errors: ReadonlyArray<FieldError>): BadRequest =>
  new BadRequest({ code: "INVALID_EMAIL_FORMAT", detail, errors })

/** 400 `INVALID_CODE`: a wrong verification code, and how many more the verification accepts. */
export const invalidCode = (detail: string, attemptsRemaining: number): BadRequest =>
  new BadRequest({ code: "INVALID_CODE", detail, attemptsRemaining })

/** 400 `TOO_MANY_ATTEMPTS`: the last wrong code a verification accepted. */
export const tooManyAttempts = (detail: string): BadRequest =>
  new BadRequest({ code: "TOO_MANY_ATTEMPTS", detail, attemptsRemaining: 0 })

/** 401 `MISSING_API_KEY`: no credential. */
export const missingApiKey = (detail: string): Unauthorized => new Unauthorized({ code: "MISSING_API_KEY", detail })

/** 401 `INVALID_API_KEY`: a credential that is not (or no longer) good. */
export const invalidApiKey = (detail: string): Unauthorized => new Unauthorized({ code: "INVALID_API_KEY", detail })

/** 403 `INSUFFICIENT_SCOPE`: the key lacks the scope the endpoint needs. */
export const insufficientScope = (detail: string, requiredScope: string): Forbidden =>
  new Forbidden({ code: "INSUFFICIENT_SCOPE", detail, requiredScope })

/**
 * 403 `INSUFFICIENT_SCOPE` for a key asked to make a key with scopes it does
 * not hold: `missingScopes` lists them, `requiredScope` holds them as one
 * space-separated scope string (RFC 6749, 3.3).
 */
export const scopesNotHeld = (detail: string, missing: ReadonlyArray<string>): Forbidden =>
  new Forbidden({ code: "INSUFFICIENT_SCOPE", detail, requiredScope: missing.join(" "), missingScopes: missing })

/** 403 `CSRF_FAILED`: a change made with the console's session without its CSRF token or own origin. */
export const csrfFailed = (detail: string): CsrfFailed => new CsrfFailed({ code: "CSRF_FAILED", detail })

/** 404 `NOT_FOUND`. */
export const notFound = (detail: string): NotFound => new NotFound({ code: "NOT_FOUND", detail })

/** 405 `METHOD_NOT_ALLOWED`. */
export const methodNotAllowed = (detail: string): MethodNotAllowed =>
  new MethodNotAllowed({ code: "METHOD_NOT_ALLOWED", detail })

/** 409 `CONFLICT`: the request conflicts with what exists or with its state. */
export const conflict = (detail: string): Conflict => new Conflict({ code: "CONFLICT", detail })

/** 409 `VERIFICATION_NOT_PENDING`. */
export const verificationNotPending = (detail: string): Conflict =>
  new Conflict({ code: "VERIFICATION_NOT_PENDING", detail })

/** 409 `REDEMPTION_LIMIT_REACHED`. */
export const redemptionLimitReached = (detail: string): Conflict =>
  new Conflict({ code: "REDEMPTION_LIMIT_REACHED", detail })

/** 410 `VERIFICATION_EXPIRED`. */
export const verificationExpired = (detail: string): Gone => new Gone({ code: "VERIFICATION_EXPIRED", detail })

/** 412 `PRECONDITION_FAILED`: the version the request named is not the current one. */
export const preconditionFailed = (detail: string): PreconditionFailed =>
  new PreconditionFailed({ code: "PRECONDITION_FAILED", detail })

/** 413 `PAYLOAD_TOO_LARGE`. */
export const payloadTooLarge = (detail: string): PayloadTooLarge =>
  new PayloadTooLarge({ code: "PAYLOAD_TOO_LARGE", detail })

/** 415 `UNSUPPORTED_MEDIA_TYPE`. */
export const unsupportedMediaType = (detail: string): UnsupportedMediaType =>
  new UnsupportedMediaType({ code: "UNSUPPORTED_MEDIA_TYPE", detail })

/** 429 `RATE_LIMIT_EXCEEDED`: the budget's window, `retryAfterSeconds` from now, lets the next one in. */
export const rateLimitExceeded = (detail: string, retryAfterSeconds: number): TooManyRequests =>
  new TooManyRequests({ code: "RATE_LIMIT_EXCEEDED", detail, retryAfterSeconds })

/** 429 `RATE_LIMIT_EXCEEDED`: the key already sends as many job uploads as it may. */
export const uploadsBusy = (detail: string): TooManyRequests =>
  rateLimitExceeded(detail, RETRY_AFTER_SECONDS.uploadsBusy)

/** 429 `RESEND_TOO_SOON`: a verification's next message is `retryAfterSeconds` away. */
export const resendTooSoon = (detail: string, retryAfterSeconds: number): TooManyRequests =>
  new TooManyRequests({ code: "RESEND_TOO_SOON", detail, retryAfterSeconds })

/** 429 `TOO_MANY_MESSAGES`: an address's message limit, lifted `retryAfterSeconds` from now. */
export const tooManyMessages = (detail: string, retryAfterSeconds: number): TooManyRequests =>
  new TooManyRequests({ code: "TOO_MANY_MESSAGES", detail, retryAfterSeconds })

/** 500 `SERVICE_ERROR`: nothing the caller can change; the internals stay in the log. */
export const serviceError = (detail: string): InternalError => new InternalError({ code: "SERVICE_ERROR", detail })

/** 503 `SERVICE_ERROR`, to be tried again after `retryAfterSeconds` (a wait a reason carries, from `domain/retryAfter.ts`). */
export const serviceUnavailable = (detail: string, retryAfterSeconds: number): ServiceUnavailable =>
  new ServiceUnavailable({ code: "SERVICE_ERROR", detail, retryAfterSeconds })

/** 503: a store cannot be used now, whatever its kind; nothing was changed. */
export const storeUnavailable = (detail: string): ServiceUnavailable =>
  serviceUnavailable(detail, RETRY_AFTER_SECONDS.storeUnavailable)

/**
 * 503 `STORE_LOST`: the shared store came back empty or replaced, so the
 * daemon refuses every change until an operator restores it; `detail` says
 * what to do.
 */
export const storeLost = (detail: string): ServiceUnavailable =>
  new ServiceUnavailable({ code: "STORE_LOST", detail, retryAfterSeconds: RETRY_AFTER_SECONDS.storeLost })

/** 503: a queue of waiting work is full; nothing was accepted. */
export const queueFull = (detail: string): ServiceUnavailable =>
  serviceUnavailable(detail, RETRY_AFTER_SECONDS.queueFull)

/** 503: the files a page is served from have not been built. */
export const notBuilt = (detail: string): ServiceUnavailable => serviceUnavailable(detail, RETRY_AFTER_SECONDS.notBuilt)

/** Problem classes by tag, to recognise a problem and copy it with its request id. */
const problemClasses = {
  BadRequest,
  Unauthorized,
  Forbidden,
  CsrfFailed,
  NotFound,
  MethodNotAllowed,
  Conflict,
  Gone,
  PreconditionFailed,
  PayloadTooLarge,
  UnsupportedMediaType,
  TooManyRequests,
  InternalError,
  ServiceUnavailable
} as const

const problemDecoders = Object.values(problemClasses).map((Class) =>
  Schema.decodeUnknownOption(Class as unknown as Schema.Codec<Problem, unknown>)
)

/**
 * The problem a problem-details body describes (its `type` tells the
 * class), as its class: how clients see problems an endpoint does not
 * declare. Undefined when the body is not one of ours or not of `status`.
 */
export const problemFromBody = (status: number, body: unknown): Problem | undefined => {
  for (const decode of problemDecoders) {
    const problem = decode(body)
    if (problem._tag === "Some" && problem.value.status === status) return problem.value
  }
  return undefined
}

/** Whether a failure is one of the API's problems. */
export const isProblem = (error: unknown): error is Problem =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  Object.hasOwn(problemClasses, error._tag as string) &&
  error instanceof problemClasses[error._tag as keyof typeof problemClasses]

/** The problem naming `requestId`: the one way a problem gets its request's id. */
export const withRequestId = <P extends Problem>(problem: P, requestId: string): P => {
  if (problem.requestId === requestId) return problem
  const Class = problemClasses[problem._tag] as unknown as new (fields: object) => P
  return new Class({ ...problem, requestId })
}

/** Any problem the API answers. */
export type Problem =
  | BadRequest
  | Unauthorized
  | Forbidden
  | CsrfFailed
  | NotFound
  | MethodNotAllowed
  | Conflict
  | Gone
  | PreconditionFailed
  | PayloadTooLarge
  | UnsupportedMediaType
  | TooManyRequests
  | InternalError
  | ServiceUnavailable
