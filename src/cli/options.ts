/**
 * Flags every command takes: where the config directory and the data
 * directory are. Flag, else environment (`CAMPUSGATE_CONFIG`,
 * `CAMPUSGATE_DATA`), else `./config` and `./data`.
 */
import * as Config from "effect/Config"
import * as Flag from "effect/cli/Flag"

export const defaultConfigDir = "./config"

export const configDirFlag = Flag.String("config").pipe(
  Flag.withDescription(
    "The config directory (campusgate.yaml, target-groups/, offers/, api-keys.yaml); env CAMPUSGATE_CONFIG"
  ),
  Flag.withMetavar("DIR"),
  Flag.withFallbackConfig(Config.String("CAMPUSGATE_CONFIG")),
  Flag.withDefault(defaultConfigDir)
)

/** `undefined` when neither flag nor environment names it: campusgate.yaml's `dataDir`, else `./data`. */
export const dataDirFlag = Flag.String("data").pipe(
  Flag.withDescription("The data directory (API-created resources, statistics, jobs); env CAMPUSGATE_DATA"),
  Flag.withMetavar("DIR"),
  Flag.withFallbackConfig(Config.String("CAMPUSGATE_DATA")),
  Flag.optional
)

export const directoryFlags = { config: configDirFlag, data: dataDirFlag } as const
