/**
 * `campusgate serve`: runs the daemon on a config directory until SIGTERM
 * or SIGINT (then drains in-flight requests and exits 0).
 */
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { formatProblem } from "../../domain/errors.ts"
import { serverLayer } from "../../server/Server.ts"
import { configDirFlag, dataDirFlag } from "../options.ts"

export const serveCommand = Command.make(
  "serve",
  {
    config: configDirFlag,
    data: dataDirFlag,
    port: Flag.Int("port").pipe(
      Flag.withDescription("The port to listen on (default: server.port in campusgate.yaml, CAMPUSGATE_PORT, or 8080)"),
      Flag.optional
    ),
    host: Flag.String("host").pipe(Flag.withDescription("The address to listen on (default 0.0.0.0)"), Flag.optional)
  },
  ({ config, data, port, host }) =>
    Layer.launch(
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
          Effect.fail(
            new CliError.UserError({
              cause: error,
              userMessage: `The configuration is not valid; nothing was started.\n${error.problems.map(formatProblem).join("\n")}`
            })
          ),
        ApiKeysError: (error) =>
          Effect.fail(
            new CliError.UserError({
              cause: error,
              userMessage: `The API keys cannot be read or the first one written; nothing was started.\n${error.message}`
            })
          )
      })
    )
).pipe(Command.withDescription("Serve the HTTP API on a config directory, reloading it when its files change"))
