/**
 * Handlers of the validation endpoints. Each reads the config snapshot once
 * and answers from it; a target group the caller's team cannot see and
 * another team's offer are 404, never 403.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { BadRequest, type FieldError, NotFound } from "../../api/problems.ts"
import { BULK_MAX_EMAILS, type BulkRequest } from "../../api/validation.ts"
import { type ResultRow, rowText, toOfferResultRow, toResultRow } from "../../domain/ResultRow.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import { type Engine, isVisibleTo } from "../../engine/Engine.ts"
import { UsageStatistics } from "../../stats/UsageStatistics.ts"
import { Metrics } from "../metrics.ts"
import { currentRequestId } from "../requestId.ts"
import { jsonTextResponse, offerResultsText, offerResultText, resultsText, resultText } from "../resultJson.ts"
import { ServerConfig } from "../ServerConfig.ts"

export const notFound = (what: string, id: string, requestId: string) =>
  new NotFound({ code: "NOT_FOUND", detail: `There is no ${what} "${id}".`, requestId })

const invalid = (requestId: string, detail: string, errors: ReadonlyArray<FieldError>) =>
  new BadRequest({ code: "VALIDATION_ERROR", detail, requestId, errors })

/** A single email whose format is invalid is a 400, with the parser's sub-reason as the field error. */
export const formatProblem = (result: ValidationResult, requestId: string): BadRequest | undefined => {
  if (result.reasonCode !== "INVALID_EMAIL_FORMAT") return undefined
  const format = result.validationDetails.format
  const message = "message" in format && format.message !== undefined ? format.message : (result.reason ?? "")
  return new BadRequest({
    code: "INVALID_EMAIL_FORMAT",
    detail: result.reason ?? "The email address is not valid.",
    requestId,
    errors: [
      { field: "/email", code: "code" in format && format.code !== undefined ? format.code : "INVALID", message }
    ]
  })
}

/** `[row, ...]` of results in input order, each row naming its email as given. */
const rowsText = <R>(
  emails: ReadonlyArray<string>,
  results: ReadonlyArray<R>,
  toRow: (email: string, result: R) => ResultRow
): string => {
  let text = "["
  for (let i = 0; i < results.length; i++) text += `${i === 0 ? "" : ","}${rowText(toRow(emails[i]!, results[i]!))}`
  return `${text}]`
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

const checkBulk = (payload: BulkRequest, requestId: string): BadRequest | undefined => {
  const errors: Array<FieldError> = []
  if ((payload.targetGroupId === undefined) === (payload.offerId === undefined)) {
    errors.push({
      field: "/targetGroupId",
      code: "EXACTLY_ONE",
      message: "give exactly one of targetGroupId and offerId"
    })
  }
  if (payload.emails.length > BULK_MAX_EMAILS) {
    errors.push({
      field: "/emails",
      code: "TOO_MANY",
      message: `at most ${BULK_MAX_EMAILS} emails per request (got ${payload.emails.length}); use POST /api/v1/validate/bulk-async for larger batches`
    })
  }
  return errors.length === 0 ? undefined : invalid(requestId, "The bulk request is not valid.", errors)
}

/** The body of a single validation request. */
export type SinglePayload =
  | { readonly email: string; readonly targetGroupId: string }
  | { readonly email: string; readonly offerId: string }

/**
 * One email against a target group or offer the team can see: the answer's
 * JSON text, or the problem. The one implementation behind the endpoints,
 * whether the full pipeline or the hot path (`hotPath.ts`) serves them.
 */
export const validateSingle = (
  engine: Engine,
  metrics: Metrics["Service"],
  usage: UsageStatistics["Service"],
  team: string,
  payload: SinglePayload,
  requestId: string
): { readonly text: string } | BadRequest | NotFound => {
  if ("targetGroupId" in payload) {
    const group = engine.targetGroups.get(payload.targetGroupId)
    if (group === undefined || !isVisibleTo(group.targetGroup, team)) {
      return notFound("target group", payload.targetGroupId, requestId)
    }
    const result = engine.validate(payload.email, payload.targetGroupId)
    metrics.validated(result)
    return formatProblem(result, requestId) ?? { text: resultText(result, requestId) }
  }
  const offer = engine.offers.get(payload.offerId)
  if (offer === undefined || offer.offer.team !== team) return notFound("offer", payload.offerId, requestId)
  const at = engine.now()
  const result = engine.validateOffer(payload.email, payload.offerId, at)
  metrics.validated(result)
  usage.record(payload.offerId, payload.email, result, at)
  const badFormat = result.results.length > 0 ? formatProblem(result.results[0]!, requestId) : undefined
  return badFormat ?? { text: offerResultText(result, requestId) }
}

/** `validateSingle` as a handler's answer. */
const answerSingle = (
  config: ServerConfig["Service"],
  metrics: Metrics["Service"],
  usage: UsageStatistics["Service"],
  payload: SinglePayload
) =>
  Effect.gen(function* () {
    const requestId = yield* currentRequestId
    const caller = yield* Caller
    const answer = validateSingle(config.current().engine, metrics, usage, caller.team, payload, requestId)
    return "text" in answer ? jsonTextResponse(answer.text) : yield* answer
  })

export const ValidationHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "validation",
  Effect.fn(function* (handlers) {
    const config = yield* ServerConfig
    const metrics = yield* Metrics
    const usage = yield* UsageStatistics
    return handlers
      .handle("targetGroup", ({ payload }) => answerSingle(config, metrics, usage, payload))
      .handle("offer", ({ payload }) => answerSingle(config, metrics, usage, payload))
      .handle("bulk", ({ payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          const problem = checkBulk(payload, requestId)
          if (problem !== undefined) return yield* problem
          const { engine } = config.current()
          const details = payload.details === true
          let results: ReadonlyArray<ValidationResult | OfferValidationResult>
          let items: string
          if (payload.targetGroupId !== undefined) {
            const group = engine.targetGroups.get(payload.targetGroupId)
            if (group === undefined || !isVisibleTo(group.targetGroup, caller.team)) {
              return yield* notFound("target group", payload.targetGroupId, requestId)
            }
            const groupResults = engine.validateMany(payload.emails, payload.targetGroupId)
            results = groupResults
            items = details ? resultsText(groupResults) : rowsText(payload.emails, groupResults, toResultRow)
          } else {
            const offerId = payload.offerId!
            const offer = engine.offers.get(offerId)
            if (offer === undefined || offer.offer.team !== caller.team) {
              return yield* notFound("offer", offerId, requestId)
            }
            const offerResults = engine.validateManyOffer(payload.emails, offerId)
            usage.recordMany(offerId, payload.emails, offerResults)
            results = offerResults
            items = details ? offerResultsText(offerResults) : rowsText(payload.emails, offerResults, toOfferResultRow)
          }
          metrics.validatedAll(results)
          return jsonTextResponse(
            `{"results":${items},"summary":${JSON.stringify(summarize(results))},"requestId":${JSON.stringify(requestId)}}`
          )
        })
      )
  })
)
