/**
 * The server's one route table: the contract's endpoints (`api/`) and the
 * routes served beside the API (docs, health, metrics). Everything that asks
 * "which route is this?" asks here: the fast path (is this a request it
 * takes?), the problem middleware (404, or 405 with `Allow`), and the log
 * line and metrics, which show a request under its route template
 * (`/api/v1/offers/{id}/status`) instead of the path as sent, which may hold
 * an API key or an email address and whose values are unbounded.
 *
 * `/v1/...` is the same route as `/api/v1/...`; the query is ignored. The
 * template of a request is that of the route its method is routed to (a GET
 * of `/api/v1/offers/bulk-process` is `GET /api/v1/offers/{id}`), else of
 * its path under any method (a 405), else `unmatched`. Parameterless paths
 * are a map lookup, a tenth of the router's cost, which is what the fast
 * path's two routes need per request.
 */
import * as FindMyWay from "effect/http/FindMyWay"
import { apiEndpoints, canonicalUrl } from "../api/Api.ts"

/** An endpoint of the contract. */
export type ApiEndpoint = (typeof apiEndpoints)[number]

/** Where a path no route matches is logged and counted. */
export const UNMATCHED_ROUTE = "unmatched"

export const METRICS_PATH = "/metrics"
export const OPENAPI_PATH = "/openapi.json"
export const DOCS_PATH = "/docs"
/** The docs page's script (Scalar), served by this daemon. */
export const DOCS_SCRIPT_PATH = "/docs/scalar.js"
/** Redirects to the docs. */
export const ROOT_PATH = "/"
export const HEALTH_PATH = "/healthz"
/** Liveness under the name Kubernetes' own endpoints use; the same answer as `/healthz`. */
export const LIVE_PATH = "/livez"
export const READY_PATH = "/readyz"
/** The public keys of eligibility tokens. */
export const JWKS_PATH = "/.well-known/jwks.json"
/** A verification message's link (its token logs as `{token}`). */
export const LINK_PATH = "/v/:token"
/** The operator console (`console.ts`): its page, its files, and the session a key is exchanged for. */
export const CONSOLE_PATH = "/console"
export const CONSOLE_FILES_PATH = "/console/*"
export const CONSOLE_SESSION_PATH = "/console/session"

/** The hosted verification flow (`hosted/hostedRoutes.ts`): by target group (`?targetGroupId=`) or offer, its files and logos. */
export const HOSTED_PATH = "/verify"
export const HOSTED_OFFER_PATH = "/verify/:offerId"
export const HOSTED_ASSET_PATH = "/verify/assets/:file"
export const HOSTED_LOGO_PATH = "/verify/logos/:file"
/** The drop-in script a shop's page loads (`hosted/dropIn.ts`). */
export const DROP_IN_PATH = "/verify.js"

/** Whether a routed path is the console's (its answers carry the console's security header fields). */
export const isConsolePath = (path: string): boolean => path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`)

/** Routes served beside the API, all GET. */
export const OTHER_ROUTES = [
  ROOT_PATH,
  OPENAPI_PATH,
  DOCS_PATH,
  DOCS_SCRIPT_PATH,
  HEALTH_PATH,
  LIVE_PATH,
  READY_PATH,
  METRICS_PATH,
  JWKS_PATH,
  LINK_PATH,
  HOSTED_PATH,
  HOSTED_OFFER_PATH,
  HOSTED_ASSET_PATH,
  HOSTED_LOGO_PATH,
  DROP_IN_PATH,
  // Also matches `/console` itself.
  CONSOLE_FILES_PATH
] as const

/** Routes beside the API under other methods than GET alone. */
const OTHER_METHOD_ROUTES: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", CONSOLE_SESSION_PATH],
  ["POST", CONSOLE_SESSION_PATH],
  ["DELETE", CONSOLE_SESSION_PATH],
  ["POST", HOSTED_PATH],
  ["POST", HOSTED_OFFER_PATH]
]

export interface Route {
  readonly method: string
  /** The router's form: `/api/v1/offers/:id/status`. */
  readonly path: string
  /** The OpenAPI form, shown in logs and metrics: `/api/v1/offers/{id}/status`. */
  readonly template: string
  /** The contract's endpoint; undefined for the routes beside the API. */
  readonly endpoint: ApiEndpoint | undefined
}

/** `/api/v1/offers/:id/status` as a template: `/api/v1/offers/{id}/status`. */
export const templateOf = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

export const ROUTES: ReadonlyArray<Route> = [
  ...apiEndpoints.map((endpoint) => ({
    method: endpoint.method,
    path: endpoint.path,
    template: templateOf(endpoint.path),
    endpoint
  })),
  ...OTHER_ROUTES.map((path) => ({ method: "GET", path, template: templateOf(path), endpoint: undefined })),
  ...OTHER_METHOD_ROUTES.map(([method, path]) => ({ method, path, template: templateOf(path), endpoint: undefined }))
]

/** Every template a request can be logged or counted under. */
export const ROUTE_TEMPLATES: ReadonlySet<string> = new Set([...ROUTES.map((route) => route.template), UNMATCHED_ROUTE])

const byMethod = FindMyWay.make<Route>()
/** Each path's first route, under GET whatever its method: what a path is logged under when its method is not served. */
const anyMethod = FindMyWay.make<Route>()
/** Parameterless paths: method → route. */
const exact = new Map<string, Map<string, Route>>()
/** Every method some route is served under. */
const methods = [...new Set(ROUTES.map((route) => route.method))]
for (const route of ROUTES) {
  byMethod.on(route.method, route.path as `/${string}`, route)
  // Looked up under GET alone (`routeTemplate`): `all` would add the route under each of the router's ~30 methods,
  // ~100 ms of every start (CPU profile of `campusgate serve`).
  if (ROUTES.find((other) => other.path === route.path) === route)
    anyMethod.on("GET", route.path as `/${string}`, route)
  if (!route.path.includes(":")) {
    let routes = exact.get(route.path)
    if (routes === undefined) {
      routes = new Map()
      exact.set(route.path, routes)
    }
    routes.set(route.method, route)
  }
}

/** A request URL's path as routed: the query dropped, `/v1/...` as `/api/v1/...`. */
export const routedPath = (url: string): string => {
  const query = url.indexOf("?")
  return canonicalUrl(query < 0 ? url : url.slice(0, query))
}

/** The route `method` is routed to at `path` (a routed path), if any. */
export const findRoute = (method: string, path: string): Route | undefined =>
  exact.get(path)?.get(method) ?? byMethod.find(method, path)?.handler

/** The methods some route serves at `path` (a routed path), for a 405's `Allow`; empty when nothing is there (a 404). */
export const methodsAt = (path: string): ReadonlyArray<string> =>
  methods.filter((method) => findRoute(method, path) !== undefined)

/** The route template of a request URL, or `unmatched`. */
export const routeTemplate = (method: string, url: string): string => {
  const path = routedPath(url)
  const route = findRoute(method, path)
  if (route !== undefined) return route.template
  const any = exact.get(path)?.values().next().value ?? anyMethod.find("GET", path)?.handler
  return any?.template ?? UNMATCHED_ROUTE
}
