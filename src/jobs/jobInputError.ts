/**
 * Why an upload cannot become a job: one error type whose `code` is the
 * problem code the HTTP layer answers (`src/api/problems.ts`) and whose
 * `errors` name the field at fault as a JSON pointer (`/emails`,
 * `/targetGroupId`, `/body` for a streamed body). `reason` tells the cases
 * apart for code and tests. The compressed forms of an upload add theirs
 * (`uploadCoding.ts`): a coding not accepted, a compressed stream that
 * cannot be undone, and one that inflates past the ratio a job accepts.
 */
import * as Schema from "effect/Schema"

/** Same shape as the API's `FieldError` (`src/api/problems.ts`), kept here so `jobs/` does not import the contract. */
export const InputFieldError = Schema.Struct({ field: Schema.String, code: Schema.String, message: Schema.String })
export type InputFieldError = typeof InputFieldError.Type

export const JobInputErrorReason = Schema.Literals([
  "MalformedJson",
  "InvalidDocument",
  "InvalidUtf8",
  "MissingEmailColumn",
  "TooManyEmails",
  "BodyTooLarge",
  "NoEmails",
  "TooManyColumns",
  "UnsupportedEncoding",
  "CorruptEncoding",
  "CompressionBomb"
])
export type JobInputErrorReason = typeof JobInputErrorReason.Type

export class JobInputError extends Schema.TaggedError<JobInputError>()("JobInputError", {
  reason: JobInputErrorReason,
  code: Schema.Literals(["MALFORMED_JSON", "VALIDATION_ERROR", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"]),
  detail: Schema.String,
  errors: Schema.Array(InputFieldError)
}) {
  override get message(): string {
    return this.detail
  }
}

const invalid = (reason: JobInputErrorReason, field: string, code: string, message: string, detail: string) =>
  new JobInputError({ reason, code: "VALIDATION_ERROR", detail, errors: [{ field, code, message }] })

export const malformedJson = (message: string): JobInputError =>
  new JobInputError({
    reason: "MalformedJson",
    code: "MALFORMED_JSON",
    detail: `The request body is not valid JSON: ${message}`,
    errors: []
  })

export const invalidDocument = (errors: ReadonlyArray<InputFieldError>): JobInputError =>
  new JobInputError({
    reason: "InvalidDocument",
    code: "VALIDATION_ERROR",
    detail: `The request is not valid: ${errors.length === 1 ? "1 problem" : `${errors.length} problems`}.`,
    errors
  })

export const invalidUtf8 = (): JobInputError =>
  invalid("InvalidUtf8", "/body", "INVALID_ENCODING", "the body is not valid UTF-8", "The body is not valid UTF-8.")

export const missingEmailColumn = (header: ReadonlyArray<string>): JobInputError =>
  invalid(
    "MissingEmailColumn",
    "/body/header",
    "MISSING_EMAIL_COLUMN",
    `the header row needs an "email" column (found: ${header.map((name) => JSON.stringify(name)).join(", ")})`,
    'The CSV body has no "email" column in its header row.'
  )

export const tooManyEmails = (field: string, maxEmails: number): JobInputError =>
  invalid(
    "TooManyEmails",
    field,
    "TOO_MANY",
    `at most ${maxEmails} emails per job`,
    `The job has more than ${maxEmails} emails.`
  )

export const noEmails = (field: string): JobInputError =>
  invalid("NoEmails", field, "EMPTY", "give at least one email", "The job has no emails.")

export const bodyTooLarge = (maxBytes: number): JobInputError =>
  new JobInputError({
    reason: "BodyTooLarge",
    code: "PAYLOAD_TOO_LARGE",
    detail: `The body is larger than ${maxBytes} bytes.`,
    errors: []
  })

export const tooManyColumns = (maxColumns: number): JobInputError =>
  invalid(
    "TooManyColumns",
    "/body",
    "TOO_MANY_COLUMNS",
    `at most ${maxColumns} columns besides the email`,
    `The input has more than ${maxColumns} columns besides the email; results carry every column, so send fewer.`
  )

/** A decompressed body past the limit: the limit is on what the reader reads, however it was sent. */
export const decompressedTooLarge = (maxBytes: number): JobInputError =>
  new JobInputError({
    reason: "BodyTooLarge",
    code: "PAYLOAD_TOO_LARGE",
    detail: `The body decompresses to more than ${maxBytes} bytes, the largest job upload, compressed or not.`,
    errors: []
  })

export const unsupportedEncoding = (detail: string): JobInputError =>
  new JobInputError({ reason: "UnsupportedEncoding", code: "UNSUPPORTED_MEDIA_TYPE", detail, errors: [] })

export const corruptEncoding = (coding: string, why: string): JobInputError =>
  invalid(
    "CorruptEncoding",
    "/body",
    "CORRUPT_ENCODING",
    `the ${coding} stream cannot be decompressed: ${why}`,
    `The body is not a valid ${coding} stream: ${why}.`
  )

export const compressionBomb = (ratio: number, sentBytes: number, decodedBytes: number): JobInputError =>
  new JobInputError({
    reason: "CompressionBomb",
    code: "PAYLOAD_TOO_LARGE",
    detail: `The body inflates more than ${ratio} times (${sentBytes} bytes sent had already become ${decodedBytes}), which a job upload may not: it is refused as a decompression bomb. Send such a file uncompressed.`,
    errors: []
  })
