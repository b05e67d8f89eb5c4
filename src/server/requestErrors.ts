/**
 * Request decoding failures as problems: a body that is not JSON is
 * `MALFORMED_JSON`; a body, query or path value that does not match the
 * contract is `VALIDATION_ERROR` with one `{ field, code, message }` per
 * issue, `field` a JSON pointer into the request (`/emails/3`).
 */
import * as Effect from "effect/Effect"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { RequestErrors } from "../api/Api.ts"
import { BadRequest, type FieldError } from "../api/problems.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const codeOf = (message: string): string => {
  if (message === "Missing key") return "REQUIRED"
  if (message === "Expected no excess property") return "UNKNOWN_FIELD"
  if (/^Expected (string|number|boolean|array|object|[A-Z])/i.test(message)) return "INVALID_TYPE"
  return "INVALID_VALUE"
}

const plain = (message: string): string => {
  if (message === "Missing key") return "this field is required"
  if (message === "Expected no excess property") return "unknown field"
  return message
}

const pointer = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("")

export const malformedJson = (): BadRequest =>
  new BadRequest({ code: "MALFORMED_JSON", detail: "The request body is not valid JSON." })

/** The problem for a request value (`kind`: the request slot) that does not decode. */
export const requestProblem = (kind: string, cause: Schema.SchemaError): BadRequest => {
  const issues = formatter(cause.issue).issues
  if (issues.length === 1 && (issues[0]!.path ?? []).length === 0 && /JSON/.test(issues[0]!.message)) {
    return malformedJson()
  }
  const where = kind === "Payload" || kind === "Body" ? "" : `/${kind.toLowerCase()}`
  const errors: Array<FieldError> = issues.map((issue) => ({
    field: `${where}${pointer((issue.path ?? []) as ReadonlyArray<PropertyKey>)}` || "/",
    code: codeOf(issue.message),
    message: plain(issue.message)
  }))
  return new BadRequest({
    code: "VALIDATION_ERROR",
    detail: `The request is not valid: ${errors.length === 1 ? "1 problem" : `${errors.length} problems`}.`,
    errors
  })
}

export const RequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (error) =>
  Effect.fail(requestProblem(error.kind, error.cause))
)
