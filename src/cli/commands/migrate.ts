/**
 * `campusgate migrate --from files --to redis`: moves a data directory's
 * state into the Redis server campusgate.yaml (or CAMPUSGATE_REDIS_URL)
 * names, before the daemons start on it (`cli/migrateToRedis.ts`). Prints
 * what was moved as one JSON line.
 */
import { resolve } from "node:path"
import * as Console from "effect/Console"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { resolveDataDir } from "../../config/loadConfig.ts"
import { storeSettingsOf } from "../../deployment/stores.ts"
import { redactCredentials } from "../../observability/redact.ts"
import { redisStoreLayer } from "../../store/redis.ts"
import { migrateToRedis } from "../migrateToRedis.ts"
import { directoryFlags } from "../options.ts"

const userError = (userMessage: string, cause: unknown = new Error(userMessage)) =>
  Effect.fail(new CliError.UserError({ cause, userMessage }))

export const migrateCommand = Command.make(
  "migrate",
  {
    ...directoryFlags,
    from: Flag.String("from").pipe(Flag.withDescription("Where the state is now: files (the data directory)")),
    to: Flag.String("to").pipe(Flag.withDescription("Where it goes: redis (store.url or CAMPUSGATE_REDIS_URL)"))
  },
  ({ config, data, from, to }) =>
    Effect.gen(function* () {
      if (from !== "files" || to !== "redis") {
        return yield* userError(`Only --from files --to redis is supported, not --from ${from} --to ${to}.`)
      }
      const settings = storeSettingsOf({ configDir: config })
      if (settings.url === undefined) {
        return yield* userError("Name the Redis server: store.url in campusgate.yaml, or CAMPUSGATE_REDIS_URL.")
      }
      const dataDir = resolveDataDir({ configDir: config, dataDir: Option.getOrUndefined(data) })
      const moved = yield* migrateToRedis(resolve(config), dataDir).pipe(
        Effect.provide(Layer.fresh(redisStoreLayer({ url: settings.url, keyPrefix: settings.keyPrefix }))),
        Effect.mapError(
          (error) =>
            new CliError.UserError({
              cause: error,
              userMessage: `Nothing more was moved: ${(error as Error).message || String(error)}`
            })
        )
      )
      yield* Console.log(
        JSON.stringify({
          migrated: moved,
          from: dataDir,
          to: `${redactCredentials(settings.url)} (prefix ${settings.keyPrefix})`
        })
      )
    })
).pipe(
  Command.withDescription("Move a data directory's keys, resources, statistics, verifications and jobs into Redis")
)
