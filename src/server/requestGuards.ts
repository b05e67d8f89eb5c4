/**
 * What the outermost middleware checks before a request is routed or its
 * body decoded, each answered as a problem at once:
 * - a path with broken percent-encoding (`%ZZ`, bytes that are not UTF-8)
 *   is a 400 naming `/path`: no route can match it, and the 404/405 logic
 *   would otherwise answer "method not allowed";
 * - a declared `Content-Length` above the route's limit is a 413 before any
 *   of the body is read (the job upload has its own, larger limit), and a
 *   client that sent `Expect: 100-continue` is not asked for the body;
 * - a buffered JSON body that is not UTF-8 is `MALFORMED_JSON`: decoding
 *   would turn its bytes into U+FFFD and validate another address.
 */
import { isUtf8 } from "node:buffer"
import type { IncomingMessage } from "node:http"
import type { Settings } from "../config/Settings.ts"
import { jsonPayloadSchema } from "./requestErrors.ts"
import { findRoute, type Route, routedPath } from "./routes.ts"

/** Whether a path's percent-encoding is broken: a `%` without two hex digits, or escapes that are not UTF-8. */
export const brokenPercentEncoding = (path: string): boolean => {
  if (!path.includes("%")) return false
  try {
    decodeURIComponent(path)
    return false
  } catch {
    return true
  }
}

/** Whether the route takes a job upload (a streamed body, with the jobs' own limit). */
export const isUploadRoute = (route: Route | undefined): boolean =>
  route?.endpoint?.payload.get("application/json")?.encoding._tag === "Stream"

/** The largest body a route accepts, in bytes. */
export const bodyLimitOf = (route: Route | undefined, settings: Settings): number =>
  isUploadRoute(route) ? settings.limits.jobMaxBodyBytes : settings.server.maxBodyBytes

/** The declared body length when it is above `limit`, else undefined (no header: the limit applies while reading). */
export const declaredTooLarge = (contentLength: string | undefined, limit: number): number | undefined => {
  if (contentLength === undefined) return undefined
  const length = Number(contentLength)
  return Number.isFinite(length) && length > limit ? length : undefined
}

/**
 * The declared body length of a request when it is above its route's limit:
 * answered 413 before any of the body is read, and a client that asked
 * first (`Expect: 100-continue`) is never told to send it.
 */
export const declaredOverLimit = (request: IncomingMessage, settings: Settings): number | undefined =>
  declaredTooLarge(
    request.headers["content-length"],
    bodyLimitOf(findRoute(request.method ?? "GET", routedPath(request.url ?? "/")), settings)
  )

/** Whether the route reads its body whole as JSON (so it can be checked for UTF-8 before decoding). */
export const readsJsonBody = (route: Route | undefined): boolean =>
  route?.endpoint !== undefined && jsonPayloadSchema(route.endpoint) !== undefined

export const isUtf8Body = (body: ArrayBuffer): boolean => isUtf8(body)
