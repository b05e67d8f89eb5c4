/**
 * The fast path: validation answered at the `node:http` level, as the first
 * handler of the one HTTP server (`NodeServer.ts`). A request the route
 * table (`routes.ts`) routes to one of the endpoints of `fastEndpoints.ts`
 * (single validations, `validate/bulk`, `offers/bulk-process`), with a JSON
 * body of a declared length and a valid key (a bearer key or the console's
 * session, `credentials.ts`) that may call the endpoint, is
 * taken here, before the Effect HTTP stack, whose per-request cost (body
 * stream, fiber runtime, router, middleware, response encoding) kept the
 * daemon at about a tenth of a bare server's requests per second and bulk
 * requests at 0.6x an essential-work server's emails per second
 * (bench/http.ts). Every other request goes, unread, to the Effect app.
 *
 * It mirrors nothing of the Effect pipeline; it calls the same pieces: the
 * route table, the scope rule (`api/Authorization.ts`), the rate-limit
 * decision (`rateLimit.ts`), the endpoint's payload schema from the contract
 * with the contract's parse options and the same field errors
 * (`requestErrors.ts`), Validation and the answers
 * (`handlers/validation.ts`, `handlers/offers.ts`), the problem renderer
 * (`problemResponse.ts`), the request id, the metrics and the log line. The
 * end-to-end tests run against both paths (test/server/),
 * test/server/fastPathStores.test.ts against both kinds of rate-limit store.
 *
 * With the memory store nothing here runs an effect per request: the
 * rate-limit decision is synchronous (`rateLimitMemory.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { keyMayCall } from "../api/Authorization.ts"
import { malformedJson, withRequestId } from "../api/problems.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { Validation } from "../app/Validation.ts"
import type { ApiKeyRecord } from "../domain/ApiKey.ts"
import { ConsoleSessions } from "./consoleSession.ts"
import { authenticate } from "./credentials.ts"
import { type FastAnswer, type FastEndpoint, makeFastEndpoints } from "./fastEndpoints.ts"
import { Metrics } from "./metrics.ts"
import { problemResponse } from "./problemResponse.ts"
import { RequestLogger, requestRecorder } from "./RequestLogger.ts"
import { makeRateLimitDecider, type RateLimitDecision } from "./rateLimit.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./requestId.ts"
import { findRoute, routedPath } from "./routes.ts"

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

/** A body as text, or undefined when its bytes are not UTF-8. */
const utf8Text = (bytes: Buffer | undefined): string | undefined => {
  if (bytes === undefined) return ""
  try {
    return textDecoder.decode(bytes)
  } catch {
    return undefined
  }
}

/** What the endpoint answers for this body (UTF-8 text of `bodyBytes` bytes), after the rate limit let it through. */
const evaluate = (
  endpoint: FastEndpoint,
  team: string,
  text: string,
  bodyBytes: number,
  requestId: string
): FastAnswer => {
  let input: unknown
  try {
    input = JSON.parse(text)
  } catch {
    return malformedJson()
  }
  return endpoint.answer(input, bodyBytes, team, requestId)
}

/** No rate-limit fields: a body that is not UTF-8 is refused before the rate limit, as the Effect app's guard does. */
const NOT_LIMITED: RateLimitDecision = { headers: {} }

/**
 * Writes the answer with one `writeHead` and one `end` (Node then sends
 * head and body in a single write); a result's header fields go as a flat
 * list, the form `writeHead` takes without copying. Field order: the
 * problem's own, the rate-limit fields, the content fields, the request id.
 */
const respond = (response: ServerResponse, answer: FastAnswer, decision: RateLimitDecision, requestId: string) => {
  const limits = decision.headers
  const text = typeof answer === "string"
  if (text || answer instanceof Uint8Array) {
    const fields: Array<string> = []
    for (const name in limits) fields.push(name, limits[name]!)
    const length = text ? Buffer.byteLength(answer) : answer.byteLength
    fields.push("content-type", "application/json", "content-length", String(length))
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
      const fastEndpoints = makeFastEndpoints(yield* Validation, snapshot)
      const logger = yield* RequestLogger
      // Each endpoint's metrics series and log line, bound once.
      const recorders = new Map(
        [...fastEndpoints.values()].map((endpoint) => [
          endpoint,
          requestRecorder(metrics, logger, "POST", endpoint.template)
        ])
      )
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
        // A request with an Idempotency-Key is the Effect app's: its answer is kept and replayed there.
        if (header(request, "idempotency-key") !== undefined) return undefined
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
        result: FastAnswer,
        decision: RateLimitDecision,
        requestId: string,
        started: number
      ) => {
        const status = respond(response, result, decision, requestId)
        recorders.get(endpoint)!(status, started, requestId, record.id)
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
          const text = utf8Text(bytes)
          if (text === undefined) {
            return answer(response, endpoint, record, malformedJson(), NOT_LIMITED, requestId, started)
          }
          const decided = (decision: RateLimitDecision) => {
            const result = decision.problem ?? evaluate(endpoint, record.team, text, bytes?.length ?? 0, requestId)
            answer(response, endpoint, record, result, decision, requestId, started)
          }
          const now = decideNow(record.id, endpoint.bucket, Date.now())
          if (now !== undefined) decided(now)
          else void Effect.runPromise(decide(record.id, endpoint.bucket)).then(decided)
        })
        return true
      }

      return FastPath.of({ take })
    })
  )
}
