/**
 * The HTTP application: the API routes from the contract, docs, health
 * checks, and the outermost middleware every request passes through, which
 * - assigns the request id (kept from `X-Request-Id` when sane) and echoes it,
 * - serves `/v1/...` as an alias of `/api/v1/...`,
 * - turns every failure into a problem-details answer (`NOT_FOUND`,
 *   `METHOD_NOT_ALLOWED`, `UNSUPPORTED_MEDIA_TYPE`, `PAYLOAD_TOO_LARGE`, and
 *   `SERVICE_ERROR` without internals for anything unexpected),
 * - writes one structured log line per request and records its metrics,
 *   both under the request's route template (`routes.ts`).
 */
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { CampusgateApi, canonicalUrl } from "../api/Api.ts"
import {
  invalidField,
  malformedJson,
  methodNotAllowed,
  notFound,
  type Problem,
  serviceError,
  storeLost,
  unsupportedMediaType,
  withRequestId
} from "../api/problems.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { StoreHold } from "../store/breaker.ts"
import { AuthorizationLive } from "./authorization.ts"
import { ConsoleRoutes, consoleHeaders } from "./console.ts"
import { DocsRoutes } from "./docs.ts"
import { InstitutionReviewsHandlers } from "./handlers/institutionReviews.ts"
import { InstitutionsHandlers } from "./handlers/institutions.ts"
import { JobsHandlers } from "./handlers/jobs.ts"
import { KeysHandlers } from "./handlers/keys.ts"
import { OffersHandlers } from "./handlers/offers.ts"
import { StatusHandlers } from "./handlers/status.ts"
import { TargetGroupsHandlers } from "./handlers/targetGroups.ts"
import { ValidationHandlers } from "./handlers/validation.ts"
import { VerificationsHandlers } from "./handlers/verifications.ts"
import { HostedRoutes } from "./hosted/hostedRoutes.ts"
import { IdempotencyLive } from "./idempotency.ts"
import { Metrics, MetricsRoute } from "./metrics.ts"
import { storeOutageProblem } from "./problemOf.ts"
import { problemResponse } from "./problemResponse.ts"
import { RequestLogger, recordRequest } from "./RequestLogger.ts"
import { bodyTooLarge, RequestErrorsLive } from "./requestErrors.ts"
import {
  bodyLimitOf,
  brokenPercentEncoding,
  declaredTooLarge,
  isUploadRoute,
  isUtf8Body,
  readsJsonBody
} from "./requestGuards.ts"
import { REQUEST_ID_HEADER, requestIdFor, requestKeyIds } from "./requestId.ts"
import { RequestIdsLive } from "./requestIds.ts"
import {
  findRoute,
  HEALTH_PATH,
  isConsolePath,
  LIVE_PATH,
  methodsAt,
  READY_PATH,
  routedPath,
  routeTemplate
} from "./routes.ts"
import { VerificationRoutes } from "./verificationRoutes.ts"

/** The problem named after the request: the renderer alone, not `answerWith` (which reads the request). */
const respond = (problem: Problem, requestId: string) =>
  Effect.succeed(problemResponse(withRequestId(problem, requestId)))

/**
 * While the shared store is held as lost (`store/storeIdentity.ts`), every
 * 503 says so, with what an operator must do (`STORE_LOST`): whatever
 * refused the request, the lost store is why.
 */
const lostStore =
  (hold: StoreHold["Service"] | undefined, requestId: string) =>
  (response: HttpServerResponse.HttpServerResponse): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const reason = response.status === 503 ? hold?.heldFor() : undefined
    return reason === undefined ? Effect.succeed(response) : respond(storeLost(reason), requestId)
  }

const isProblem = (response: HttpServerResponse.HttpServerResponse): boolean =>
  response.headers["content-type"]?.startsWith("application/problem+json") === true

/** A page of our own for people (the hosted verification flow's), answered as made whatever its status. */
const isPage = (response: HttpServerResponse.HttpServerResponse): boolean =>
  (response.body as { readonly contentType?: string | undefined }).contentType?.startsWith("text/html") === true

/**
 * Answers the framework gives without our body — no route (404/405), an
 * unsupported media type (415), a body over the limit (413), an unexpected
 * failure (500) — become problems like every other error.
 */
const normalize = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (isProblem(response) || isPage(response) || response.status < 400) return Effect.succeed(response)
  const path = routedPath(request.url)
  switch (response.status) {
    case 404:
    case 405: {
      const methods = methodsAt(path)
      if (methods.length === 0) {
        return respond(notFound(`There is nothing at ${path}.`), requestId)
      }
      return Effect.map(
        respond(methodNotAllowed(`${request.method} is not allowed on ${path}; use ${methods.join(", ")}.`), requestId),
        HttpServerResponse.setHeader("allow", methods.join(", "))
      )
    }
    case 413:
      return respond(bodyTooLarge(), requestId)
    case 415: {
      const accepted = [...(findRoute(request.method, path)?.endpoint?.payload.keys() ?? ["application/json"])]
      const sent = request.headers["content-type"]
      return respond(
        unsupportedMediaType(
          `This endpoint takes ${accepted.join(", ")}; the request was sent as ${sent === undefined || sent === "" ? "no Content-Type" : sent}.`
        ),
        requestId
      )
    }
    default:
      if (response.status >= 500) {
        return respond(serviceError("An unexpected error occurred."), requestId)
      }
      return Effect.succeed(response)
  }
}

/**
 * The outermost middleware: every request passes through it, and its
 * pre-response step sees every answer, including those the framework makes
 * from failures.
 */
const Outermost = HttpRouter.middleware(
  (httpEffect) =>
    Effect.gen(function* () {
      const started = performance.now()
      const original = yield* HttpServerRequest.HttpServerRequest
      const logger = yield* RequestLogger
      const metrics = yield* Metrics
      const { settings } = (yield* Snapshot).current().config
      const requestId = requestIdFor(original.headers[REQUEST_ID_HEADER])
      const url = canonicalUrl(original.url)
      const request = original.modify({ url, headers: Headers.set(original.headers, REQUEST_ID_HEADER, requestId) })
      const hold = Option.getOrUndefined(yield* Effect.serviceOption(StoreHold))
      yield* HttpEffect.appendPreResponseHandler((_, answer) =>
        Effect.map(Effect.flatMap(normalize(answer, request, requestId), lostStore(hold, requestId)), (response) => {
          const { method, url } = request
          recordRequest(
            metrics,
            logger,
            { method, route: routeTemplate(method, url), status: response.status, started },
            requestId,
            requestKeyIds.get(request)
          )
          const answered = isConsolePath(routedPath(url))
            ? HttpServerResponse.setHeaders(response, consoleHeaders)
            : response
          return HttpServerResponse.setHeader(answered, REQUEST_ID_HEADER, requestId)
        })
      )
      const path = routedPath(url)
      if (brokenPercentEncoding(path)) {
        return yield* respond(
          invalidField(
            "The request path is not valid.",
            "/path",
            "INVALID_ENCODING",
            "the path's percent-encoding is broken"
          ),
          requestId
        )
      }
      const route = findRoute(request.method, path)
      const limit = bodyLimitOf(route, settings)
      const declared = declaredTooLarge(request.headers["content-length"], limit)
      if (declared !== undefined) {
        // Answered before any of the body is read; the connection closes, so the rest is never waited for.
        return yield* Effect.map(
          respond(bodyTooLarge({ bytes: declared, limit, upload: isUploadRoute(route) }), requestId),
          HttpServerResponse.setHeader("connection", "close")
        )
      }
      const checked = readsJsonBody(route)
        ? Effect.flatMap(Effect.result(request.arrayBuffer), (body) =>
            Result.isSuccess(body) && !isUtf8Body(body.success) ? respond(malformedJson(), requestId) : httpEffect
          )
        : httpEffect
      return yield* checked.pipe(
        // A request that needed a store while it cannot be used (of any kind): 503, to retry shortly, not a 500.
        Effect.catchDefect((defect) => {
          const outage = storeOutageProblem(defect)
          return outage === undefined ? Effect.die(defect) : respond(outage, requestId)
        }),
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(settings.server.maxBodyBytes))
      )
    }),
  { global: true }
)

const Health = Layer.mergeAll(
  // Live: the process answers. Nothing else is asked, so a stuck dependency never gets the process restarted.
  HttpRouter.add("GET", HEALTH_PATH, HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.add("GET", LIVE_PATH, HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.add(
    "GET",
    READY_PATH,
    Effect.gen(function* () {
      const status = (yield* Snapshot).status()
      // A stale config still serves (the last good one), so the service stays ready. Anyone may ask, so the
      // answer names no file and quotes none: the problems are at GET /api/v1/status, with a key.
      return HttpServerResponse.jsonUnsafe({
        status: "ready",
        config: { generation: status.generation, loadedAt: status.loadedAt, stale: status.stale }
      })
    })
  )
)

// The middleware implementations are needed both by the handlers and by the routes built from them.
const Handlers = Layer.mergeAll(
  ValidationHandlers,
  JobsHandlers,
  OffersHandlers,
  TargetGroupsHandlers,
  StatusHandlers,
  VerificationsHandlers,
  InstitutionsHandlers,
  InstitutionReviewsHandlers,
  KeysHandlers
).pipe(Layer.provideMerge(Layer.mergeAll(AuthorizationLive, IdempotencyLive, RequestErrorsLive, RequestIdsLive)))

const ApiRoutes = HttpApiBuilder.layer(CampusgateApi).pipe(Layer.provide(Handlers))

/**
 * Every route and the outermost middleware. Needs `Snapshot`,
 * `RequestLogger`, `Metrics`, a `RateLimiter`, the services the handlers
 * call (`Jobs`, `Institutions`, `Keys`, `OfferStatus`, `Resources`, `Reviews`,
 * `Validation`, `Verifications`), the console's files (`ConsoleAssets`)
 * and the hosted flow's signing secret (`HostedFlowSecret`) and funnel
 * (`HostedFunnel`).
 */
export const HttpApp = Layer.mergeAll(
  ApiRoutes,
  DocsRoutes,
  ConsoleRoutes,
  Health,
  MetricsRoute,
  VerificationRoutes,
  HostedRoutes,
  Outermost
)
