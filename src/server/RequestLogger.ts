/**
 * One structured JSON line per request on standard output: method, path,
 * status, duration, request id and API key id — never the key, never an
 * email address. A layer, so tests and embedders can collect the lines.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Metrics } from "./metrics.ts"

export interface RequestLog {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
  readonly requestId: string
  readonly keyId?: string
}

export class RequestLogger extends Context.Service<RequestLogger, { log(entry: RequestLog): void }>()(
  "campusgate/server/RequestLogger"
) {
  /**
   * JSON lines on standard output, written in batches: lines gather for the
   * rest of the current turn of the event loop (or until 64 KB) and go out
   * in one write, instead of one write per request. Flushed when the server
   * stops.
   */
  static readonly layerStdout = Layer.effect(
    RequestLogger,
    Effect.acquireRelease(
      Effect.sync(() => {
        let pending = ""
        let scheduled = false
        const flush = () => {
          scheduled = false
          if (pending === "") return
          const text = pending
          pending = ""
          process.stdout.write(text)
        }
        const log = (entry: RequestLog) => {
          pending += `${JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "request", ...entry })}\n`
          if (pending.length >= 65_536) flush()
          else if (!scheduled) {
            scheduled = true
            setImmediate(flush)
          }
        }
        return { logger: RequestLogger.of({ log }), flush }
      }),
      ({ flush }) => Effect.sync(flush)
    ).pipe(Effect.map(({ logger }) => logger))
  )

  /** Drops every line. */
  static readonly layerSilent = Layer.succeed(RequestLogger, RequestLogger.of({ log: () => {} }))
}

/**
 * An answered request, counted and logged: the metrics series and the log
 * line. The one place for both, whether the Effect stack or the hot path
 * answered.
 */
export const recordRequest = (
  metrics: Metrics["Service"],
  logger: RequestLogger["Service"],
  request: { readonly method: string; readonly url: string; readonly status: number; readonly started: number },
  requestId: string,
  keyId: string | undefined
): void => {
  const durationMs = performance.now() - request.started
  metrics.request(request.method, request.url, request.status, durationMs)
  const query = request.url.indexOf("?")
  logger.log({
    method: request.method,
    path: query < 0 ? request.url : request.url.slice(0, query),
    status: request.status,
    durationMs: Math.round(durationMs * 100) / 100,
    requestId,
    ...(keyId === undefined ? {} : { keyId })
  })
}
