/**
 * One log line per answered request: method, route template (never the
 * path as sent), status, duration, request id and API key id — never the
 * key, never an email address. The line is serialised once, by hand
 * (`requestLine`), and queued in the daemon's one log (`Log.request`),
 * which writes it off the request thread with the other lines, under the
 * same minimum level, without running an effect per request. A service, so
 * tests and embedders can collect the entries instead.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Log } from "../observability/Log.ts"
import { type RequestLog, requestLine, requestLineOf } from "../observability/logLine.ts"
import type { Metrics, RequestRecorder } from "./metrics.ts"

export type { RequestLog } from "../observability/logLine.ts"

/** A duration as the log line shows it: milliseconds to two decimals. */
const rounded = (durationMs: number) => Math.round(durationMs * 100) / 100

/** Logs the requests of one method and route: status, duration in milliseconds, request id, key id. */
export type BoundRequestLog = (status: number, durationMs: number, requestId: string, keyId: string | undefined) => void

export class RequestLogger extends Context.Service<
  RequestLogger,
  {
    log(entry: RequestLog): void
    /** `log` for one method and route, prepared once; a logger without it is given entries. */
    bind?(method: string, route: string): BoundRequestLog
  }
>()("campusgate/server/RequestLogger") {
  /** Request lines at level info in the daemon's log. */
  static readonly layer: Layer.Layer<RequestLogger, never, Log> = Layer.effect(
    RequestLogger,
    Effect.map(Effect.service(Log), (log) =>
      RequestLogger.of({
        log: (entry) => {
          if (log.enabled("info")) log.request(requestLine(entry, Date.now()))
        },
        bind: (method, route) => {
          const line = requestLineOf(method, route)
          return (status, durationMs, requestId, keyId) => {
            if (log.enabled("info")) log.request(line(status, rounded(durationMs), requestId, keyId, Date.now()))
          }
        }
      })
    )
  )

  /** Drops every line. */
  static readonly layerSilent = Layer.succeed(RequestLogger, RequestLogger.of({ log: () => {} }))
}

/** The log entry of an answered request; the key id only when there is one. */
const entryOf = (
  method: string,
  route: string,
  status: number,
  durationMs: number,
  requestId: string,
  keyId: string | undefined
): RequestLog =>
  keyId === undefined
    ? { method, path: route, status, durationMs: rounded(durationMs), requestId }
    : { method, path: route, status, durationMs: rounded(durationMs), requestId, keyId }

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
  logger.log(entryOf(request.method, request.route, request.status, durationMs, requestId, keyId))
}

/**
 * `recordRequest` for one method and route, its metrics series bound once:
 * the fast path's, one per endpoint.
 */
export const requestRecorder = (
  metrics: Metrics["Service"],
  logger: RequestLogger["Service"],
  method: string,
  route: string
): ((status: number, started: number, requestId: string, keyId: string | undefined) => void) => {
  const count: RequestRecorder = metrics.requests(method, route)
  const log: BoundRequestLog =
    logger.bind?.(method, route) ??
    ((status, durationMs, requestId, keyId) => logger.log(entryOf(method, route, status, durationMs, requestId, keyId)))
  return (status, started, requestId, keyId) => {
    const durationMs = performance.now() - started
    count(status, durationMs)
    log(status, durationMs, requestId, keyId)
  }
}
