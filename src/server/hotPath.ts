/**
 * The hot path: single-email validation answered at the `node:http` level.
 * Requests to the two single-validation endpoints that carry a JSON body of
 * a declared length and a valid key with the endpoint's scope are taken
 * here, before the Effect HTTP stack, whose per-request cost (body stream,
 * fiber runtime, router, middleware, response encoding) kept the daemon at
 * about a tenth of a bare server's requests per second (bench/http.ts).
 * Every other request goes, unread, to the Effect handler.
 *
 * A taken request gets exactly what the full pipeline gives it, because the
 * steps and the problems are the same code: the rate-limit decision
 * (`rateLimit.ts`), request-value problems (`requestErrors.ts`), not-found
 * and email-format problems (`handlers/validation.ts`), problems rendered
 * by their own classes, results written by `resultJson.ts`, the request id,
 * the metrics and the log line. The end-to-end tests run against both
 * paths (test/server/), and test/server/hotPathStores.test.ts against both
 * kinds of rate-limit store.
 *
 * With the memory store nothing here runs an effect per request: the
 * rate-limit decision is synchronous (`rateLimitMemory.ts`). Measured on
 * the shared 2-core machine (bench/http.ts, server CPU per answer): 91-127
 * µs, against 133-183 µs with the decision run as an effect, the key hashed
 * per request and log lines through `JSON.stringify`; a bare `node:http`
 * server doing only the essential work takes 74-105 µs.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { API_PREFIX, CampusgateApi, canonicalUrl } from "../api/Api.ts"
import type { Problem } from "../api/problems.ts"
import { rateLimitBucketOf } from "../api/rateLimits.ts"
import { ValidateOfferRequest, ValidateTargetGroupRequest } from "../api/validation.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { Validation } from "../app/Validation.ts"
import type { ApiKeyRecord } from "../domain/ApiKey.ts"
import { type SinglePayload, validateSingle } from "./handlers/validation.ts"
import { Metrics } from "./metrics.ts"
import { RequestLogger, recordRequest } from "./RequestLogger.ts"
import { makeRateLimitDecider, type RateLimitDecision } from "./rateLimit.ts"
import { malformedJson, requestProblem } from "./requestErrors.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./requestId.ts"
import { routeTemplate } from "./routeTemplate.ts"

const endpoints = CampusgateApi.groups.validation.endpoints
const parseOptions = { errors: "all", onExcessProperty: "error" } as const

type Decode = (input: unknown) => Exit.Exit<SinglePayload, Schema.SchemaError>

const routes = {
  targetGroup: {
    path: `${API_PREFIX}/validate/target-group`,
    template: routeTemplate("POST", `${API_PREFIX}/validate/target-group`),
    scope: "validate:target-groups",
    idField: "targetGroupId",
    bucket: rateLimitBucketOf(endpoints.targetGroup.annotations),
    decode: Schema.decodeUnknownExit(ValidateTargetGroupRequest, parseOptions) as Decode
  },
  offer: {
    path: `${API_PREFIX}/validate/offer`,
    template: routeTemplate("POST", `${API_PREFIX}/validate/offer`),
    scope: "validate:offers",
    idField: "offerId",
    bucket: rateLimitBucketOf(endpoints.offer.annotations),
    decode: Schema.decodeUnknownExit(ValidateOfferRequest, parseOptions) as Decode
  }
} as const

type Route = (typeof routes)[keyof typeof routes]

/**
 * The payload when `input` is exactly `{ email, <idField> }` within the
 * contract's limits (see `src/api/validation.ts`) — what the schema would
 * accept — without running the schema; otherwise `undefined`.
 */
export const plainPayload = (input: unknown, idField: "targetGroupId" | "offerId"): SinglePayload | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const fields = input as Record<string, unknown>
  const email = fields.email
  const id = fields[idField]
  let count = 0
  for (const _ in fields) count++
  if (count !== 2 || typeof email !== "string" || email.length > 1024) return undefined
  if (typeof id !== "string" || id.length < 1 || id.length > 64) return undefined
  return idField === "targetGroupId" ? { email, targetGroupId: id } : { email, offerId: id }
}

/** The route of a hot-path URL (`/v1/...` being an alias of `/api/v1/...`), or `undefined`. */
const routeOf = (url: string | undefined): Route | undefined => {
  if (url === undefined) return undefined
  const path = canonicalUrl(url)
  if (path === routes.targetGroup.path) return routes.targetGroup
  if (path === routes.offer.path) return routes.offer
  return undefined
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

const textDecoder = new TextDecoder()

/** Destroys the connection of a request whose body could not be read (the response is never written). */
function abandon(this: IncomingMessage): void {
  this.socket?.destroy()
}

/** What the endpoint answers for this body, after the rate limit let it through: the result's JSON text, or a problem. */
const evaluate = (
  validation: Validation["Service"],
  route: Route,
  team: string,
  text: string,
  requestId: string
): string | Problem => {
  let input: unknown
  try {
    input = text === "" ? undefined : JSON.parse(text)
  } catch {
    input = undefined
  }
  if (input === undefined) return malformedJson(requestId)
  let payload = plainPayload(input, route.idField)
  if (payload === undefined) {
    // Not the plain shape: the schema says what is wrong (or, rarely, accepts it after all).
    const decoded = route.decode(input)
    if (Exit.isFailure(decoded)) {
      const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
      return failure === undefined ? malformedJson(requestId) : requestProblem("Payload", failure.error, requestId)
    }
    payload = decoded.value
  }
  const answer = validateSingle(validation, team, payload, requestId)
  return "text" in answer ? answer.text : answer
}

/**
 * Writes the answer with one `writeHead` and one `end` (Node then sends
 * head and body in a single write); a result's header fields go as a flat
 * list, the form `writeHead` takes without copying. Field order: the
 * problem's own, the rate-limit fields, the content fields, the request id.
 */
const respond = (
  response: ServerResponse,
  answer: string | Problem,
  decision: RateLimitDecision,
  requestId: string
) => {
  const limits = decision.headers
  if (typeof answer === "string") {
    const fields: Array<string> = []
    for (const name in limits) fields.push(name, limits[name]!)
    fields.push("content-type", "application/json", "content-length", String(Buffer.byteLength(answer)))
    fields.push(REQUEST_ID_HEADER, requestId)
    response.writeHead(200, fields)
    response.end(answer)
    return 200
  }
  const rendered = Effect.runSync(HttpServerRespondable.toResponse(answer))
  const body = rendered.body._tag === "Uint8Array" ? rendered.body : undefined
  response.writeHead(rendered.status, {
    ...rendered.headers,
    ...limits,
    "content-type": body?.contentType ?? "application/problem+json",
    "content-length": String(body?.body.byteLength ?? 0),
    [REQUEST_ID_HEADER]: requestId
  })
  response.end(body?.body ?? "")
  return rendered.status
}

export class HotPath extends Context.Service<
  HotPath,
  {
    /** Makes `server` answer hot-path requests itself; returns it. */
    intercept(server: Server): Server
  }
>()("campusgate/server/HotPath") {
  static readonly layer = Layer.effect(
    HotPath,
    Effect.gen(function* () {
      const config = yield* Snapshot
      const metrics = yield* Metrics
      const validation = yield* Validation
      const logger = yield* RequestLogger
      const { decide, decideNow } = yield* makeRateLimitDecider

      /** The key's record when the request is one the hot path takes. */
      const takes = (request: IncomingMessage, route: Route): ApiKeyRecord | undefined => {
        if (request.method !== "POST") return undefined
        if (header(request, "content-type")?.startsWith("application/json") !== true) return undefined
        const length = Number(header(request, "content-length"))
        const maxBody = config.current().config.settings.server.maxBodyBytes
        if (!Number.isInteger(length) || length < 0 || length > maxBody) return undefined
        const authorization = header(request, "authorization")
        if (authorization === undefined || !authorization.startsWith("Bearer ")) return undefined
        const verdict = config.current().keys.verify(authorization.slice(7).trim(), Date.now())
        return verdict.ok && verdict.record.scopes.includes(route.scope) ? verdict.record : undefined
      }

      const answer = (
        response: ServerResponse,
        route: Route,
        record: ApiKeyRecord,
        text: string,
        requestId: string,
        started: number,
        decision: RateLimitDecision
      ) => {
        const result = decision.problem ?? evaluate(validation, route, record.team, text, requestId)
        const status = respond(response, result, decision, requestId)
        recordRequest(metrics, logger, { method: "POST", route: route.template, status, started }, requestId, record.id)
      }

      const take = (request: IncomingMessage, response: ServerResponse): boolean => {
        const route = routeOf(request.url)
        if (route === undefined) return false
        const record = takes(request, route)
        if (record === undefined) return false
        const started = performance.now()
        const requestId = requestIdFor(header(request, REQUEST_ID_HEADER))
        // A small body arrives in one chunk: no list unless a second one comes.
        let first: Buffer | undefined
        let rest: Array<Buffer> | undefined
        request.on("data", (chunk: Buffer) => {
          if (first === undefined) first = chunk
          else if (rest === undefined) rest = [first, chunk]
          else rest.push(chunk)
        })
        request.on("error", abandon)
        request.on("end", () => {
          const bytes = rest !== undefined ? Buffer.concat(rest) : first
          const text = bytes === undefined ? "" : textDecoder.decode(bytes)
          if (decideNow !== undefined) {
            const decision = decideNow(record.id, route.bucket, requestId, Date.now())
            answer(response, route, record, text, requestId, started, decision)
          } else {
            void Effect.runPromise(decide(record.id, route.bucket, requestId)).then((decision) =>
              answer(response, route, record, text, requestId, started, decision)
            )
          }
        })
        return true
      }

      return HotPath.of({
        intercept: (server) => {
          const emit = server.emit
          server.emit = function (this: Server, event: string | symbol, ...args: Array<unknown>): boolean {
            if (event === "request" && take(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
            return Reflect.apply(emit, this, [event, ...args]) as boolean
          } as Server["emit"]
          return server
        }
      })
    })
  )
}
