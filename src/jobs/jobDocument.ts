/**
 * The fields of the JSON form of a job upload besides `emails`
 * (`targetGroupId | offerId, callbackUrl?`), decoded with Schema: a wrong
 * shape is a `VALIDATION_ERROR` naming the fields. The document is read as
 * it arrives by `jsonDocumentReader.ts`; each element of `emails` is an item
 * like an NDJSON line: a string, or an object with a string `email`, else a
 * bad item.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { StandardSchemaV1 } from "effect/StandardSchema"
import { CallbackUrl } from "../domain/Job.ts"
import type { InputFieldError } from "./jobInputError.ts"

const Id = Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(64)))

/** The fields of a job besides its emails (query parameters for NDJSON and CSV bodies). */
export interface JobInputFields {
  readonly targetGroupId?: string
  readonly offerId?: string
  readonly callbackUrl?: string
}

const JobFields = Schema.Struct({
  targetGroupId: Schema.optionalKey(Id),
  offerId: Schema.optionalKey(Id),
  callbackUrl: Schema.optionalKey(CallbackUrl)
})

const decodeFields = Schema.decodeUnknownResult(JobFields, { errors: "all" })
const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pointer = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("") || "/"

const fieldError = (issue: StandardSchemaV1.Issue): InputFieldError => {
  const missing = issue.message === "Missing key"
  return {
    field: pointer((issue.path ?? []) as ReadonlyArray<PropertyKey>),
    code: missing
      ? "REQUIRED"
      : /^Expected (string|array|object)/i.test(issue.message)
        ? "INVALID_TYPE"
        : "INVALID_VALUE",
    message: missing ? "this field is required" : issue.message
  }
}

/** The document's other fields (unknown ones are ignored), or what is wrong with them. */
export const decodeJobFields = (fields: Record<string, unknown>): JobInputFields | Array<InputFieldError> => {
  const decoded = decodeFields(fields)
  return Result.isFailure(decoded) ? formatter(decoded.failure.issue).issues.map(fieldError) : decoded.success
}
