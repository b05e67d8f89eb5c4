import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import { Institutions } from "../app/Institutions.ts"
import { type BootstrapResult, Keys } from "../app/Keys.ts"
import { Resources } from "../app/Resources.ts"
import { Reviews } from "../app/Reviews.ts"
import { LiveSnapshot, Snapshot } from "../app/Snapshot.ts"
import { directorySource, isStoreUnreadable } from "../app/sources.ts"
import { Validation, ValidationCounters } from "../app/Validation.ts"
import { type Environment, secretsFrom } from "../config/environment.ts"
import { directoriesOf, loadConfig, resolveDataDir } from "../config/loadConfig.ts"
import { type ConfigLoader, makeThreadConfigLoader } from "../config/loadConfigThread.ts"
import { DEFAULT_TEAM, loadSettings } from "../config/settingsFile.ts"
import { isSharedKind, openStores } from "../deployment/stores.ts"
import { formatProblem } from "../domain/errors.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import { warmEngineContext } from "../engine/targeting/EngineContext.ts"
import { ApiKeyStore } from "../keys/ApiKeyStore.ts"
import { Log, type LogOutput } from "../observability/Log.ts"
import { OidcProviders } from "../oidc/OidcProviders.ts"
import { ResourceStore } from "../resources/ResourceStore.ts"
import { ReviewQueue } from "../reviews/ReviewQueue.ts"
import { ReviewStore } from "../reviews/ReviewStore.ts"
import { HostedFunnel } from "../stats/HostedFunnel.ts"
import { OfferStatus } from "../stats/OfferStatus.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import { ensureDirectory } from "../store/atomicWrite.ts"
import { StoreHold } from "../store/breaker.ts"
import { ConsoleAssets } from "./consoleAssets.ts"
import { ConsoleSessions, makeConsoleSessions } from "./consoleSession.ts"
import { FastPath } from "./fastPath.ts"
import { HostedFlowSecret } from "./hosted/hostedExchange.ts"
import { HttpApp } from "./http.ts"
import { jobsLayer } from "./jobService.ts"
import { Metrics } from "./metrics.ts"
import * as NodeServer from "./NodeServer.ts"
import { OidcEndpoints } from "./oidc.ts"
import { RequestLogger } from "./RequestLogger.ts"
import { rateLimiterLayer } from "./rateLimit.ts"
import { startPhases } from "./startPhases.ts"
import { verificationsLayer } from "./verificationService.ts"

export interface ServeOptions {
  readonly configDir: string
  readonly dataDir?: string | undefined
  /** Overrides campusgate.yaml and CAMPUSGATE_PORT (0 picks a free port). */
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly env?: Environment | undefined
  /** Where log lines go (default: standard output). */
  readonly logOutput?: LogOutput | undefined
  /** Where request log entries go (default: the log, at level info). */
  readonly requestLogger?: Layer.Layer<RequestLogger, never, Log> | undefined
  /** Where rate-limit counters live (default: this process's memory; Redis to share them between replicas). */
  readonly rateLimiterStore?: Layer.Layer<RateLimiter.RateLimiterStore> | undefined
  /** Where the console's built files are (default: CAMPUSGATE_CONSOLE_DIR, else the package's `dist/console/`). */
  readonly consoleDir?: string | undefined
}

/**
 * `thread`, but the loads of the start run on this thread: no request waits
 * on it yet, and a worker would first load its own modules (~0.2 s of CPU,
 * the start's to pay on one core). `started` hands every later load to
 * `thread`.
 */
const startingHere = (thread: ConfigLoader): ConfigLoader & { readonly started: () => void } => {
  let starting = true
  return {
    load: (location, data) => (starting ? Promise.resolve(loadConfig(location, data)) : thread.load(location, data)),
    get running() {
      return thread.running
    },
    close: () => thread.close(),
    started: () => {
      starting = false
    }
  }
}

/** The server as a layer: building it loads the config (failing with every problem) and starts listening. */
export const serverLayer = (options: ServeOptions) =>
  Layer.unwrap(
    Effect.gen(function* () {
      // The log exists before the config (reloads report to it) and takes its settings once loaded.
      // Its finalizers come first, so they run last: "stopped", then the last batch written out.
      const { log, close } = Log.make({ level: "info", logEmails: false }, options.logOutput)
      // Waits for the write in flight, then writes the rest: the last lines land after every earlier one.
      yield* Effect.addFinalizer(() => Effect.promise(close))
      // Each step's duration, logged in one line once listening ("start phases").
      const phases = startPhases()
      yield* Effect.addFinalizer(() => Effect.sync(phases.close))
      const location = { configDir: options.configDir, dataDir: options.dataDir, env: options.env }
      const dataDirectory = resolveDataDir(location)
      // The data directory exists from the start, so it is watched from the start.
      ensureDirectory(dataDirectory)
      // The logging settings as campusgate.yaml has them, before the configuration is loaded: the steps obey them too.
      log.configure(loadSettings(resolve(options.configDir), options.env ?? process.env, []).settings.logging)
      // A line for each step of the start, with the milliseconds since the process began, so a slow start says where.
      const phase = (msg: string, fields: Record<string, unknown> = {}) =>
        log.write("info", msg, { ...fields, sinceStartMs: Math.round(performance.now()) })
      phases.end("settings")
      phase("opening the stores", { dataDir: dataDirectory })
      // The Redis client's own warnings (a lost connection, each reconnection attempt) go to the daemon's log.
      const stores = yield* openStores(location, secretsFrom(options.env ?? process.env)).pipe(
        Effect.provide(Log.layerOf(log))
      )
      phases.end("stores")
      phase("loading the configuration", { configDir: resolve(options.configDir), store: stores.kind })
      const resourceStore = stores.resources
      const keyStore = stores.keys
      // Every load after this process starts runs on a worker thread: a large or hostile file never stalls requests.
      // Kept warm where other daemons change the stores, so their changes serve here within a second.
      const threadLoader = yield* Effect.acquireRelease(
        Effect.sync(() => makeThreadConfigLoader({ keepWarm: isSharedKind(stores.kind) })),
        (loader) => Effect.promise(() => loader.close())
      )
      const loader = startingHere(threadLoader)
      const source = directorySource(location, {
        resources: resourceStore,
        keys: keyStore,
        reviews: stores.reviews,
        loader
      })
      // A first start with no API key anywhere gets its bootstrap key before the first snapshot, which
      // then holds it: no reload for it, and its file is written before the watcher starts.
      const keys = Keys.make(keyStore)
      let bootstrap: BootstrapResult = { created: false }
      if ((yield* keyStore.list).length === 0) {
        const first = yield* source.load
        if (first.ok)
          bootstrap = yield* keys.ensureBootstrap(first.config.settings.teams[0]?.id ?? (DEFAULT_TEAM as TeamId))
      }
      let current: LiveSnapshot | undefined
      const live: LiveSnapshot = yield* LiveSnapshot.make(source, {
        watch: true,
        feed: stores.configFeed,
        onReload: (outcome) => {
          if (outcome.ok) {
            if (current !== undefined) log.configure(current.current().config.settings.logging)
            // `change`: "incremental" (the items alone, named) or "reload" (the whole configuration loaded again).
            log.write("info", "config reloaded", {
              generation: outcome.generation,
              change: outcome.change,
              ...(outcome.items === undefined ? {} : { items: outcome.items.map((item) => `${item.kind}:${item.id}`) })
            })
          } else {
            log.write("warn", "config change rejected; the last good config keeps serving", {
              problems: outcome.problems.map(formatProblem)
            })
          }
        }
      })
      current = live
      loader.started()
      phases.end("configuration")
      phase("configuration loaded and engine built", {
        generation: live.current().generation,
        targetGroups: live.current().config.targetGroups.length,
        offers: live.current().config.offers.length
      })
      // Listening only once every change is seen.
      yield* Effect.promise(() => live.watching)
      phases.end("watching")
      yield* Effect.addFinalizer(() => Effect.sync(() => live.close()))
      // Changes other daemons made to the shared stores, applied as the change feed names them (none with files).
      // A change that could not read a store (it was away) fails, to be tried at the watcher's next look.
      yield* stores.watch(
        Effect.flatMap(live.follow(), (outcome) =>
          outcome !== undefined && !outcome.ok && outcome.problems.some(isStoreUnreadable)
            ? Effect.fail(outcome)
            : Effect.void
        )
      )
      const { config } = live.current()
      const { configDir, dataDir } = directoriesOf(config)
      log.configure(config.settings.logging)
      log.write("info", "starting", {
        configDir,
        dataDir,
        store: stores.kind,
        generation: live.current().generation,
        pid: process.pid,
        node: process.version
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => log.write("info", "stopped")))
      if (bootstrap.created) {
        log.writeSecret("created the first API key; it is shown only this once", {
          key: bootstrap.key,
          id: bootstrap.id,
          team: bootstrap.team,
          scopes: bootstrap.scopes,
          storedIn: bootstrap.file
        })
      }
      const server = config.settings.server
      const port = options.port ?? server.port
      const host = options.host ?? server.host
      // Links in verification messages start with verification.publicUrl, else where the server listens.
      let listeningUrl = `http://localhost:${port}`
      const publicUrl = () =>
        (live.current().config.settings.verification.publicUrl ?? listeningUrl).replace(/\/+$/, "")
      // Built once the server listens, so released before it stops: "stopping" comes before the drain.
      const listening = Layer.effectDiscard(
        Effect.andThen(
          HttpServer.addressFormattedWith((url) =>
            Effect.sync(() => {
              listeningUrl = url.replace("//0.0.0.0:", "//localhost:").replace("//[::]:", "//localhost:")
              log.write("info", "listening", { url, docs: `${url}/docs`, openapi: `${url}/openapi.json` })
              phases.end("listen")
              phases.close()
              log.write("info", "start phases", { ...phases.summary(), sinceStartMs: Math.round(performance.now()) })
            })
          ),
          Effect.addFinalizer(() => Effect.sync(() => log.write("info", "stopping")))
        )
      )
      // One instance of each, shared by the Effect HTTP app and the fast path.
      const { statistics } = config.settings
      const usage = statistics.enabled
        ? Layer.unwrap(
            Effect.map(stores.statsKey, (key) =>
              UsageStatistics.layer({ flushIntervalMs: statistics.flushIntervalMs, key }).pipe(
                Layer.provide(stores.usage)
              )
            )
          )
        : UsageStatistics.layerOff
      const consoleDir = options.consoleDir ?? ((options.env ?? process.env).CAMPUSGATE_CONSOLE_DIR || undefined)
      const validation = Validation.layer.pipe(Layer.provide(Layer.effect(ValidationCounters, Effect.service(Metrics))))
      // Unknown domains met by validations, buffered and flushed to the review store; bounded by the setting in force.
      const reviewQueue = ReviewQueue.layer({
        maxPerTeam: () => live.current().config.settings.reviews.maxDomainsPerTeam
      }).pipe(Layer.provideMerge(Layer.succeed(ReviewStore, stores.reviews)))
      const services = Layer.mergeAll(jobsLayer(stores), verificationsLayer(stores, publicUrl)).pipe(
        Layer.provideMerge(
          Layer.mergeAll(Resources.layer, Institutions.layer, OfferStatus.layer, Keys.layer, HostedFunnel.layer)
        ),
        Layer.provideMerge(Reviews.layer(isSharedKind(stores.kind) ? "config-only" : "config-or-data")),
        Layer.provideMerge(validation),
        Layer.provideMerge(Layer.succeed(ResourceStore, resourceStore)),
        Layer.provideMerge(Layer.succeed(ApiKeyStore, keyStore)),
        Layer.provideMerge(stores.idempotency),
        Layer.provideMerge(
          Layer.mergeAll(
            Metrics.layer,
            rateLimiterLayer(options.rateLimiterStore ?? stores.rateLimits),
            usage,
            reviewQueue
          )
        ),
        Layer.provideMerge(Snapshot.layer(live)),
        Layer.provideMerge(ConsoleAssets.layer(consoleDir)),
        Layer.provideMerge(
          Layer.succeed(ConsoleSessions, makeConsoleSessions(stores.consoleSecret, stores.endedSessions))
        ),
        Layer.provideMerge(Layer.succeed(HostedFlowSecret, stores.verificationSecret)),
        Layer.provideMerge(Layer.succeed(StoreHold, { heldFor: stores.heldFor })),
        Layer.provideMerge(options.requestLogger ?? RequestLogger.layer),
        Layer.provideMerge(Log.layerOf(log))
      )
      const nodeServer = NodeServer.layer({
        port,
        host,
        gracefulShutdownTimeout: `${server.shutdownTimeoutSeconds} seconds`,
        // What the first validations would build on their way (~0.15 s of CPU), built once /healthz has answered.
        afterFirstResponse: () => warmEngineContext(live.current().engine.context),
        timeouts: {
          idleMs: server.bodyTimeoutSeconds * 1000,
          headersMs: server.headersTimeoutSeconds * 1000,
          requestMs: server.requestTimeoutSeconds * 1000
        }
      }).pipe(
        Layer.provide(FastPath.layer),
        Layer.provide(
          OidcEndpoints.layer({ secret: stores.verificationSecret }).pipe(
            Layer.provide(
              OidcProviders.layer({ secret: stores.verificationSecret, publicUrl }).pipe(
                Layer.provide(Layer.mergeAll(stores.signingKeys, stores.oidc))
              )
            )
          )
        )
      )
      return Layer.mergeAll(HttpRouter.serve(HttpApp, { disableLogger: true, disableListenLog: true }), listening).pipe(
        Layer.provide(nodeServer),
        Layer.provide(services)
      )
    })
  )
