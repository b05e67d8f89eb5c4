/**
 * `campusgate migrate --from files --to redis|postgres`: moves a data
 * directory's state into the shared store campusgate.yaml (or
 * CAMPUSGATE_REDIS_URL, CAMPUSGATE_DATABASE_URL) names, before the daemons
 * start on it (`cli/migrateStore.ts`); PostgreSQL's schema is made first.
 * Prints what was moved as one JSON line, the store's URL without its
 * password.
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
import { postgresMigrations, storeSettingsOf, tlsMaterialOf } from "../../deployment/stores.ts"
import { redactCredentials } from "../../observability/redact.ts"
import { postgresStoreLayer } from "../../store/postgres.ts"
import { redisStoreLayer } from "../../store/redis.ts"
import { migrateInto, postgresTarget, redisTarget } from "../migrateStore.ts"
import { directoryFlags } from "../options.ts"

const userError = (userMessage: string, cause: unknown = new Error(userMessage)) =>
  Effect.fail(new CliError.UserError({ cause, userMessage }))

const failedPart = (error: unknown) =>
  new CliError.UserError({
    cause: error,
    userMessage: `Nothing more was moved: ${redactCredentials((error as Error).message || String(error))}`
  })

export const migrateCommand = Command.make(
  "migrate",
  {
    ...directoryFlags,
    from: Flag.String("from").pipe(Flag.withDescription("Where the state is now: files (the data directory)")),
    to: Flag.String("to").pipe(
      Flag.withDescription(
        "Where it goes: redis (store.url or CAMPUSGATE_REDIS_URL) or postgres (store.url or CAMPUSGATE_DATABASE_URL)"
      )
    )
  },
  ({ config, data, from, to }) =>
    Effect.gen(function* () {
      if (from !== "files" || (to !== "redis" && to !== "postgres")) {
        return yield* userError(
          `Only --from files --to redis and --from files --to postgres are supported, not --from ${from} --to ${to}.`
        )
      }
      const settings = storeSettingsOf({ configDir: config })
      if (settings.kind !== to || settings.url === undefined) {
        return yield* userError(
          to === "redis"
            ? "Name the Redis server: store.kind: redis and store.url in campusgate.yaml, or CAMPUSGATE_REDIS_URL."
            : "Name the database: store.kind: postgres and store.url in campusgate.yaml, or CAMPUSGATE_DATABASE_URL."
        )
      }
      const dataDir = resolveDataDir({ configDir: config, dataDir: Option.getOrUndefined(data) })
      const configDir = resolve(config)
      const tls = yield* Effect.mapError(tlsMaterialOf(settings.tls, configDir), failedPart)
      const moved =
        to === "redis"
          ? yield* migrateInto(redisTarget, configDir, dataDir).pipe(
              Effect.provide(Layer.fresh(redisStoreLayer({ url: settings.url, keyPrefix: settings.keyPrefix, tls }))),
              Effect.mapError(failedPart)
            )
          : yield* migrateInto(postgresTarget, configDir, dataDir).pipe(
              Effect.provide(
                Layer.fresh(postgresStoreLayer({ url: settings.url, migrations: postgresMigrations, tls }))
              ),
              Effect.mapError(failedPart)
            )
      yield* Console.log(
        JSON.stringify({
          migrated: moved,
          from: dataDir,
          to:
            to === "redis"
              ? `${redactCredentials(settings.url)} (prefix ${settings.keyPrefix})`
              : redactCredentials(settings.url)
        })
      )
    })
).pipe(
  Command.withDescription(
    "Move a data directory's keys, resources, statistics, verifications and jobs into Redis or PostgreSQL"
  )
)
