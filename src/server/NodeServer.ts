/**
 * The one HTTP server of the daemon: a Node `http.Server` whose request
 * listener offers each request to the fast path first (`fastPath.ts`), then
 * to the OpenID Connect provider (`oidc.ts`: discovery and `/oidc/`), and
 * hands every other to the Effect app through `NodeHttpServer.makeHandler`.
 * Both answer on the same port, with one route table, one scope rule, one
 * problem renderer and one rate limiter between them.
 *
 * Listening and shutdown behave as `NodeHttpServer`'s: when the app stops
 * being served, the server stops accepting connections and requests in
 * flight may finish for at most `gracefulShutdownTimeout`; then it is closed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerError from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import { Snapshot } from "../app/Snapshot.ts"
import { FastPath } from "./fastPath.ts"
import { OidcEndpoints } from "./oidc.ts"
import { declaredOverLimit } from "./requestGuards.ts"

export interface NodeServerOptions {
  readonly port: number
  readonly host: string
  readonly gracefulShutdownTimeout: Duration.Input
  readonly timeouts: {
    /** No bytes either way for this long on an open request (a stalled body): the connection is dropped. */
    readonly idleMs: number
    readonly headersMs: number
    /** The whole request, headers and body. */
    readonly requestMs: number
  }
  /**
   * Work no request needs but the first ones would otherwise do on their
   * way (`warmEngineContext`): run once the first response has gone (a
   * health check, as a rule), or a second after listening when no request
   * came, so that the first `/healthz` is not kept waiting for it.
   */
  readonly afterFirstResponse?: (() => void) | undefined
}

/** How long after listening `afterFirstResponse` runs when no request has come. */
const FIRST_RESPONSE_WAIT_MS = 1000

/** Runs `work` once, after the first response `server` sends has gone, or `waitMs` after now. */
export const afterFirstResponse = (server: Server, work: () => void, waitMs = FIRST_RESPONSE_WAIT_MS): void => {
  const run = () => {
    clearTimeout(timer)
    server.off("request", onFirst)
    work()
  }
  // A response's "close" comes once it has been sent (or its connection has gone); the next turn, so it is out.
  const onFirst = (_request: IncomingMessage, response: ServerResponse) => {
    clearTimeout(timer)
    server.off("request", onFirst)
    response.once("close", () => setImmediate(run))
  }
  const timer = setTimeout(run, waitMs).unref()
  server.on("request", onFirst)
}

/** What the server does with a request, or with one that asked `Expect: 100-continue`. */
interface Listeners {
  readonly request: (request: IncomingMessage, response: ServerResponse) => void
  readonly checkContinue: (request: IncomingMessage, response: ServerResponse) => void
}

/**
 * Holds the requests `server` receives before it is given its listeners:
 * it listens before the app's routes are built, and a request that came
 * in between would otherwise get no answer at all. `serve` attaches the
 * listeners and hands them the held requests, in the order they came.
 */
export const holdUntilServed = (server: Server): { readonly serve: (listeners: Listeners) => void } => {
  const held: Array<readonly [keyof Listeners, IncomingMessage, ServerResponse]> = []
  const holdRequest = (request: IncomingMessage, response: ServerResponse) => held.push(["request", request, response])
  const holdContinue = (request: IncomingMessage, response: ServerResponse) =>
    held.push(["checkContinue", request, response])
  server.on("request", holdRequest)
  server.on("checkContinue", holdContinue)
  return {
    serve: (listeners) => {
      server.off("request", holdRequest)
      server.off("checkContinue", holdContinue)
      server.on("request", listeners.request)
      server.on("checkContinue", listeners.checkContinue)
      for (const [kind, request, response] of held.splice(0)) listeners[kind](request, response)
    }
  }
}

const make = (options: NodeServerOptions) =>
  Effect.gen(function* () {
    const fastPath = yield* FastPath
    const oidc = yield* OidcEndpoints
    const snapshot = yield* Snapshot
    const { idleMs, headersMs, requestMs } = options.timeouts
    // Node refuses a headers timeout above the request timeout.
    const server = createServer({ requestTimeout: requestMs, headersTimeout: Math.min(headersMs, requestMs) })
    // Without a 'timeout' listener, Node destroys a socket idle this long (keep-alive idling has its own, shorter timeout).
    server.setTimeout(idleMs)

    const shutdown = yield* Effect.callback<void>((resume) => {
      if (!server.listening) return resume(Effect.void)
      server.close((error) => resume(error === undefined ? Effect.void : Effect.die(error)))
    }).pipe(Effect.cached)
    yield* Effect.addFinalizer(() => shutdown)
    const drain = Effect.timeoutOrElse(shutdown, {
      duration: options.gracefulShutdownTimeout,
      orElse: () => Effect.void
    })

    const held = holdUntilServed(server)
    yield* Effect.callback<void, HttpServerError.ServeError>((resume) => {
      const onError = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
      server.once("error", onError)
      server.listen({ port: options.port, host: options.host }, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    if (options.afterFirstResponse !== undefined) afterFirstResponse(server, options.afterFirstResponse)
    const bound = server.address()
    if (bound === null || typeof bound === "string") {
      return yield* new HttpServerError.ServeError({ cause: new Error("the server is not listening on a TCP port") })
    }
    const address = yield* Effect.fromResult(NetAddress.inetAddressFromIpString(bound.address, bound.port)).pipe(
      Effect.mapError((cause) => new HttpServerError.ServeError({ cause }))
    )

    return HttpServer.make({
      address,
      serve: Effect.fnUntraced(function* (httpApp, middleware) {
        const serveScope = yield* Effect.scope
        const scope = Scope.forkUnsafe(serveScope, "parallel")
        const effectApp = yield* NodeHttpServer.makeHandler(httpApp, { middleware, scope })
        const onRequest = (request: IncomingMessage, response: ServerResponse) => {
          if (!fastPath.take(request, response) && !oidc.take(request, response)) effectApp(request, response)
        }
        // `Expect: 100-continue`: the body is asked for only when it may be sent; a body declared over the
        // route's limit gets its 413 at once instead (Node would send 100 Continue first).
        const onCheckContinue = (request: IncomingMessage, response: ServerResponse) => {
          if (declaredOverLimit(request, snapshot.current().config.settings) === undefined) response.writeContinue()
          onRequest(request, response)
        }
        yield* Scope.addFinalizerExit(serveScope, () =>
          Effect.ensuring(
            drain,
            Effect.sync(() => {
              server.off("request", onRequest)
              server.off("checkContinue", onCheckContinue)
            })
          )
        )
        held.serve({ request: onRequest, checkContinue: onCheckContinue })
      })
    })
  })

/** The server with the Node platform services the Effect app needs; needs the fast path and the OpenID Connect provider. */
export const layer = (
  options: NodeServerOptions
): Layer.Layer<
  HttpServer.HttpServer | Layer.Success<typeof NodeHttpServer.layerHttpServices>,
  HttpServerError.ServeError,
  FastPath | OidcEndpoints | Snapshot
> => Layer.mergeAll(Layer.effect(HttpServer.HttpServer, make(options)), NodeHttpServer.layerHttpServices)
