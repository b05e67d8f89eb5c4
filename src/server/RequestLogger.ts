/**
 * One structured JSON line per request on standard output: method, path,
 * status, duration, request id and API key id — never the key, never an
 * email address. A layer, so tests and embedders can collect the lines.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

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
  /** JSON lines on standard output. */
  static readonly layerStdout = Layer.succeed(
    RequestLogger,
    RequestLogger.of({
      log: (entry) =>
        process.stdout.write(
          `${JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "request", ...entry })}\n`
        )
    })
  )

  /** Drops every line. */
  static readonly layerSilent = Layer.succeed(RequestLogger, RequestLogger.of({ log: () => {} }))
}
