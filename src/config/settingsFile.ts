/**
 * `campusgate.yaml`: the deployment's settings read from a config directory
 * with the environment's overrides, the defaults an empty file gives, and
 * what follows from them (the data directory, the teams). Read alone by the
 * commands that need only the settings, and by `loadConfig` with the rest.
 */
import { existsSync, readFileSync } from "node:fs"
import { isAbsolute, join, resolve } from "node:path"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { applyEnvironment, type Environment } from "./environment.ts"
import { displayPath, SETTINGS_FILE } from "./layout.ts"
import type { SourceFile } from "./references.ts"
import { Settings } from "./Settings.ts"
import { decodeYaml } from "./yamlDecode.ts"

/** The team every deployment has, so a first run needs no `teams` section. */
export const DEFAULT_TEAM = "default"

/** The settings an empty campusgate.yaml gives. */
export const defaultSettings = (): Settings => {
  const decoded = decodeYaml(Settings, SETTINGS_FILE, "{}")
  if (!decoded.ok) throw new Error("the default settings do not decode")
  return decoded.value
}

/** The last settings file decoded: its name, text and what they decode to. */
let lastDecoded:
  | { readonly name: string; readonly text: string; readonly decoded: ReturnType<typeof decodeSettingsText> }
  | undefined

const decodeSettingsText = (name: string, text: string) =>
  decodeYaml(Settings, name, text, { empty: {}, partial: true })

/**
 * The file's text decoded, once for the same text: the daemon's start reads
 * campusgate.yaml five times (its data directory, log settings, store, and
 * with the configuration), and each decode costs 2-40 ms (measured, 18 in a
 * row). Decoded values are not changed by those who read them.
 */
const decodeSettings = (name: string, text: string): ReturnType<typeof decodeSettingsText> => {
  if (lastDecoded === undefined || lastDecoded.name !== name || lastDecoded.text !== text) {
    lastDecoded = { name, text, decoded: decodeSettingsText(name, text) }
  }
  return lastDecoded.decoded
}

/**
 * `campusgate.yaml` of a config directory (all defaults when there is none),
 * with the environment's overrides; problems are added to `problems`. For a
 * file that does not decode, what still decodes without its failing parts
 * stands in (`partialDecode.ts`), else the defaults, and `readable` is
 * false: its teams are not known.
 */
export const loadSettings = (
  configDir: string,
  env: Environment,
  problems: Array<ConfigurationProblem>
): { readonly settings: Settings; readonly file: SourceFile | undefined; readonly readable: boolean } => {
  const path = join(configDir, SETTINGS_FILE)
  const file: SourceFile | undefined = existsSync(path)
    ? { store: "config", path, text: readFileSync(path, "utf8") }
    : undefined
  const decoded = file === undefined ? undefined : decodeSettings(displayPath(path), file.text)
  if (decoded !== undefined && !decoded.ok) problems.push(...decoded.problems)
  const settings = decoded === undefined ? defaultSettings() : decoded.ok ? decoded.value : decoded.partial
  return {
    settings: applyEnvironment(settings ?? defaultSettings(), env, problems),
    file,
    readable: settings !== undefined
  }
}

/** The data directory: `explicit` (flag or `CAMPUSGATE_DATA`), else `dataDir` relative to the config directory, else `./data`. */
export const dataDirFor = (configDir: string, settings: Settings, explicit: string | undefined): string => {
  if (explicit !== undefined) return resolve(explicit)
  if (settings.dataDir === undefined) return resolve("data")
  return isAbsolute(settings.dataDir) ? settings.dataDir : resolve(configDir, settings.dataDir)
}

/** The teams resources and keys may name: the default team and those declared in campusgate.yaml. */
export const teamsOf = (settings: Settings): ReadonlySet<string> =>
  new Set([DEFAULT_TEAM, ...settings.teams.map((team) => team.id)])
