/**
 * The operator console as a browser gets it (issue 17): `GET /console` and
 * any `/console/<path>` without a file extension answer the app's
 * `index.html` (the app routes in the browser; revalidated, `no-cache`),
 * `/console/assets/<hashed file>` the bundled files (cached for a year,
 * `immutable`), each compressed when the client accepts it and with an
 * `ETag` (`staticAsset.ts`). Every answer under `/console` — problems
 * included — carries `consoleHeaders`, set by the outermost middleware
 * (`http.ts`): a strict Content-Security-Policy (nothing from another
 * host, no inline script or style), `nosniff`, no referrer, no framing.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import { NotFound, ServiceUnavailable } from "../api/problems.ts"
import { CONSOLE_INDEX, ConsoleAssets } from "./consoleAssets.ts"
import { answerWith } from "./problemResponse.ts"
import { CONSOLE_FILES_PATH, CONSOLE_PATH, routedPath } from "./routes.ts"
import { assetResponse } from "./staticAsset.ts"

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The header fields of every answer under `/console`. */
export const consoleHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const notBuilt = answerWith(
  new ServiceUnavailable({
    code: "SERVICE_ERROR",
    detail: "The console has not been built: run `npm run build`.",
    retryAfterSeconds: 60
  })
)

/** The file a console path names: its path under the console directory, or the page for an app address. */
const fileOf = (path: string): string => {
  const rest = path.slice(CONSOLE_PATH.length + 1)
  const last = rest.slice(rest.lastIndexOf("/") + 1)
  return last.includes(".") ? decodeURIComponent(rest) : CONSOLE_INDEX
}

const serveConsole = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const files = (yield* ConsoleAssets).files()
  if (files === undefined) return yield* notBuilt
  const path = routedPath(request.url)
  const name = path === CONSOLE_PATH ? CONSOLE_INDEX : fileOf(path)
  const asset = files.get(name)
  if (asset === undefined) {
    return yield* answerWith(new NotFound({ code: "NOT_FOUND", detail: `The console has no file ${path}.` }))
  }
  return assetResponse(asset, request.headers)
})

// The wildcard route also serves `/console` itself.
export const ConsoleRoutes = Layer.mergeAll(HttpRouter.add("GET", CONSOLE_FILES_PATH, serveConsole))
