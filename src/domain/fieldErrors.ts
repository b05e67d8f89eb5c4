/**
 * Schema failures as field errors (`{ field, code, message }`), the form
 * every bad input is answered in: `field` a JSON pointer (RFC 6901) into the
 * input (`/criteria/institutions/countries/1`), `code` stable for programs
 * (`REQUIRED`, `UNKNOWN_FIELD`, `INVALID_TYPE`, `INVALID_VALUE`), `message`
 * in plain words. One formatter for request bodies (the server) and for
 * resources the application core decodes itself (a patched resource).
 */
import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { FieldError } from "./errors.ts"

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

/** A path as a JSON pointer: `["criteria", "countries", 1]` → `/criteria/countries/1`. */
export const pointer = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("")

/** Each issue of a schema failure as a field error, its pointer under `where` (e.g. `/query`). */
export const fieldErrorsOf = (error: Schema.SchemaError, where = ""): Array<FieldError> =>
  formatter(error.issue).issues.map((issue) => ({
    field: `${where}${pointer((issue.path ?? []) as ReadonlyArray<PropertyKey>)}` || "/",
    code: codeOf(issue.message),
    message: plain(issue.message)
  }))
