/**
 * `campusgate serve`: runs the daemon on a config directory until SIGTERM
 * or SIGINT (then drains in-flight requests and exits 0). With
 * `--workers N` (or `auto`: one per core) it runs N daemons on the same
 * port (`server/workers.ts`), which needs the Redis store.
 */
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { isSharedKind, storeSettingsOf } from "../../deployment/stores.ts"
import { formatProblem } from "../../domain/errors.ts"
import { serverLayer } from "../../server/Server.ts"
import { FILE_STORE_REFUSAL, isWorker, runWorkers, workerCount } from "../../server/workers.ts"
import { configDirFlag, dataDirFlag } from "../options.ts"

const userError = (userMessage: string, cause: unknown = new Error(userMessage)) =>
  Effect.fail(new CliError.UserError({ cause, userMessage }))

export const serveCommand = Command.make(
  "serve",
  {
    config: configDirFlag,
    data: dataDirFlag,
    port: Flag.Int("port").pipe(
      Flag.withDescription("The port to listen on (default: server.port in campusgate.yaml, CAMPUSGATE_PORT, or 8080)"),
      Flag.optional
    ),
    host: Flag.String("host").pipe(Flag.withDescription("The address to listen on (default 0.0.0.0)"), Flag.optional),
    workers: Flag.String("workers").pipe(
      Flag.withDescription(
        "Daemon processes on the port: a number, or auto for one per core (more than 1 needs store.kind: redis)"
      ),
      Flag.withDefault("1")
    )
  },
  ({ config, data, port, host, workers }) =>
    Effect.gen(function* () {
      const count = workerCount(workers)
      if (count === undefined) return yield* userError(`--workers takes a number from 1 or auto, not "${workers}".`)
      if (count > 1 && !isWorker()) {
        if (!isSharedKind(storeSettingsOf({ configDir: config }).kind)) return yield* userError(FILE_STORE_REFUSAL)
        return yield* Effect.scoped(
          runWorkers(count, (msg, fields) =>
            console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", msg, ...fields }))
          )
        ).pipe(Effect.catch((error) => userError(`Nothing was started: ${error.message}.`, error)))
      }
      return yield* Layer.launch(
        serverLayer({
          configDir: config,
          dataDir: Option.getOrUndefined(data),
          port: Option.getOrUndefined(port),
          host: Option.getOrUndefined(host)
        })
      ).pipe(
        Effect.asVoid,
        Effect.catchTags({
          InvalidConfiguration: (error) =>
            userError(
              `The configuration is not valid; nothing was started.\n${error.problems.map(formatProblem).join("\n")}`,
              error
            ),
          ApiKeysError: (error) =>
            userError(
              `The API keys cannot be read or the first one written; nothing was started.\n${error.message}`,
              error
            ),
          StoreLost: (error) => userError(`Nothing was started.\n${error.message}`, error),
          RedisError: (error) =>
            userError(
              `The Redis server (store.url, CAMPUSGATE_REDIS_URL) cannot be reached; nothing was started.\n${(error.cause as Error)?.message || String(error.cause)}`,
              error
            )
        })
      )
    })
).pipe(Command.withDescription("Serve the HTTP API on a config directory, reloading it when its files change"))
