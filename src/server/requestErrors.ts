/**
 * Request decoding failures as problems, for the Effect app (the
 * `RequestErrors` transform) and the fast path alike: a body that is not
 * JSON (or not UTF-8) is `MALFORMED_JSON`, one past the size limit
 * `PAYLOAD_TOO_LARGE`; a body, query or path value that
 * does not match the contract is `VALIDATION_ERROR` with one
 * `{ field, code, message }` per issue, `field` a JSON pointer into the
 * request (`/emails/3`).
 *
 * Decoding stops at the first problem (the contract's parse options), so a
 * hostile body of a million unknown fields or invalid items costs one
 * issue, not a million: before, a 1.9 MB body of unknown fields answered
 * 14.8 MB of field errors and held the event loop for up to 1.6 s. A body
 * small enough to look at again (`LIST_ALL_BELOW_BYTES`) is decoded a
 * second time collecting every problem, so a person fixing a request sees
 * all of them; an answer lists at most `FIELD_ERRORS_LISTED`, with the count.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CampusgateApi, RequestErrors } from "../api/Api.ts"
import {
  type BadRequest,
  type FieldError,
  malformedJson,
  type PayloadTooLarge,
  payloadTooLarge,
  validationFailed
} from "../api/problems.ts"
import { fieldErrorsOf } from "../domain/fieldErrors.ts"

/** An answer lists at most this many field errors (and says how many there were). */
export const FIELD_ERRORS_LISTED = 20
/** Bodies up to this size are decoded again after a failure, to list every problem. */
export const LIST_ALL_BELOW_BYTES = 64 * 1024

/** How the contract decodes request bodies: unknown fields are problems; the first problem ends decoding. */
export const payloadParseOptions = Context.getOrUndefined(CampusgateApi.annotations, HttpApi.PayloadParseOptions)

/**
 * A body larger than the endpoint accepts: its declared length against
 * `limit` when known (413), with what to do instead — several jobs for a
 * job upload (`upload`), bulk-async for any other batch.
 */
export const bodyTooLarge = (declared?: {
  readonly bytes: number
  readonly limit: number
  readonly upload?: boolean
}): PayloadTooLarge => {
  const instead =
    declared?.upload === true ? "split it into several jobs" : "split it, or use bulk-async for large batches"
  return payloadTooLarge(
    declared === undefined
      ? `The request body is larger than this server accepts; ${instead}.`
      : `The request body (${declared.bytes} bytes) is larger than this endpoint accepts (${declared.limit} bytes); ${instead}.`
  )
}

/** A JSON body read by hand that could not be read: past the size limit while it streamed in (413), else not JSON. */
export const unreadableBody = (error: HttpServerError.HttpServerError): BadRequest | PayloadTooLarge =>
  error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge" ? bodyTooLarge() : malformedJson()

const counted = (count: number, listed: number): string => {
  if (count <= listed) return count === 1 ? "1 problem" : `${count} problems`
  return `${count} problems; the first ${listed} are listed`
}

/**
 * The problem for a request value (`kind`: the request slot) that does not
 * decode. `listedAll: false` when decoding stopped at the first problem of
 * a body too large to decode again.
 */
export const requestProblem = (
  kind: string,
  cause: Schema.SchemaError,
  options: { readonly listedAll?: boolean } = {}
): BadRequest => {
  const issues = fieldErrorsOf(cause, kind === "Payload" || kind === "Body" ? "" : `/${kind.toLowerCase()}`)
  if (issues.length === 1 && issues[0]!.field === "/" && /JSON/.test(issues[0]!.message)) {
    return malformedJson()
  }
  const errors: Array<FieldError> = issues.slice(0, FIELD_ERRORS_LISTED)
  const detail =
    options.listedAll === false
      ? "The request is not valid; the body is too large to list every problem, so the first is listed."
      : `The request is not valid: ${counted(issues.length, errors.length)}.`
  return validationFailed(detail, errors)
}

/** The JSON payload schema an endpoint declares, if it takes a buffered JSON body. */
export const jsonPayloadSchema = (endpoint: HttpApiEndpoint.Top): Schema.Top | undefined => {
  const json = endpoint.payload.get("application/json")
  return json?.encoding._tag === "Json" ? json.schemas[0] : undefined
}

/**
 * The problem for a JSON body (`input`, parsed from `bodyBytes` bytes) that
 * failed decoding with `first`: every problem of a small body, else the first.
 */
export const payloadProblem = (
  schema: Schema.Top,
  input: unknown,
  bodyBytes: number,
  first: Schema.SchemaError
): BadRequest => {
  if (bodyBytes > LIST_ALL_BELOW_BYTES) return requestProblem("Payload", first, { listedAll: false })
  const all = Schema.decodeUnknownExit(schema as Schema.Codec<unknown>, { ...payloadParseOptions, errors: "all" })(
    input
  )
  const failure = Exit.isFailure(all) ? all.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  return requestProblem("Payload", (failure?.error as Schema.SchemaError | undefined) ?? first)
}

/** The body of the request being served, parsed again, for `payloadProblem` (the framework keeps its bytes). */
const bodyOfRequest = Effect.gen(function* () {
  const request = Option.getOrUndefined(yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest))
  if (request === undefined) return undefined
  const text = yield* Effect.option(request.text)
  if (Option.isNone(text)) return undefined
  try {
    return { input: JSON.parse(text.value) as unknown, bytes: Buffer.byteLength(text.value) }
  } catch {
    return undefined
  }
})

export const RequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (error, { endpoint }) =>
  Effect.gen(function* () {
    const schema = error.kind === "Payload" || error.kind === "Body" ? jsonPayloadSchema(endpoint) : undefined
    const body = schema === undefined ? undefined : yield* bodyOfRequest
    return yield* Effect.fail(
      schema === undefined || body === undefined
        ? requestProblem(error.kind, error.cause)
        : payloadProblem(schema, body.input, body.bytes, error.cause)
    )
  })
)
