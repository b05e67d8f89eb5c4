/**
 * Every error the HTTP API answers, as RFC 9457 problem details
 * (`application/problem+json`) with the extensions DESIGN.md fixes: `code`
 * (the spec's error codes), `requestId`, and for request-validation failures
 * `errors: [{ field, code, message }]`. One class per HTTP status; classes
 * that share a status are told apart by `type`.
 */

import * as Effect from "effect/Effect"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { FieldError } from "../domain/errors.ts"

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

export class BadRequest extends HttpApiError.Problem<BadRequest>()(
  "BadRequest",
  { type: `${typeBase}bad-request`, status: 400, title: "Bad Request" },
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
  { type: `${typeBase}unauthorized`, status: 401, title: "Unauthorized" },
  { ...common, code: Schema.Literals(["MISSING_API_KEY", "INVALID_API_KEY"]) }
) {}

export class Forbidden extends HttpApiError.Problem<Forbidden>()(
  "Forbidden",
  { type: `${typeBase}insufficient-scope`, status: 403, title: "Forbidden" },
  { ...common, code: Schema.Literal("INSUFFICIENT_SCOPE"), requiredScope: Schema.String }
) {}

/**
 * A request authenticated by the console's session cookie that changes
 * something without the session's `X-CSRF-Token`, or from another origin
 * (`server/credentials.ts`).
 */
export class CsrfFailed extends HttpApiError.Problem<CsrfFailed>()(
  "CsrfFailed",
  { type: `${typeBase}csrf-failed`, status: 403, title: "Forbidden" },
  { ...common, code: Schema.Literal("CSRF_FAILED") }
) {}

export class NotFound extends HttpApiError.Problem<NotFound>()(
  "NotFound",
  { type: `${typeBase}not-found`, status: 404, title: "Not Found" },
  { ...common, code: Schema.Literal("NOT_FOUND") }
) {}

export class MethodNotAllowed extends HttpApiError.Problem<MethodNotAllowed>()(
  "MethodNotAllowed",
  { type: `${typeBase}method-not-allowed`, status: 405, title: "Method Not Allowed" },
  { ...common, code: Schema.Literal("METHOD_NOT_ALLOWED") }
) {}

export class Conflict extends HttpApiError.Problem<Conflict>()(
  "Conflict",
  { type: `${typeBase}conflict`, status: 409, title: "Conflict" },
  { ...common, code: Schema.Literals(["CONFLICT", "VERIFICATION_NOT_PENDING", "REDEMPTION_LIMIT_REACHED"]) }
) {}

export class Gone extends HttpApiError.Problem<Gone>()(
  "Gone",
  { type: `${typeBase}gone`, status: 410, title: "Gone" },
  { ...common, code: Schema.Literal("VERIFICATION_EXPIRED") }
) {}

export class PreconditionFailed extends HttpApiError.Problem<PreconditionFailed>()(
  "PreconditionFailed",
  { type: `${typeBase}precondition-failed`, status: 412, title: "Precondition Failed" },
  { ...common, code: Schema.Literal("PRECONDITION_FAILED") }
) {}

export class PayloadTooLarge extends HttpApiError.Problem<PayloadTooLarge>()(
  "PayloadTooLarge",
  { type: `${typeBase}payload-too-large`, status: 413, title: "Payload Too Large" },
  { ...common, code: Schema.Literal("PAYLOAD_TOO_LARGE") }
) {}

export class UnsupportedMediaType extends HttpApiError.Problem<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  { type: `${typeBase}unsupported-media-type`, status: 415, title: "Unsupported Media Type" },
  { ...common, code: Schema.Literal("UNSUPPORTED_MEDIA_TYPE") }
) {}

export class TooManyRequests extends HttpApiError.Problem<TooManyRequests>()(
  "TooManyRequests",
  { type: `${typeBase}rate-limit-exceeded`, status: 429, title: "Too Many Requests" },
  {
    ...common,
    code: Schema.Literals(["RATE_LIMIT_EXCEEDED", "RESEND_TOO_SOON", "TOO_MANY_MESSAGES"]),
    retryAfterSeconds: Count
  }
) {}

export class InternalError extends HttpApiError.Problem<InternalError>()(
  "InternalError",
  { type: `${typeBase}service-error`, status: 500, title: "Internal Server Error" },
  { ...common, code: Schema.Literal("SERVICE_ERROR") }
) {}

export class ServiceUnavailable extends HttpApiError.Problem<ServiceUnavailable>()(
  "ServiceUnavailable",
  { type: `${typeBase}service-unavailable`, status: 503, title: "Service Unavailable" },
  { ...common, code: Schema.Literal("SERVICE_ERROR"), retryAfterSeconds: Count }
) {}

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
