/**
 * Validation results as JSON text, fast. A result shares most of its bytes
 * with others: the engine hands out the same frozen detail objects (the
 * target group, the institution and its sources, the verdict on it, the
 * email-policy flags, the skipped criteria) to every email of the same
 * domain. Their JSON is written once and kept (weakly, with the object), so
 * a result costs its own few fields plus a handful of lookups. The text is
 * what `JSON.stringify` writes, key order included (checked by
 * test/server/resultJson.test.ts).
 *
 * Handlers answer with this text directly instead of through the response
 * schema: encoding a thousand nested results through the schema took most
 * of a bulk request's time (measured: bench/http.ts).
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { Explanation } from "../domain/Explanation.ts"
import type { OfferValidationResult, ValidationDetails, ValidationResult } from "../domain/ValidationResult.ts"

const fragments = new WeakMap<object, string>()

/** JSON of a value; frozen objects' JSON is kept. */
const shared = (value: object): string => {
  let text = fragments.get(value)
  if (text === undefined) {
    text = JSON.stringify(value)
    if (Object.isFrozen(value)) fragments.set(value, text)
  }
  return text
}

const detailsText = (details: ValidationDetails): string =>
  `{"format":${shared(details.format)},"domain":${shared(details.domain)},"geography":${shared(details.geography)},"organizationType":${shared(details.organizationType)},"customList":${shared(details.customList)},"emailPolicy":${shared(details.emailPolicy)}}`

const optional = (key: string, value: string | undefined): string =>
  value === undefined ? "" : `,"${key}":${JSON.stringify(value)}`

/** The JSON of one validation result, the keys in the order the engine builds them; an explanation, when asked for, last but the request id. */
export const resultText = (result: ValidationResult, requestId?: string, explanation?: Explanation): string =>
  `{"isValid":${result.isValid},"email":${JSON.stringify(result.email)},"targetGroup":${shared(result.targetGroup)},"validationDetails":${detailsText(result.validationDetails)}${optional("matchedDomain", result.matchedDomain)}${optional("reasonCode", result.reasonCode)}${optional("reason", result.reason)}${explanation === undefined ? "" : `,"explanation":${JSON.stringify(explanation)}`}${optional("requestId", requestId)}}`

/** `[result, ...]` */
export const resultsText = (results: ReadonlyArray<ValidationResult>): string => {
  let text = "["
  for (let i = 0; i < results.length; i++) text += i === 0 ? resultText(results[i]!) : `,${resultText(results[i]!)}`
  return `${text}]`
}

/** A 200 `application/json` response with the given JSON text as its body. */
export const jsonTextResponse = (text: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(text, { contentType: "application/json" })

/** A 200 `application/json` response whose body is the given JSON bytes (`jsonBytes.ts`). */
export const jsonBytesResponse = (bytes: Uint8Array): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(bytes, { contentType: "application/json" })

/** The JSON of one offer validation result, the keys in the order the engine builds them. */
export const offerResultText = (result: OfferValidationResult, requestId?: string): string =>
  `{"isValid":${result.isValid},"email":${JSON.stringify(result.email)},"offer":${JSON.stringify(result.offer)},"matchedTargetGroups":${JSON.stringify(result.matchedTargetGroups)},"results":${resultsText(result.results)}${optional("reasonCode", result.reasonCode)}${optional("reason", result.reason)}${optional("requestId", requestId)}}`
