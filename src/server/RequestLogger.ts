/**
 * One structured JSON line per request on standard output: method, path,
 * status, duration, request id and API key id — never the key, never an
 * email address. A layer, so tests and embedders can collect the lines.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
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
