/**
 * The daemon: loads and watches the configuration, makes sure there is an
 * API key to start with, and serves the HTTP application on Node until
 * SIGTERM/SIGINT, then stops accepting, lets in-flight requests finish
 * (bounded by `server.shutdownTimeoutSeconds`) and exits.
 */
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import { Resources } from "../app/Resources.ts"
import { directorySource, LiveSnapshot, Snapshot } from "../app/Snapshot.ts"
import { Validation, ValidationCounters } from "../app/Validation.ts"
import { ensureBootstrapKey } from "../config/apiKeyStore.ts"
import type { Environment } from "../config/environment.ts"
import { DEFAULT_TEAM, directoriesOf, resolveDataDir } from "../config/loadConfig.ts"
import { formatProblem } from "../domain/errors.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import { makeFileResourceStore, ResourceStore } from "../resources/ResourceStore.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import { HotPath } from "./hotPath.ts"
import { HttpApp } from "./http.ts"
import { jobsLayer } from "./jobService.ts"
import { Metrics } from "./metrics.ts"
import { RequestLogger } from "./RequestLogger.ts"
import { rateLimiterLayer } from "./rateLimit.ts"

export interface ServeOptions {
  readonly configDir: string
  readonly dataDir?: string | undefined
  /** Overrides campusgate.yaml and CAMPUSGATE_PORT (0 picks a free port). */
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly env?: Environment | undefined
  /** Where start-up messages go (default: one JSON line each on standard output). */
  readonly announce?: ((message: string, fields: Record<string, unknown>) => void) | undefined
  readonly requestLogger?: Layer.Layer<RequestLogger> | undefined
  /** Where rate-limit counters live (default: this process's memory; Redis to share them between replicas). */
  readonly rateLimiterStore?: Layer.Layer<RateLimiter.RateLimiterStore> | undefined
}

const jsonLine = (message: string, fields: Record<string, unknown>): void => {
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: "info", msg: message, ...fields })}\n`
  )
}

/** The server as a layer: building it loads the config (failing with every problem) and starts listening. */
export const serverLayer = (options: ServeOptions) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const announce = options.announce ?? jsonLine
      const location = { configDir: options.configDir, dataDir: options.dataDir, env: options.env }
      const resourceStore = makeFileResourceStore(resolveDataDir(location))
      const live = yield* LiveSnapshot.make(directorySource(location, resourceStore), {
        watch: true,
        onReload: (outcome) =>
          outcome.ok
            ? announce("config reloaded", { generation: outcome.generation })
            : announce("config change rejected; the last good config keeps serving", {
                problems: outcome.problems.map(formatProblem)
              })
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => live.close()))
      const { config } = live.current()
      const { configDir, dataDir } = directoriesOf(config)
      const bootstrap = ensureBootstrapKey({
        configDir,
        dataDir,
        team: config.settings.teams[0]?.id ?? (DEFAULT_TEAM as TeamId)
      })
      if (bootstrap.created) {
        yield* live.reload()
        announce("created the first API key; it is shown only this once", {
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
      const listening = Layer.effectDiscard(
        HttpServer.addressFormattedWith((url) =>
          Effect.sync(() => announce("listening", { url, docs: `${url}/docs`, openapi: `${url}/openapi.json` }))
        )
      )
      // One instance of each, shared by the Effect HTTP app and the node-level hot path.
      const { statistics } = config.settings
      const usage = statistics.enabled
        ? UsageStatistics.layerFile({
            dataDir,
            flushIntervalMs: statistics.flushIntervalMs,
            secret: config.secrets.statsSecret
          })
        : UsageStatistics.layerOff
      const validation = Validation.layer.pipe(Layer.provide(Layer.effect(ValidationCounters, Effect.service(Metrics))))
      const services = jobsLayer.pipe(
        Layer.provideMerge(Resources.layer),
        Layer.provideMerge(validation),
        Layer.provideMerge(Layer.succeed(ResourceStore, resourceStore)),
        Layer.provideMerge(Layer.mergeAll(Metrics.layer, rateLimiterLayer(options.rateLimiterStore), usage)),
        Layer.provideMerge(Snapshot.layer(live)),
        Layer.provideMerge(options.requestLogger ?? RequestLogger.layerStdout)
      )
      const nodeServer = Layer.unwrap(
        Effect.map(Effect.service(HotPath), (hotPath) =>
          NodeHttpServer.layer(() => hotPath.intercept(createServer()), {
            port,
            host,
            gracefulShutdownTimeout: `${server.shutdownTimeoutSeconds} seconds`
          })
        )
      ).pipe(Layer.provide(HotPath.layer))
      return Layer.mergeAll(HttpRouter.serve(HttpApp, { disableLogger: true, disableListenLog: true }), listening).pipe(
        Layer.provide(nodeServer),
        Layer.provide(services)
      )
    })
  )
