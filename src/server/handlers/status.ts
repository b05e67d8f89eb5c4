/**
 * The handler of `GET /status`: the snapshot's reload status, the version,
 * the uptime, the rate limits in force and the caller's team's keys about
 * to expire.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { keysExpiringSoon } from "../../domain/ApiKey.ts"
import { VERSION } from "../../version.ts"

export const StatusHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "status",
  Effect.fn(function* (handlers) {
    const snapshot = yield* Snapshot
    const startedAt = Date.now()
    return handlers.handle("get", () =>
      Effect.map(Effect.service(Caller), (caller) => {
        const config = snapshot.status()
        const { settings, apiKeys } = snapshot.current().config
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
            problems: config.problems,
            lastAttemptAt: config.lastAttemptAt,
            reloads: config.reloads
          },
          rateLimits: settings.rateLimits,
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
