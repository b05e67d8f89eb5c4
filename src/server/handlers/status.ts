/**
 * The handler of `GET /status`: the snapshot's reload status (a rejected
 * change's problems that concern the caller's team, files named relative to
 * the config directory), the version, the uptime, the rate limits in force
 * and the caller's team's keys about to expire.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { apiPath } from "../../config/layout.ts"
import type { Settings } from "../../config/Settings.ts"
import { keysExpiringSoon } from "../../domain/ApiKey.ts"
import { problemVisible } from "../../domain/visibility.ts"
import { VERSION } from "../../version.ts"

/** The budgets alone, bucket by bucket (not `whenStoreDown`, which is no budget). */
const budgetsOf = ({ whenStoreDown: _, ...budgets }: Settings["rateLimits"]) => budgets

export const StatusHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "status",
  Effect.fn(function* (handlers) {
    const snapshot = yield* Snapshot
    const startedAt = Date.now()
    return handlers.handle("get", () =>
      Effect.map(Effect.service(Caller), (caller) => {
        const config = snapshot.status()
        const { settings, apiKeys, configDir, dataDir } = snapshot.current().config
        // The caller's team's problems and those of every team, named relative to the config directory.
        const problems = config.problems
          .filter((problem) => problemVisible(problem, caller.team))
          .map(({ file, ...problem }) =>
            file === undefined || configDir === undefined || dataDir === undefined
              ? problem
              : { ...problem, file: apiPath(file, { configDir, dataDir }) }
          )
        const now = Date.now()
        return {
          status: "ready" as const,
          version: VERSION,
          startedAt: new Date(startedAt).toISOString(),
          uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
          config: {
            generation: config.generation,
            loadedAt: config.loadedAt,
            stale: config.stale,
            problems,
            lastAttemptAt: config.lastAttemptAt,
            reloads: config.reloads
          },
          rateLimits: budgetsOf(settings.rateLimits),
          keys: keysExpiringSoon(apiKeys, caller.team, now).map(({ id, name, expiresAt }) => ({
            id,
            ...(name === undefined ? {} : { name }),
            expiresAt
          }))
        }
      })
    )
  })
)
