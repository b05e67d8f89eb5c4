/**
 * The daemon's one log: a single sink (standard output by default), a
 * single line format (`logLine.ts`) and a single minimum level, for every
 * line it writes:
 * - Effect's own logging (`Effect.logInfo`, `logWarning`, ... in jobs,
 *   statistics, ...): the layer installs `Log.logger` as the only Effect
 *   logger. The message's first string is `msg`, plain objects after it are
 *   fields, log annotations are fields, a cause is `cause` (pretty-printed);
 * - events outside an effect (config reloads, from a callback): `write`;
 * - request lines from the request path: `request`, already serialised by
 *   hand (`logLine.ts`).
 *
 * Lines go through one queue, written off the request thread: the default
 * sink writes with `fs.write` on the file descriptor (the thread pool), one
 * write in flight at a time, each write taking everything queued, so a slow
 * disk or pipe never stalls a request. Request lines queued in a turn of
 * the event loop go in one write at its end, at most one write every 50 ms
 * (or at once at 256 KB): under load, lines gather into large writes. The queue is bounded (4 MB): a request
 * line that would pass the bound is dropped and counted (`droppedLines`,
 * the metric `campusgate_log_lines_dropped_total`), and once the queue has
 * drained a warn line says how many were dropped. Event lines (rare:
 * reloads, warnings, errors, the bootstrap key) are never dropped: one is
 * written synchronously, with the lines queued before it, when no write is
 * in flight, so a crash right after cannot take it; else it goes in the
 * next write. Every line keeps its place. What is queued is written out
 * synchronously when the log is flushed (released) and at process exit, a
 * crash included (Node's `exit` event); a write already handed to the
 * thread pool is left to it.
 *
 * The minimum level (`logging.level`, `CAMPUSGATE_LOG_LEVEL` winning) and
 * `logging.logEmails` are read per line, so `configure` applies a reloaded
 * config at once; Effect's `MinimumLogLevel` is set to `All` so every Effect
 * log reaches this filter. Every string of an event line goes through
 * `redact` (API keys, and addresses unless `logEmails`); request lines hold
 * only a route template, ids, a method and numbers.
 */
import { write as writeAsync, writeSync } from "node:fs"
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

/** A sink that may write asynchronously. */
export interface LogSink {
  /** Starts writing `text` (whole lines); `done` is called once it is written. The log keeps one write in flight. */
  readonly write: (text: string, done: () => void) => void
  /** Writes `text` before returning, after whatever of an earlier write still waits: at release and at exit. */
  readonly writeSync: (text: string) => void
}

/** Where the lines go: a function takes each chunk of whole lines at once (tests, embedders); a sink, asynchronously. */
export type LogOutput = ((text: string) => void) | LogSink

/** How long a synchronous write waits for a full pipe to take its bytes (at exit) before giving up. */
const SYNC_PATIENCE_MS = 2000

/**
 * A sink writing to file descriptor `fd` with `fs.write` (on the thread pool, never blocking the
 * caller). A pipe in non-blocking mode that is full (EAGAIN) is tried again a millisecond later; an
 * output gone (EPIPE, EBADF) loses its lines rather than the process.
 */
export const fdSink = (fd: number): LogSink => {
  let waiting: { bytes: Buffer; offset: number; done: () => void; timer: NodeJS.Timeout } | undefined
  const writeFrom = (bytes: Buffer, offset: number, done: () => void) => {
    writeAsync(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
      if (error === null) {
        if (offset + written < bytes.length) writeFrom(bytes, offset + written, done)
        else done()
      } else if (error.code === "EAGAIN") {
        const timer = setTimeout(() => {
          waiting = undefined
          writeFrom(bytes, offset, done)
        }, 1)
        waiting = { bytes, offset, done, timer }
      } else done()
    })
  }
  const writeAllSync = (bytes: Buffer) => {
    const giveUp = Date.now() + SYNC_PATIENCE_MS
    let offset = 0
    while (offset < bytes.length) {
      try {
        offset += writeSync(fd, bytes, offset, bytes.length - offset)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() > giveUp) return
      }
    }
  }
  return {
    write: (text, done) => writeFrom(Buffer.from(text), 0, done),
    writeSync: (text) => {
      const held = waiting
      if (held !== undefined) {
        clearTimeout(held.timer)
        waiting = undefined
        writeAllSync(held.bytes.subarray(held.offset))
      }
      if (text !== "") writeAllSync(Buffer.from(text))
      held?.done()
    }
  }
}

/** How long `close` waits for the write in flight before writing the rest synchronously. */
const CLOSE_PATIENCE_MS = 2000
/**
 * The least time between the starts of two writes of request lines: under load, lines gather for this
 * long into one write, as each write costs a hand-over to the thread pool and back (bench/http.ts with
 * BENCH_CPU_PROF: a write per turn of the event loop was ~4 µs of the request thread's time an answer),
 * and the pool's thread pays much of each write whatever its size (appending to a file on ext4: 2 KB
 * writes ~55-130 µs of CPU each, 90 KB ones ~280-520 µs). Single validations at 64 connections, the
 * daemon's pool threads (`threadCpuSeconds` of bench/daemonProcess.ts): ~2.2 µs of CPU an answer with
 * writes 10 ms apart, ~1.2 µs at 50 ms (medians of 10 alternating rounds). A log idle this long still
 * writes its lines at the end of the turn.
 */
const WRITE_INTERVAL_MS = 50
/** Request lines written at once when this much is queued, without waiting for the end of the turn or the interval. */
const BATCH_BYTES = 262_144
/** The bound of the queue: a request line that would pass it is dropped. */
export const QUEUE_BYTES = 4 * 1024 * 1024

/** The logs that may hold queued lines, written out if the process exits. */
const unflushed = new Set<() => void>()
let exitHooked = false
const flushAtExit = (flush: () => void) => {
  if (!exitHooked) {
    exitHooked = true
    process.on("exit", () => {
      for (const pending of unflushed) pending()
    })
  }
  unflushed.add(flush)
}

const isFields = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

export class Log extends Context.Service<
  Log,
  {
    /** Whether a line at `level` is written under the settings in force. */
    enabled(level: LogLevel): boolean
    /** Writes one event line, if its level is enabled: queued after every earlier line, never dropped. */
    write(level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>): void
    /**
     * Writes one event line whatever the level, with API keys left in: for
     * the one line that must show a secret and must not be lost (the
     * bootstrap API key, shown only once). Addresses are still masked.
     */
    writeSecret(msg: string, fields: Readonly<Record<string, unknown>>): void
    /** Queues one serialised request line, written at the end of this turn; dropped (and counted) when the queue is full. */
    request(line: string): void
    /** Request lines dropped since the log was made, the queue being full. */
    droppedLines(): number
    /** Applies new settings (a reloaded `logging` section). */
    configure(settings: LogSettings): void
    /** Effect's logger writing into this log. */
    readonly logger: Logger.Logger<unknown, void>
  }
>()("campusgate/observability/Log") {
  /**
   * A log writing to `output` (default standard output, asynchronously); `flush` writes out what is
   * queued synchronously, `close` waits for the write in flight first (call one of them when done).
   */
  static readonly make = (
    initial: LogSettings,
    output: LogOutput = fdSink(1),
    options: { readonly queueBytes?: number; readonly writeIntervalMs?: number } = {}
  ): { readonly log: Log["Service"]; readonly flush: () => void; readonly close: () => Promise<void> } => {
    let minimum = levelRank(initial.level)
    let logEmails = initial.logEmails
    const bound = options.queueBytes ?? QUEUE_BYTES
    const interval = options.writeIntervalMs ?? WRITE_INTERVAL_MS
    // Replacers for JSON.stringify: every string (and error text) of a line, however deep.
    const redactValue = (_key: string, value: unknown): unknown => {
      if (typeof value === "string") return redact(value, logEmails)
      return value instanceof Error ? redact(String(value), logEmails) : value
    }
    const redactAddressesOnly = (_key: string, value: unknown): unknown => {
      if (typeof value === "string") return redactAddresses(value, logEmails)
      return value instanceof Error ? redactAddresses(String(value), logEmails) : value
    }
    const sink: LogSink =
      typeof output === "function"
        ? {
            write: (text, done) => {
              output(text)
              done()
            },
            writeSync: (text) => {
              if (text !== "") output(text)
            }
          }
        : output

    let queue: Array<string> = []
    let queuedBytes = 0
    let writing = false
    let scheduled = false
    let dropped = 0
    let unreported = 0
    let idle: Array<() => void> = []

    const enabled = (level: LogLevel) => levelRank(level) >= minimum
    const droppedLine = () =>
      formatLine(
        "warn",
        "request log lines dropped: the log's output could not keep up",
        { dropped: unreported, droppedTotal: dropped },
        Date.now(),
        redactValue
      )
    const enqueue = (line: string) => {
      queue.push(line)
      queuedBytes += line.length
    }
    const reportDropped = () => {
      if (unreported === 0) return
      enqueue(droppedLine())
      unreported = 0
    }
    /** Everything queued as one text, the queue emptied. */
    const take = (): string => {
      const text = queue.length === 1 ? queue[0]! : queue.join("")
      queue = []
      queuedBytes = 0
      return text
    }
    let lastWrite = Number.NEGATIVE_INFINITY
    const pump = () => {
      scheduled = false
      if (writing || queue.length === 0) return
      writing = true
      lastWrite = performance.now()
      sink.write(take(), written)
    }
    /** A write at the end of this turn, or once `WRITE_INTERVAL_MS` have passed since the last one started. */
    const schedule = () => {
      if (scheduled || writing) return
      scheduled = true
      const wait = lastWrite + interval - performance.now()
      if (wait <= 0) setImmediate(pump)
      else setTimeout(pump, wait)
    }
    function written() {
      writing = false
      // The queue drained: the pressure is over, so the lines dropped under it are reported.
      if (queue.length === 0) reportDropped()
      if (queue.length > 0) return schedule()
      const waiters = idle
      idle = []
      for (const resume of waiters) resume()
    }
    /** Writes out everything queued, synchronously (after a write in flight has been given to the thread pool). */
    const flush = () => {
      reportDropped()
      sink.writeSync(queue.length === 0 ? "" : take())
    }
    if (typeof output !== "function") flushAtExit(flush)

    // An event line is written at once, synchronously, with the request lines queued before it, when no write
    // is in flight (events are rare: a crash right after cannot take it); else it goes in the next write.
    const now = (line: string) => {
      enqueue(line)
      if (!writing) sink.writeSync(take())
    }
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
      request: (line) => {
        if (queuedBytes + line.length > bound) {
          dropped++
          unreported++
          return
        }
        enqueue(line)
        if (writing) return
        if (queuedBytes >= BATCH_BYTES) pump()
        else schedule()
      },
      droppedLines: () => dropped,
      configure: (settings) => {
        minimum = levelRank(settings.level)
        logEmails = settings.logEmails
      },
      logger
    })
    const close = async () => {
      if (writing)
        await new Promise<void>((resume) => {
          idle.push(resume)
          setTimeout(resume, CLOSE_PATIENCE_MS).unref()
        })
      unflushed.delete(flush)
      flush()
    }
    return { log, flush, close }
  }

  /** `log` as a layer, installed as the only Effect logger for everything built with it. */
  static readonly layerOf = (log: Log["Service"]): Layer.Layer<Log> =>
    Layer.mergeAll(
      Layer.succeed(Log, log),
      Logger.layer([log.logger]),
      Layer.succeed(References.MinimumLogLevel, "All")
    )

  /** A log writing to `output` (default standard output) as a layer, written out when released. */
  static readonly layer = (settings: LogSettings, output?: LogOutput): Layer.Layer<Log> =>
    Layer.unwrap(
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => Log.make(settings, output)),
          ({ close }) => Effect.promise(close)
        ),
        ({ log }) => Log.layerOf(log)
      )
    )
}
