/**
 * The daemon's one log: a single sink (standard output by default), a
 * single line format (`logLine.ts`) and a single minimum level, for every
 * line it writes:
 * - Effect's own logging (`Effect.logInfo`, `logWarning`, ... in jobs,
 *   statistics, ...): the layer installs `Log.logger` as the only Effect
 *   logger. The message's first string is `msg`, plain objects after it are
 *   fields, log annotations are fields, a cause is `cause` (pretty-printed);
 * - events outside an effect (config reloads, from a callback): `write`;
 * - request lines from the HTTP server's fast path: `batch`, already
 *   serialised by hand and gathered for the rest of the current turn of the
 *   event loop (or until 64 KB) into one write, instead of one write and
 *   one effect per request.
 * Event lines are written at once (after any batched lines, keeping order),
 * so a crash cannot take them with it.
 *
 * The minimum level (`logging.level`, `CAMPUSGATE_LOG_LEVEL` winning) and
 * `logging.logEmails` are read per line, so `configure` applies a reloaded
 * config at once; Effect's `MinimumLogLevel` is set to `All` so every Effect
 * log reaches this filter. Every string of an event line goes through
 * `redact` (API keys, and addresses unless `logEmails`); request lines hold
 * only a route template, ids, a method and numbers.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { formatLine, type LogLevel, levelRank } from "./logLine.ts"
import { redact, redactAddresses } from "./redact.ts"

export interface LogSettings {
  /** The lowest level written. */
  readonly level: LogLevel
  /** Write full email addresses (off: only their domain). */
  readonly logEmails: boolean
}

/** Where the lines go, a chunk of whole lines at a time. */
export type LogOutput = (text: string) => void

const stdout: LogOutput = (text) => {
  process.stdout.write(text)
}

const BATCH_BYTES = 65_536

const isFields = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

export class Log extends Context.Service<
  Log,
  {
    /** Whether a line at `level` is written under the settings in force. */
    enabled(level: LogLevel): boolean
    /** Writes one event line now, if its level is enabled. */
    write(level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>): void
    /**
     * Writes one event line whatever the level, with API keys left in: for
     * the one line that must show a secret and must not be lost (the
     * bootstrap API key, shown only once). Addresses are still masked.
     */
    writeSecret(msg: string, fields: Readonly<Record<string, unknown>>): void
    /** Adds serialised lines (requests) to the batch written at the end of this turn of the event loop. */
    batch(lines: string): void
    /** Applies new settings (a reloaded `logging` section). */
    configure(settings: LogSettings): void
    /** Effect's logger writing into this log. */
    readonly logger: Logger.Logger<unknown, void>
  }
>()("campusgate/observability/Log") {
  /** A log writing to `output`; `flush` writes out the batch (call it when done). */
  static readonly make = (
    initial: LogSettings,
    output: LogOutput = stdout
  ): { readonly log: Log["Service"]; readonly flush: () => void } => {
    let minimum = levelRank(initial.level)
    let logEmails = initial.logEmails
    // Replacers for JSON.stringify: every string (and error text) of a line, however deep.
    const redactValue = (_key: string, value: unknown): unknown => {
      if (typeof value === "string") return redact(value, logEmails)
      return value instanceof Error ? redact(String(value), logEmails) : value
    }
    const redactAddressesOnly = (_key: string, value: unknown): unknown => {
      if (typeof value === "string") return redactAddresses(value, logEmails)
      return value instanceof Error ? redactAddresses(String(value), logEmails) : value
    }

    let pending = ""
    let scheduled = false
    const flush = () => {
      scheduled = false
      if (pending === "") return
      const text = pending
      pending = ""
      output(text)
    }
    const now = (line: string) => {
      if (pending !== "") flush()
      output(line)
    }

    const enabled = (level: LogLevel) => levelRank(level) >= minimum
    const write = (
      level: LogLevel,
      msg: string,
      fields: Readonly<Record<string, unknown>> = {},
      epochMs = Date.now()
    ) => {
      if (enabled(level)) now(formatLine(level, msg, fields, epochMs, redactValue))
    }

    const logger = Logger.make<unknown, void>(({ message, logLevel, cause, fiber, date }) => {
      const level = logLevel.toLowerCase() as LogLevel
      if (!enabled(level)) return
      const fields: Record<string, unknown> = { ...fiber.getRef(References.CurrentLogAnnotations) }
      const details: Array<unknown> = []
      let msg: string | undefined
      for (const part of Array.isArray(message) ? message : [message]) {
        if (msg === undefined && typeof part === "string") msg = part
        else if (isFields(part)) Object.assign(fields, part)
        else details.push(part)
      }
      if (details.length > 0) fields.details = details.length === 1 ? details[0] : details
      if (cause.reasons.length > 0) fields.cause = Cause.pretty(cause)
      write(level, msg ?? "", fields, date.getTime())
    })

    const log = Log.of({
      enabled,
      write: (level, msg, fields) => write(level, msg, fields),
      writeSecret: (msg, fields) => now(formatLine("info", msg, fields, Date.now(), redactAddressesOnly)),
      batch: (lines) => {
        pending += lines
        if (pending.length >= BATCH_BYTES) flush()
        else if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      },
      configure: (settings) => {
        minimum = levelRank(settings.level)
        logEmails = settings.logEmails
      },
      logger
    })
    return { log, flush }
  }

  /** `log` as a layer, installed as the only Effect logger for everything built with it. */
  static readonly layerOf = (log: Log["Service"]): Layer.Layer<Log> =>
    Layer.mergeAll(
      Layer.succeed(Log, log),
      Logger.layer([log.logger]),
      Layer.succeed(References.MinimumLogLevel, "All")
    )

  /** A log writing to `output` (default standard output) as a layer, flushed when released. */
  static readonly layer = (settings: LogSettings, output?: LogOutput): Layer.Layer<Log> =>
    Layer.unwrap(
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => Log.make(settings, output)),
          ({ flush }) => Effect.sync(flush)
        ),
        ({ log }) => Log.layerOf(log)
      )
    )
}
