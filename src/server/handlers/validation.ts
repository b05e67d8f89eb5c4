/**
 * Handlers of the validation endpoints, over the Validation service (which
 * applies the team rule and records usage): a target group the caller's
 * team cannot see and another team's offer are 404, never 403.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { type BadRequest, type FieldError, invalidEmailFormat, type NotFound } from "../../api/problems.ts"
import type { BulkRequest } from "../../api/validation.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { Validation, ValidationError } from "../../app/Validation.ts"
import { toOfferResultRow, toResultRow } from "../../domain/ResultRow.ts"
import { rowText } from "../../domain/rowText.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import { JsonBytes } from "../jsonBytes.ts"
import { problemOfReason } from "../problemOf.ts"
import { currentRequestId } from "../requestId.ts"
import { jsonTextResponse, offerResultText, resultText } from "../resultJson.ts"
import { answerBulk, invalid } from "./shared.ts"

/** A single email whose format is invalid is a 400, with the parser's sub-reason as the field error. */
export const formatProblem = (result: ValidationResult): BadRequest | undefined => {
  if (result.reasonCode !== "INVALID_EMAIL_FORMAT") return undefined
  const format = result.validationDetails.format
  const message = "message" in format && format.message !== undefined ? format.message : (result.reason ?? "")
  return invalidEmailFormat(result.reason ?? "The email address is not valid.", [
    { field: "/email", code: "code" in format && format.code !== undefined ? format.code : "INVALID", message }
  ])
}

/** About how many bytes an item of a bulk answer takes: a compact row, a full result (estimates; the answer grows past them). */
const ROW_BYTES = 320
const RESULT_BYTES = 2048

/** Writes `[item, ...]` of `items` in input order. */
const writeItems = <R>(out: JsonBytes, items: ReadonlyArray<R>, text: (item: R, index: number) => string): void => {
  out.write("[")
  for (let i = 0; i < items.length; i++) out.write(i === 0 ? text(items[i]!, i) : `,${text(items[i]!, i)}`)
  out.write("]")
}

const summarize = (results: ReadonlyArray<ValidationResult | OfferValidationResult>) => {
  let valid = 0
  let badFormat = 0
  const byReasonCode: Record<string, number> = {}
  for (const result of results) {
    if (result.isValid) valid++
    const code = result.reasonCode
    if (code === undefined) continue
    byReasonCode[code] = (byReasonCode[code] ?? 0) + 1
    if (code === "INVALID_EMAIL_FORMAT") badFormat++
  }
  return { total: results.length, valid, invalid: results.length - valid, badFormat, byReasonCode }
}

const checkBulk = (payload: BulkRequest, bound: number): BadRequest | undefined => {
  const errors: Array<FieldError> = []
  if ((payload.targetGroupId === undefined) === (payload.offerId === undefined)) {
    errors.push({
      field: "/targetGroupId",
      code: "EXACTLY_ONE",
      message: "give exactly one of targetGroupId and offerId"
    })
  }
  if (payload.details === true && payload.reasonText === false) {
    errors.push({
      field: "/reasonText",
      code: "NOT_WITH_DETAILS",
      message: "reasonText: false leaves the reason out of compact rows; full results (details: true) keep theirs"
    })
  }
  if (payload.emails.length > bound) {
    errors.push({
      field: "/emails",
      code: "TOO_MANY",
      message: `at most ${bound} emails per request (got ${payload.emails.length}); use POST /api/v1/validate/bulk-async for larger batches`
    })
  }
  return errors.length === 0 ? undefined : invalid("The bulk request is not valid.", errors)
}

/** The body of a single validation request. */
export type SinglePayload =
  | { readonly email: string; readonly targetGroupId: string; readonly explain?: boolean }
  | { readonly email: string; readonly offerId: string }

/** A target the caller cannot see, as the 404 it answers. */
export const targetNotFound = ({ reason }: ValidationError): NotFound => problemOfReason(reason)

/**
 * One email against a target group or offer the team can see: the answer's
 * JSON text, or the problem. The one implementation behind the endpoints,
 * whether the full pipeline or the fast path (`fastPath.ts`) serves them.
 */
export const validateSingle = (
  validation: Validation["Service"],
  team: string,
  payload: SinglePayload,
  requestId: string
): { readonly text: string } | BadRequest | NotFound => {
  if ("targetGroupId" in payload && payload.explain === true) {
    const explained = validation.explainTargetGroup(team, payload.email, payload.targetGroupId)
    if (explained instanceof ValidationError) return targetNotFound(explained)
    const { result, explanation } = explained
    return formatProblem(result) ?? { text: resultText(result, requestId, explanation) }
  }
  if ("targetGroupId" in payload) {
    const result = validation.targetGroup(team, payload.email, payload.targetGroupId)
    if (result instanceof ValidationError) return targetNotFound(result)
    return formatProblem(result) ?? { text: resultText(result, requestId) }
  }
  const result = validation.offer(team, payload.email, payload.offerId)
  if (result instanceof ValidationError) return targetNotFound(result)
  const badFormat = result.results.length > 0 ? formatProblem(result.results[0]!) : undefined
  return badFormat ?? { text: offerResultText(result, requestId) }
}

/** `validateSingle` as a handler's answer. */
const answerSingle = (validation: Validation["Service"], payload: SinglePayload) =>
  Effect.gen(function* () {
    const requestId = yield* currentRequestId
    const caller = yield* Caller
    const answer = validateSingle(validation, caller.team, payload, requestId)
    return "text" in answer ? jsonTextResponse(answer.text) : yield* answer
  })

/**
 * Many emails against a target group or offer the team can see: the bulk
 * answer's JSON bytes (`results` in input order, `summary`, `requestId`),
 * or the problem. The one implementation behind `POST /validate/bulk`,
 * whether the fast path (`fastPath.ts`) or the full pipeline serves it.
 */
export const validateBulk = (
  validation: Validation["Service"],
  team: string,
  payload: BulkRequest,
  bound: number,
  requestId: string
): Buffer | BadRequest | NotFound => {
  const problem = checkBulk(payload, bound)
  if (problem !== undefined) return problem
  const { emails } = payload
  const details = payload.details === true
  const withReason = payload.reasonText !== false
  const out = new JsonBytes(256 + emails.length * (details ? RESULT_BYTES : ROW_BYTES))
  out.write(`{"results":`)
  let results: ReadonlyArray<ValidationResult | OfferValidationResult>
  if (payload.targetGroupId !== undefined) {
    const found = validation.manyTargetGroup(team, emails, payload.targetGroupId)
    if (found instanceof ValidationError) return targetNotFound(found)
    writeItems(
      out,
      found,
      details ? (result) => resultText(result) : (result, i) => rowText(toResultRow(emails[i]!, result), withReason)
    )
    results = found
  } else {
    const found = validation.manyOffer(team, emails, payload.offerId!)
    if (found instanceof ValidationError) return targetNotFound(found)
    writeItems(
      out,
      found,
      details
        ? (result) => offerResultText(result)
        : (result, i) => rowText(toOfferResultRow(emails[i]!, result), withReason)
    )
    results = found
  }
  out.write(`,"summary":${JSON.stringify(summarize(results))},"requestId":${JSON.stringify(requestId)}}`)
  return out.bytes()
}

export const ValidationHandlers = HttpApiBuilder.group(CampusgateApi, "validation", (handlers) =>
  Effect.map(Effect.all([Effect.service(Validation), Effect.service(Snapshot)]), ([validation, snapshots]) =>
    handlers
      .handle("targetGroup", ({ payload }) => answerSingle(validation, payload))
      .handle("offer", ({ payload }) => answerSingle(validation, payload))
      .handle("bulk", ({ payload }) =>
        answerBulk(snapshots, (team, bound, requestId) => validateBulk(validation, team, payload, bound, requestId))
      )
  )
)
