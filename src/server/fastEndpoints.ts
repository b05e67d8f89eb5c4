/**
 * The endpoints the fast path (`fastPath.ts`) serves, each derived from the
 * contract (route, scopes, rate-limit bucket, payload schema) and answered
 * by the same function as its handler in the Effect app:
 * the single validations (`validateSingle`), `validate/bulk`
 * (`validateBulk`) and `offers/bulk-process` (`processBatch`). A body in
 * its plain shape (`plainPayloads.ts`) is taken as it is, and decoded by the
 * schema otherwise, so the schema judges every body that is not plain, with
 * the same problems.
 * test/server/fastPath.test.ts checks over generated requests, valid and
 * not, that the fast path answers as the Effect app does.
 */
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { CampusgateApi } from "../api/Api.ts"
import { scopesAcceptedBy } from "../api/Authorization.ts"
import { malformedJson, type Problem } from "../api/problems.ts"
import { type RateLimitBucketName, rateLimitBucketOf } from "../api/rateLimits.ts"
import type { Snapshot } from "../app/Snapshot.ts"
import type { Validation } from "../app/Validation.ts"
import type { Scope } from "../domain/ApiKey.ts"
import { processBatch } from "./handlers/offers.ts"
import { type SinglePayload, validateBulk, validateSingle } from "./handlers/validation.ts"
import {
  plainBulkProcessRequest,
  plainBulkRequest,
  plainOfferRequest,
  plainTargetGroupRequest
} from "./plainPayloads.ts"
import { jsonPayloadSchema, payloadParseOptions, payloadProblem } from "./requestErrors.ts"
import { type ApiEndpoint, findRoute } from "./routes.ts"

/** What an endpoint answers: its JSON (text or bytes), or a problem. */
export type FastAnswer = string | Uint8Array | Problem

/** What the fast path needs of an endpoint it serves. */
export interface FastEndpoint {
  /** The route template (logs, metrics). */
  readonly template: string
  readonly accepted: ReadonlyArray<Scope>
  readonly bucket: RateLimitBucketName
  /** The answer to a parsed JSON body of `bodyBytes` bytes, for the caller's team. */
  readonly answer: (input: unknown, bodyBytes: number, team: string, requestId: string) => FastAnswer
}

/** A body decoded by the endpoint's schema (after `plain`, when given, did not recognise it), or its problem. */
const decoderOf = <A>(endpoint: ApiEndpoint, plain?: (input: unknown) => A | undefined) => {
  const schema = jsonPayloadSchema(endpoint)
  if (schema === undefined) throw new Error(`${endpoint.path} declares no JSON payload`)
  const decode = Schema.decodeUnknownExit(schema as Schema.Codec<A>, payloadParseOptions)
  return (input: unknown, bodyBytes: number): Result.Result<A, Problem> => {
    const recognised = plain?.(input)
    if (recognised !== undefined) return Result.succeed(recognised)
    const decoded = decode(input)
    if (Exit.isSuccess(decoded)) return Result.succeed(decoded.value)
    const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    return Result.fail(
      failure === undefined ? malformedJson() : payloadProblem(schema, input, bodyBytes, failure.error)
    )
  }
}

const fastEndpoint = (endpoint: ApiEndpoint, answer: FastEndpoint["answer"]): readonly [ApiEndpoint, FastEndpoint] => [
  endpoint,
  {
    template: findRoute(endpoint.method, endpoint.path)!.template,
    accepted: scopesAcceptedBy(endpoint.annotations),
    bucket: rateLimitBucketOf(endpoint.annotations),
    answer
  }
]

/** The endpoints the fast path serves, answering through `validation` with the limits of the snapshot in force. */
export const makeFastEndpoints = (
  validation: Validation["Service"],
  snapshot: Snapshot["Service"]
): ReadonlyMap<ApiEndpoint, FastEndpoint> => {
  const { validation: group, offers } = CampusgateApi.groups
  const bulkBound = () => snapshot.current().config.settings.limits.bulkMaxEmails
  const single = (endpoint: ApiEndpoint, plain: (input: unknown) => SinglePayload | undefined) => {
    const decode = decoderOf<SinglePayload>(endpoint, plain)
    return fastEndpoint(endpoint, (input, bodyBytes, team, requestId) => {
      const payload = decode(input, bodyBytes)
      if (Result.isFailure(payload)) return payload.failure
      const answer = validateSingle(validation, team, payload.success, requestId)
      return "text" in answer ? answer.text : answer
    })
  }
  const decodeBulk = decoderOf(group.endpoints.bulk, plainBulkRequest)
  const decodeBatch = decoderOf(offers.endpoints.bulkProcess, plainBulkProcessRequest)
  return new Map([
    single(group.endpoints.targetGroup, plainTargetGroupRequest),
    single(group.endpoints.offer, plainOfferRequest),
    fastEndpoint(group.endpoints.bulk, (input, bodyBytes, team, requestId) => {
      const payload = decodeBulk(input, bodyBytes)
      if (Result.isFailure(payload)) return payload.failure
      return validateBulk(validation, team, payload.success, bulkBound(), requestId)
    }),
    fastEndpoint(offers.endpoints.bulkProcess, (input, bodyBytes, team, requestId) => {
      const payload = decodeBatch(input, bodyBytes)
      if (Result.isFailure(payload)) return payload.failure
      return processBatch(validation, team, payload.success, bulkBound(), requestId)
    })
  ])
}
