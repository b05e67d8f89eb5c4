/**
 * The config and data directories of a command, resolved as `loadConfig`
 * resolves them: campusgate.yaml's settings (defaults when there is none;
 * problems stop the command), and the data directory from the flag,
 * `CAMPUSGATE_DATA`, `dataDir` in campusgate.yaml, else `./data`.
 */
import { resolve } from "node:path"
import * as Option from "effect/Option"
import type { Settings } from "../config/Settings.ts"
import { dataDirFor, loadSettings } from "../config/settingsFile.ts"
import { type ConfigurationProblem, formatProblem } from "../domain/errors.ts"

/** campusgate.yaml's settings as the loader reads them; throws with every problem. */
export const readSettings = (configDir: string): Settings => {
  const problems: Array<ConfigurationProblem> = []
  const { settings } = loadSettings(resolve(configDir), process.env, problems)
  if (problems.length > 0) {
    throw new Error(`Invalid settings:\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`)
  }
  return settings
}

/** The data directory a command works on. */
export const dataDirectory = (configDir: string, dataFlag: Option.Option<string>): string =>
  dataDirFor(resolve(configDir), readSettings(configDir), Option.getOrUndefined(dataFlag))
