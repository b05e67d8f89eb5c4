/**
 * The daemon's log line: one JSON object per line,
 * `{"time":"<ISO 8601>","level":"info","msg":"...",...fields}`, the order
 * `JSON.stringify` gives that object. Every line the daemon writes has this
 * shape, whether it comes from Effect's logger (`Log.ts`) or from the
 * request path, which writes its line by hand (`requestLine`).
 *
 * The request line is serialised field by field and its time reuses the
 * ISO text of the current second: formatting a `Date` and stringifying a
 * spread object per request were about 4% of the daemon's CPU on the
 * single-validation benchmark (bench/http.ts). test/observability/logLine.test.ts
 * checks both forms against `JSON.stringify`.
 */

/** The levels of `logging.level`, lowest first; `trace` and `fatal` come from Effect's own levels. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** A level's rank: a line is written when its rank is at least the minimum's. */
export const levelRank = (level: LogLevel): number => LOG_LEVELS.indexOf(level)

/** One answered request, as its log line shows it. */
export interface RequestLog {
  readonly method: string
  /** The route template (`/api/v1/offers/{id}`), never the path as sent. */
  readonly path: string
  readonly status: number
  readonly durationMs: number
  readonly requestId: string
  readonly keyId?: string
}

const json = JSON.stringify
const number = (value: number): string => (Number.isFinite(value) ? String(value) : "null")

/** `new Date(epochMs).toISOString()`, the date and time to the second formatted once a second. */
export const isoTime = (() => {
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

/** `JSON.stringify`, or the value's text when it cannot be stringified (a cycle, a bigint). */
const serialise = (value: unknown, replacer?: (key: string, value: unknown) => unknown): string | undefined => {
  try {
    return json(value, replacer)
  } catch {
    return json(replacer === undefined ? String(value) : replacer("", String(value)))
  }
}

/**
 * The line of an event: `fields` after `time`, `level` and `msg` (a field
 * of one of those names is dropped, so it cannot hide them). `replacer` is
 * given every value, as to `JSON.stringify`.
 */
export const formatLine = (
  level: LogLevel,
  msg: string,
  fields: Readonly<Record<string, unknown>>,
  epochMs: number,
  replacer?: (key: string, value: unknown) => unknown
): string => {
  let text = `{"time":"${isoTime(epochMs)}","level":"${level}","msg":${serialise(msg, replacer)}`
  for (const name in fields) {
    if (name === "time" || name === "level" || name === "msg") continue
    const value = serialise(fields[name], replacer)
    if (value !== undefined) text += `,${json(name)}:${value}`
  }
  return `${text}}\n`
}

/** Writes the request line of one method and route: its status, duration, ids and time vary. */
export type RequestLineWriter = (
  status: number,
  durationMs: number,
  requestId: string,
  keyId: string | undefined,
  epochMs: number
) => string

/** `requestLine` for one method and route, their part of the line serialised once (the fast path binds one per endpoint). */
export const requestLineOf = (method: string, path: string): RequestLineWriter => {
  const fixed = `","level":"info","msg":"request","method":${json(method)},"path":${json(path)},"status":`
  return (status, durationMs, requestId, keyId, epochMs) =>
    `{"time":"${isoTime(epochMs)}${fixed}${number(status)},"durationMs":${number(durationMs)},"requestId":${json(requestId)}${keyId === undefined ? "" : `,"keyId":${json(keyId)}`}}\n`
}

/** The JSON line of a request at `epochMs`: `{"time":...,"level":"info","msg":"request",...entry}`. */
export const requestLine = (entry: RequestLog, epochMs: number): string =>
  requestLineOf(entry.method, entry.path)(entry.status, entry.durationMs, entry.requestId, entry.keyId, epochMs)
