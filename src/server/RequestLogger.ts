/**
 * One structured JSON line per request on standard output: method, path,
 * status, duration, request id and API key id — never the key, never an
 * email address. A layer, so tests and embedders can collect the lines.
 *
 * A line is written by hand in the order `JSON.stringify` gives the entry
 * (checked against it by test/server/RequestLogger.test.ts), and its time
 * reuses the ISO text of the current second: formatting a `Date` and
 * stringifying a spread object per request were about 4% of the daemon's
 * CPU on the single-validation benchmark (bench/http.ts).
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

const json = JSON.stringify
const number = (value: number): string => (Number.isFinite(value) ? String(value) : "null")

/** `new Date(epochMs).toISOString()`, the date and time to the second formatted once a second. */
const isoTime = (() => {
  let second = Number.NaN
  let prefix = ""
  return (epochMs: number): string => {
    const start = Math.floor(epochMs / 1000) * 1000
    if (start !== second) {
      second = start
      prefix = new Date(start).toISOString().slice(0, -4)
    }
    const millis = epochMs - start
    return `${prefix}${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`
  }
})()

/** The JSON line of an entry at `epochMs`: `{"time":...,"level":"info","msg":"request",...entry}`. */
export const requestLine = (entry: RequestLog, epochMs: number): string =>
  `{"time":"${isoTime(epochMs)}","level":"info","msg":"request","method":${json(entry.method)},"path":${json(entry.path)},"status":${number(entry.status)},"durationMs":${number(entry.durationMs)},"requestId":${json(entry.requestId)}${entry.keyId === undefined ? "" : `,"keyId":${json(entry.keyId)}`}}\n`

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
          pending += requestLine(entry, Date.now())
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
