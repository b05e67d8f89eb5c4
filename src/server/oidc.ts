/**
 * The OpenID Connect provider on the daemon's one HTTP server: requests for
 * discovery (`/.well-known/openid-configuration`) and under `/oidc/` are
 * taken at the `node:http` level, before the Effect app, as the fast path
 * takes validations (`NodeServer.ts`), and handed to `oidc-provider`'s own
 * handler — except the interaction, the login step, which is the hosted
 * flow (`oidcInteraction.ts`). Each is counted and logged under its route
 * template, as every other request.
 *
 * With no client configured, nothing is taken (those paths answer 404).
 * The provider in force, rebuilt when the configuration, the signing key or
 * the public URL changes, is `oidc/OidcProviders.ts`'s.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Snapshot } from "../app/Snapshot.ts"
import { Log } from "../observability/Log.ts"
import { OidcProviders } from "../oidc/OidcProviders.ts"
import { DISCOVERY_PATH, INTERACTION_PREFIX, OIDC_PREFIX } from "../oidc/oidcPaths.ts"
import { Verifications } from "../verification/Verifications.ts"
import { flowKeys } from "./hosted/flowCookie.ts"
import { Metrics } from "./metrics.ts"
import { finishInteraction, plainPage, startInteraction } from "./oidcInteraction.ts"
import { RequestLogger, recordRequest } from "./RequestLogger.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./requestId.ts"

export interface OidcOptions {
  /** The deployment's verification secret, which signs the hosted flow's proofs. */
  readonly secret: string
}

/** The route template a request is counted and logged under: never the path as sent (a uid, a code in the query). */
const templateOf = (url: string | undefined): string => {
  const path = (url ?? "/").split("?", 1)[0]!
  if (path.startsWith(INTERACTION_PREFIX))
    return path.endsWith("/finish") ? "/oidc/interaction/{uid}/finish" : "/oidc/interaction/{uid}"
  if (path.startsWith("/oidc/auth/")) return "/oidc/auth/{uid}"
  return path === DISCOVERY_PATH || ["/oidc/auth", "/oidc/token", "/oidc/userinfo"].includes(path) ? path : "/oidc/*"
}

/** Which of our paths a request is for: the provider's, an interaction's start or finish, or none. */
const routeOf = (url: string | undefined) => {
  const path = (url ?? "/").split("?", 1)[0]!
  if (path.startsWith(INTERACTION_PREFIX)) {
    const rest = path.slice(INTERACTION_PREFIX.length).split("/")
    // A uid is base64url: taken as sent, never decoded (a malformed escape must not throw here).
    if (rest.length === 1 && rest[0] !== "") return { interaction: rest[0]!, finish: false }
    if (rest.length === 2 && rest[1] === "finish") return { interaction: rest[0]!, finish: true }
    return { provider: false as const }
  }
  return path === DISCOVERY_PATH || path.startsWith(OIDC_PREFIX) ? { provider: true as const } : undefined
}

export class OidcEndpoints extends Context.Service<
  OidcEndpoints,
  {
    /** Answers `request` if it is the provider's (true), else leaves it untouched (false). */
    take(request: IncomingMessage, response: ServerResponse): boolean
  }
>()("campusgate/server/OidcEndpoints") {
  static readonly layer = (
    options: OidcOptions
  ): Layer.Layer<OidcEndpoints, never, Snapshot | Verifications | OidcProviders | Log | Metrics | RequestLogger> =>
    Layer.effect(
      OidcEndpoints,
      Effect.gen(function* () {
        const snapshot = yield* Snapshot
        const verifications = yield* Verifications
        const providers = yield* OidcProviders
        const log = yield* Log
        const metrics = yield* Metrics
        const logger = yield* RequestLogger
        const dependencies = { snapshot, verifications, keys: flowKeys(options.secret) }

        const serve = async (
          route: NonNullable<ReturnType<typeof routeOf>>,
          request: IncomingMessage,
          response: ServerResponse
        ): Promise<void> => {
          const provider = await providers.current()
          if (provider === undefined) return plainPage(response, 503, "Sign-in is unavailable. Please try again.")
          if ("provider" in route) {
            if (!route.provider) return plainPage(response, 404, "Not found.")
            return provider.handle(request, response)
          }
          if (request.method !== "GET") return plainPage(response, 405, "Method not allowed.")
          try {
            if (route.finish) await finishInteraction(provider, dependencies, route.interaction, request, response)
            else await startInteraction(provider, route.interaction, request, response)
          } catch (error) {
            // No interaction cookie, or an interaction that has expired: the browser has to begin again.
            if ((error as { name?: string }).name === "SessionNotFound") {
              plainPage(response, 400, "This sign-in has expired or was begun in another browser. Please start again.")
            } else throw error
          }
        }

        return OidcEndpoints.of({
          take: (request, response) => {
            // No client configured: the provider is off, and its paths are the Effect app's (404).
            if ((snapshot.current().config.clients?.length ?? 0) === 0) return false
            const route = routeOf(request.url)
            if (route === undefined) return false
            // Counted and logged as every other request is, under its route template.
            const started = performance.now()
            const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER] as string | undefined)
            response.setHeader(REQUEST_ID_HEADER, requestId)
            response.once("finish", () =>
              recordRequest(
                metrics,
                logger,
                {
                  method: request.method ?? "GET",
                  route: templateOf(request.url),
                  status: response.statusCode,
                  started
                },
                requestId,
                undefined
              )
            )
            // The body (a token request's form) stays unread, in the request's buffer, until the provider in force is known.
            serve(route, request, response).catch((error) => {
              log.write("error", "OpenID Connect request failed", { error: String(error) })
              if (!response.headersSent) plainPage(response, 503, "Sign-in is unavailable. Please try again.")
              else response.destroy()
            })
            return true
          }
        })
      })
    )
}
