/** The handler of `GET /status`: the snapshot's reload status, the version and the uptime. */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { VERSION } from "../../version.ts"

export const StatusHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "status",
  Effect.fn(function* (handlers) {
    const snapshot = yield* Snapshot
    const startedAt = Date.now()
    return handlers.handle("get", () =>
      Effect.sync(() => {
        const config = snapshot.status()
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
          }
        }
      })
    )
  })
)
