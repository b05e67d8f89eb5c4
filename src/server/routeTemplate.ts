/**
 * The route template of a request: what its log line shows as `path` and
 * its metrics as `route`, instead of the path as sent, which may hold an
 * API key or an email address (`/api/v1/offers/cgk_.../status`) and whose
 * values are unbounded. Templates are the contract's paths with parameters
 * written as in OpenAPI (`/api/v1/offers/{id}/status`), plus the routes
 * served beside the API (docs, health, metrics); `/v1/...` is the same
 * template as `/api/v1/...`, and a path no route matches is `unmatched`.
 *
 * The template is the one the method would be routed to (a GET of
 * `/api/v1/offers/bulk-process` is `GET /api/v1/offers/{id}`), else the
 * path's under any method (a 405). Paths without parameters are a map
 * lookup, a tenth of the router's cost; the hot path does not call this at
 * all, it knows its template.
 */
import * as FindMyWay from "effect/http/FindMyWay"
import { apiEndpoints, canonicalUrl } from "../api/Api.ts"
import { METRICS_PATH } from "./metrics.ts"

/** Where a path no route matches is logged and counted. */
export const UNMATCHED_ROUTE = "unmatched"

/** Routes served beside the API, all GET. */
export const OTHER_ROUTES = ["/openapi.json", "/docs", "/healthz", "/readyz", METRICS_PATH] as const

/** `/api/v1/offers/:id/status` as a template: `/api/v1/offers/{id}/status`. */
export const templateOf = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const routes: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  ...apiEndpoints.map((endpoint) => ({ method: endpoint.method, path: endpoint.path })),
  ...OTHER_ROUTES.map((path) => ({ method: "GET", path }))
]

/** Every template a request can be logged or counted under. */
export const ROUTE_TEMPLATES: ReadonlySet<string> = new Set([
  ...routes.map((route) => templateOf(route.path)),
  UNMATCHED_ROUTE
])

const byMethod = FindMyWay.make<string>()
const anyMethod = FindMyWay.make<string>()
/** Parameterless paths: method → template, with `*` for any other method. */
const exact = new Map<string, Map<string, string>>()
for (const route of routes) {
  const template = templateOf(route.path)
  byMethod.on(route.method, route.path as `/${string}`, template)
  if (routes.find((other) => other.path === route.path) === route) anyMethod.all(route.path as `/${string}`, template)
  if (!route.path.includes(":")) {
    let methods = exact.get(route.path)
    if (methods === undefined) {
      methods = new Map([["*", template]])
      exact.set(route.path, methods)
    }
    methods.set(route.method, template)
  }
}

/** The route template of a request URL (query ignored, `/v1` alias included), or `unmatched`. */
export const routeTemplate = (method: string, url: string): string => {
  const query = url.indexOf("?")
  const path = canonicalUrl(query < 0 ? url : url.slice(0, query))
  const methods = exact.get(path)
  // A parameterless path another method's parameter could match (GET /offers/bulk-process) asks the router.
  const known = methods?.get(method)
  if (known !== undefined) return known
  return (
    byMethod.find(method, path)?.handler ?? methods?.get("*") ?? anyMethod.find("GET", path)?.handler ?? UNMATCHED_ROUTE
  )
}
