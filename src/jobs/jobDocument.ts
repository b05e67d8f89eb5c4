/**
 * The JSON form of a job upload: `{ emails: [...], targetGroupId | offerId,
 * callbackUrl? }`. A JSON document has to be parsed whole, so this form is
 * buffered (up to the body limit); NDJSON and CSV are the streaming forms for
 * large jobs. The document's shape is decoded with Schema (a wrong shape is a
 * `VALIDATION_ERROR` naming the fields); each element of `emails` is an item
 * like an NDJSON line: a string, or an object with a string `email`, else a
 * bad item.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { StandardSchemaV1 } from "effect/StandardSchema"
import { CallbackUrl } from "../domain/Job.ts"
import { addValue, type InputItems } from "./inputItems.ts"
import {
  type InputFieldError,
  invalidDocument,
  type JobInputError,
  malformedJson,
  noEmails,
  tooManyEmails
} from "./jobInputError.ts"

const Id = Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(64)))

/** The fields of a job besides its emails (query parameters for NDJSON and CSV bodies). */
export interface JobInputFields {
  readonly targetGroupId?: string
  readonly offerId?: string
  readonly callbackUrl?: string
}

const JobDocument = Schema.Struct({
  emails: Schema.Array(Schema.Unknown),
  targetGroupId: Schema.optionalKey(Id),
  offerId: Schema.optionalKey(Id),
  callbackUrl: Schema.optionalKey(CallbackUrl)
})

const decodeDocument = Schema.decodeUnknownResult(JobDocument, { errors: "all" })
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

/** Reads the whole document `text` into `items`; answers its other fields. */
export const readJobDocument = (text: string, items: InputItems): JobInputFields | JobInputError => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return malformedJson(error instanceof Error ? error.message : String(error))
  }
  const decoded = decodeDocument(value)
  if (Result.isFailure(decoded)) return invalidDocument(formatter(decoded.failure.issue).issues.map(fieldError))
  const { emails, ...fields } = decoded.success
  if (emails.length === 0) return noEmails("/emails")
  if (emails.length > items.maxEmails) return tooManyEmails("/emails", items.maxEmails)
  for (const element of emails) addValue(items, element, () => JSON.stringify(element))
  return fields
}
