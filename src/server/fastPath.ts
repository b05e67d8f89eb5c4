/**
 * The fast path: single-email validation answered at the `node:http` level,
 * as the first handler of the one HTTP server (`NodeServer.ts`). A request
 * the route table (`routes.ts`) routes to one of the two single-validation
 * endpoints, with a JSON body of a declared length and a valid key (a bearer
 * key or the console's session, `credentials.ts`) that may call the
 * endpoint, is taken here, before the Effect HTTP stack, whose
 * per-request cost (body stream, fiber runtime, router, middleware, response
 * encoding) kept the daemon at about a tenth of a bare server's requests per
 * second (bench/http.ts). Every other request goes, unread, to the Effect app.
 *
 * It mirrors nothing of the Effect pipeline; it calls the same pieces: the
 * route table, the scope rule (`api/Authorization.ts`), the rate-limit
 * decision (`rateLimit.ts`), the endpoint's payload schema from the contract
 * with the contract's parse options and the same field errors
 * (`requestErrors.ts`), Validation and the answer text
 * (`handlers/validation.ts`), the problem renderer (`problemResponse.ts`),
 * the request id, the metrics and the log line. The end-to-end tests run
 * against both paths (test/server/), test/server/fastPathStores.test.ts
 * against both kinds of rate-limit store.
 *
 * With the memory store nothing here runs an effect per request: the
 * rate-limit decision is synchronous (`rateLimitMemory.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CampusgateApi } from "../api/Api.ts"
import { keyMayCall, scopesAcceptedBy } from "../api/Authorization.ts"
import { type Problem, withRequestId } from "../api/problems.ts"
import { type RateLimitBucketName, rateLimitBucketOf } from "../api/rateLimits.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { Validation } from "../app/Validation.ts"
import type { ApiKeyRecord, Scope } from "../domain/ApiKey.ts"
import { ConsoleSessions } from "./consoleSession.ts"
import { authenticate } from "./credentials.ts"
import { type SinglePayload, validateSingle } from "./handlers/validation.ts"
import { Metrics } from "./metrics.ts"
import { problemResponse } from "./problemResponse.ts"
import { RequestLogger, recordRequest } from "./RequestLogger.ts"
import { makeRateLimitDecider, type RateLimitDecision } from "./rateLimit.ts"
import { jsonPayloadSchema, malformedJson, payloadParseOptions, payloadProblem } from "./requestErrors.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./requestId.ts"
import { type ApiEndpoint, findRoute, routedPath } from "./routes.ts"

/** What the fast path needs of an endpoint it takes, derived once from the contract. */
interface FastEndpoint {
  readonly template: string
  readonly accepted: ReadonlyArray<Scope>
  readonly bucket: RateLimitBucketName
  readonly schema: Schema.Top
  readonly decode: (input: unknown) => Exit.Exit<SinglePayload, Schema.SchemaError>
}

const { targetGroup, offer } = CampusgateApi.groups.validation.endpoints
const fastEndpoints = new Map<ApiEndpoint, FastEndpoint>(
  [targetGroup, offer].map((endpoint) => {
    const route = findRoute(endpoint.method, endpoint.path)!
    const schema = jsonPayloadSchema(endpoint)
    if (schema === undefined) throw new Error(`${endpoint.path} declares no JSON payload`)
    return [
      endpoint,
      {
        template: route.template,
        accepted: scopesAcceptedBy(endpoint.annotations),
        bucket: rateLimitBucketOf(endpoint.annotations),
        schema,
        decode: Schema.decodeUnknownExit(schema as Schema.Codec<SinglePayload>, payloadParseOptions)
      }
    ]
  })
)

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Bytes that are not UTF-8 are a malformed body, never an address with U+FFFD in it. */
const textDecoder = new TextDecoder("utf-8", { fatal: true })

/** Destroys the connection of a request whose body could not be read (the response is never written). */
function abandon(this: IncomingMessage): void {
  this.socket?.destroy()
}

/** What the endpoint answers for this body, after the rate limit let it through: the result's JSON text, or a problem. */
const evaluate = (
  validation: Validation["Service"],
  endpoint: FastEndpoint,
  team: string,
  bytes: Buffer | undefined,
  requestId: string
): string | Problem => {
  let input: unknown
  try {
    input = bytes === undefined ? undefined : JSON.parse(textDecoder.decode(bytes))
  } catch {
    input = undefined
  }
  if (input === undefined) return malformedJson()
  const decoded = endpoint.decode(input)
  if (Exit.isFailure(decoded)) {
    const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    return failure === undefined
      ? malformedJson()
      : payloadProblem(endpoint.schema, input, bytes!.length, failure.error)
  }
  const answer = validateSingle(validation, team, decoded.value, requestId)
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
  const rendered = problemResponse(withRequestId(answer, requestId))
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

export class FastPath extends Context.Service<
  FastPath,
  {
    /** Answers `request` if it is one the fast path takes (true), else leaves it untouched (false). */
    take(request: IncomingMessage, response: ServerResponse): boolean
  }
>()("campusgate/server/FastPath") {
  static readonly layer = Layer.effect(
    FastPath,
    Effect.gen(function* () {
      const snapshot = yield* Snapshot
      const metrics = yield* Metrics
      const validation = yield* Validation
      const logger = yield* RequestLogger
      const sessions = yield* ConsoleSessions
      const { decide, decideNow } = yield* makeRateLimitDecider

      /** The fast endpoint and the key's record when the request is one the fast path takes. */
      const takes = (request: IncomingMessage): { endpoint: FastEndpoint; record: ApiKeyRecord } | undefined => {
        const method = request.method
        if (method !== "POST" || request.url === undefined) return undefined
        const routed = findRoute(method, routedPath(request.url))?.endpoint
        const endpoint = routed === undefined ? undefined : fastEndpoints.get(routed)
        if (endpoint === undefined) return undefined
        if (header(request, "content-type")?.startsWith("application/json") !== true) return undefined
        const length = Number(header(request, "content-length"))
        const current = snapshot.current()
        const { config } = current
        if (!Number.isInteger(length) || length < 0 || length > config.settings.server.maxBodyBytes) return undefined
        // A bearer key or the console's session cookie; any refusal is the Effect app's to answer.
        const authenticated = authenticate({ method, headers: request.headers }, current, sessions, Date.now())
        return authenticated.ok && keyMayCall(authenticated.record.scopes, endpoint.accepted)
          ? { endpoint, record: authenticated.record }
          : undefined
      }

      const answer = (
        response: ServerResponse,
        endpoint: FastEndpoint,
        record: ApiKeyRecord,
        bytes: Buffer | undefined,
        requestId: string,
        started: number,
        decision: RateLimitDecision
      ) => {
        const result = decision.problem ?? evaluate(validation, endpoint, record.team, bytes, requestId)
        const status = respond(response, result, decision, requestId)
        recordRequest(
          metrics,
          logger,
          { method: "POST", route: endpoint.template, status, started },
          requestId,
          record.id
        )
      }

      const take = (request: IncomingMessage, response: ServerResponse): boolean => {
        const taken = takes(request)
        if (taken === undefined) return false
        const { endpoint, record } = taken
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
          if (decideNow !== undefined) {
            const decision = decideNow(record.id, endpoint.bucket, Date.now())
            answer(response, endpoint, record, bytes, requestId, started, decision)
          } else {
            void Effect.runPromise(decide(record.id, endpoint.bucket)).then((decision) =>
              answer(response, endpoint, record, bytes, requestId, started, decision)
            )
          }
        })
        return true
      }

      return FastPath.of({ take })
    })
  )
}
