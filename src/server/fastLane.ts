/**
 * The fast lane for the single-email validation endpoints, the daemon's hot
 * path. A request that is well formed and allowed — JSON body of exactly the
 * contract's fields, a valid key with the endpoint's scope, a target group
 * or offer the key's team can see, an email whose format is valid — is
 * answered here, with the same body, headers, rate limit, metrics and log
 * line as the full pipeline would give it, without the per-request cost of
 * the schema-driven pipeline (payload decoding, middleware chain, response
 * encoding: measured at 0.1x a bare server, bench/http.ts).
 *
 * Anything else falls through (`undefined`) to the full pipeline, which
 * answers it as the contract says — errors included — so the fast lane
 * never has to produce an error of its own except the rate limiter's. It
 * consumes a rate-limit token only once it is sure to answer, so a request
 * is never counted twice.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { API_PREFIX, CampusgateApi } from "../api/Api.ts"
import type { ApiKeyRecord, Scope } from "../domain/ApiKey.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { isVisibleTo } from "../engine/Engine.ts"
import { Metrics } from "./metrics.ts"
import { makeRateLimitCheck } from "./rateLimit.ts"
import { requestKeyIds } from "./requestId.ts"
import { jsonTextResponse, offerResultText, resultText } from "./resultJson.ts"
import { ServerConfig } from "./ServerConfig.ts"

type Answer = Effect.Effect<
  HttpServerResponse.HttpServerResponse | undefined,
  never,
  HttpServerRequest.HttpServerRequest
>

const endpoints = CampusgateApi.groups.validation.endpoints
const TARGET_GROUP_PATH = `${API_PREFIX}/validate/target-group`
const OFFER_PATH = `${API_PREFIX}/validate/offer`

/** The contract's limits on the two fields (see `src/api/validation.ts`): anything else goes the full way. */
const isEmail = (value: unknown): value is string => typeof value === "string" && value.length <= 1024
const isId = (value: unknown): value is string => typeof value === "string" && value.length >= 1 && value.length <= 64

/** `{ email, <idField> }` and nothing else, or `undefined`. */
const parseBody = (text: string, idField: string): { email: string; id: string } | undefined => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined
  const fields = body as Record<string, unknown>
  let count = 0
  for (const _ in fields) count++
  if (count !== 2 || !isEmail(fields.email) || !isId(fields[idField])) return undefined
  return { email: fields.email, id: fields[idField] as string }
}

export class FastLane extends Context.Service<
  FastLane,
  {
    /** The answer to `request`, or `undefined` when the full pipeline must answer it. */
    answer(request: HttpServerRequest.HttpServerRequest, requestId: string): Answer
  }
>()("campusgate/server/FastLane") {
  static readonly layer = Layer.effect(
    FastLane,
    Effect.gen(function* () {
      const config = yield* ServerConfig
      const metrics = yield* Metrics
      const checkRateLimit = yield* makeRateLimitCheck

      /** The key's record when it is valid and has `scope`. */
      const caller = (request: HttpServerRequest.HttpServerRequest, scope: Scope): ApiKeyRecord | undefined => {
        const authorization = request.headers.authorization
        if (authorization === undefined || !authorization.startsWith("Bearer ")) return undefined
        const verdict = config.keys().verify(authorization.slice(7).trim(), Date.now())
        return verdict.ok && verdict.record.scopes.includes(scope) ? verdict.record : undefined
      }

      /** Rate limit, metrics, then the answer: the steps after which the fast lane is committed. */
      const respond = (
        request: HttpServerRequest.HttpServerRequest,
        record: ApiKeyRecord,
        annotations: Context.Context<never>,
        requestId: string,
        result: ValidationResult | OfferValidationResult,
        body: () => string
      ): Answer => {
        requestKeyIds.set(request, record.id)
        return checkRateLimit(record.id, annotations, requestId).pipe(
          Effect.matchEffect({
            onFailure: (problem) => HttpServerRespondable.toResponse(problem),
            onSuccess: () => {
              metrics.validated(result)
              return Effect.succeed(jsonTextResponse(body()))
            }
          })
        )
      }

      const answer = (request: HttpServerRequest.HttpServerRequest, requestId: string): Answer => {
        if (request.method !== "POST") return Effect.succeed(undefined)
        const forGroup = request.url === TARGET_GROUP_PATH
        if (!forGroup && request.url !== OFFER_PATH) return Effect.succeed(undefined)
        if (request.headers["content-type"]?.startsWith("application/json") !== true) return Effect.succeed(undefined)
        const endpoint = forGroup ? endpoints.targetGroup : endpoints.offer
        const record = caller(request, forGroup ? "validate:target-groups" : "validate:offers")
        if (record === undefined) return Effect.succeed(undefined)
        return Effect.flatMap(
          Effect.orElseSucceed(request.text, () => undefined),
          (text): Answer => {
            const body = text === undefined ? undefined : parseBody(text, forGroup ? "targetGroupId" : "offerId")
            if (body === undefined) return Effect.succeed(undefined)
            const { engine } = config.current()
            if (forGroup) {
              const group = engine.targetGroups.get(body.id)
              if (group === undefined || !isVisibleTo(group.targetGroup, record.team)) return Effect.succeed(undefined)
              const result = engine.validate(body.email, body.id)
              if (result.reasonCode === "INVALID_EMAIL_FORMAT") return Effect.succeed(undefined)
              return respond(request, record, endpoint.annotations, requestId, result, () =>
                resultText(result, requestId)
              )
            }
            const offer = engine.offers.get(body.id)
            if (offer === undefined || offer.offer.team !== record.team) return Effect.succeed(undefined)
            const result = engine.validateOffer(body.email, body.id)
            if (result.results[0]?.reasonCode === "INVALID_EMAIL_FORMAT") return Effect.succeed(undefined)
            return respond(request, record, endpoint.annotations, requestId, result, () =>
              offerResultText(result, requestId)
            )
          }
        )
      }
      return FastLane.of({ answer })
    })
  )
}
