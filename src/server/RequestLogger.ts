/**
 * One log line per answered request: method, route template (never the
 * path as sent), status, duration, request id and API key id — never the
 * key, never an email address. The line is serialised by hand
 * (`requestLine`) and handed to the daemon's one log (`Log.batch`), which
 * writes it with the other lines, under the same minimum level, without
 * running an effect per request. A service, so tests and embedders can
 * collect the entries instead.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Log } from "../observability/Log.ts"
import { type RequestLog, requestLine } from "../observability/logLine.ts"
import type { Metrics } from "./metrics.ts"

export type { RequestLog } from "../observability/logLine.ts"

export class RequestLogger extends Context.Service<RequestLogger, { log(entry: RequestLog): void }>()(
  "campusgate/server/RequestLogger"
) {
  /** Request lines at level info in the daemon's log. */
  static readonly layer: Layer.Layer<RequestLogger, never, Log> = Layer.effect(
    RequestLogger,
    Effect.map(Effect.service(Log), (log) =>
      RequestLogger.of({
        log: (entry) => {
          if (log.enabled("info")) log.batch(requestLine(entry, Date.now()))
        }
      })
    )
  )

  /** Drops every line. */
  static readonly layerSilent = Layer.succeed(RequestLogger, RequestLogger.of({ log: () => {} }))
}

/**
 * An answered request, counted and logged: the metrics series and the log
 * line, both under its route template (`routes.ts`). The one place
 * for both, whether the Effect stack or the fast path answered.
 */
export const recordRequest = (
  metrics: Metrics["Service"],
  logger: RequestLogger["Service"],
  request: { readonly method: string; readonly route: string; readonly status: number; readonly started: number },
  requestId: string,
  keyId: string | undefined
): void => {
  const durationMs = performance.now() - request.started
  metrics.request(request.method, request.route, request.status, durationMs)
  logger.log({
    method: request.method,
    path: request.route,
    status: request.status,
    durationMs: Math.round(durationMs * 100) / 100,
    requestId,
    ...(keyId === undefined ? {} : { keyId })
  })
}
