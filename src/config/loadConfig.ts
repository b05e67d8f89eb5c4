/**
 * Reads a config directory (and the data directory's API-created
 * resources) into the domain model: settings with environment overrides,
 * target groups, offers, API keys and institution datasets. Every file is
 * decoded with its schema, then cross-references are checked: ids unique
 * across both directories, teams declared, an offer's target groups present
 * and visible to its team. All problems are collected (never just the
 * first), each with its file, line, column and field.
 *
 * Synchronous and cheap (a few small files): `check` and the hot-reload
 * watcher call it on every change.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { isAbsolute, join, resolve } from "node:path"
import { type ApiKeyRecord, ApiKeysFile } from "../domain/ApiKey.ts"
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { TemplateFile } from "../domain/MessageTemplate.ts"
import { Offer } from "../domain/Offer.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import { targetGroupVisible } from "../domain/visibility.ts"
import {
  DatasetError,
  type DatasetSpec,
  datasetFormatOf,
  parseDataset,
  UNKNOWN_DATASET_FORMAT
} from "../engine/institutions/userDatasets.ts"
import { applyEnvironment, type Environment, type Secrets, secretsFrom } from "./environment.ts"
import { displayPath, isResourceFile, OFFERS_DIR, SETTINGS_FILE, TARGET_GROUPS_DIR } from "./layout.ts"
import { loadMessageTemplates } from "./messageTemplates.ts"
import { Settings } from "./Settings.ts"
import { type DecodeCache, decodeYaml, positionOf, rawStringField, type YamlDecoded } from "./yamlDecode.ts"

/** The team every deployment has, so a first run needs no `teams` section. */
export const DEFAULT_TEAM = "default"

export interface ConfigLocation {
  readonly configDir: string
  /** Wins over `CAMPUSGATE_DATA` and `dataDir` in campusgate.yaml; the default is `./data`. */
  readonly dataDir?: string | undefined
  /** Default `process.env`. */
  readonly env?: Environment | undefined
}

/** A file a resource was read from. */
export interface SourceFile {
  readonly store: "config" | "data"
  /** Absolute path. */
  readonly path: string
  readonly text: string
}

export interface LoadedConfig {
  /** Undefined for resources given in memory (the library without a config directory). */
  readonly configDir: string | undefined
  readonly dataDir: string | undefined
  readonly settings: Settings
  readonly secrets: Secrets
  readonly teams: ReadonlySet<string>
  readonly targetGroups: ReadonlyArray<TargetGroup>
  readonly offers: ReadonlyArray<Offer>
  readonly apiKeys: ReadonlyArray<ApiKeyRecord>
  readonly datasets: ReadonlyArray<DatasetSpec>
  /** Overrides of the verification messages by locale (`templates/<locale>.yaml`). */
  readonly templates: ReadonlyMap<string, TemplateFile>
  /** The certificate authorities (PEM) `verification.mail.smtp.ca` names, read with the config. */
  readonly smtpCa: string | undefined
  /** Where each target group, offer and key was defined, by id. */
  readonly origins: {
    readonly targetGroups: ReadonlyMap<string, SourceFile>
    readonly offers: ReadonlyMap<string, SourceFile>
    readonly apiKeys: ReadonlyMap<string, SourceFile>
  }
}

/**
 * What the stores hold, as YAML documents and where they live: API-created
 * resources (`resources/ResourceStore.ts`) and API-key files
 * (`keys/ApiKeyStore.ts`, the config directory's own `api-keys.yaml` among
 * them), decoded here with the config directory's files.
 */
export interface DataDocuments {
  readonly targetGroups: ReadonlyArray<{ readonly location: string; readonly text: string }>
  readonly offers: ReadonlyArray<{ readonly location: string; readonly text: string }>
  readonly apiKeys: ReadonlyArray<{
    readonly store: "config" | "data"
    readonly location: string
    readonly text: string
  }>
}

const noDocuments: DataDocuments = { targetGroups: [], offers: [], apiKeys: [] }

export type ConfigLoad =
  | { readonly ok: true; readonly config: LoadedConfig }
  | { readonly ok: false; readonly problems: ReadonlyArray<ConfigurationProblem> }

const isDirectory = (path: string): boolean => existsSync(path) && statSync(path).isDirectory()

/** The resource files of one kind in one directory, in name order. */
const resourceFiles = (root: string, store: SourceFile["store"], directory: string): Array<SourceFile> => {
  const dir = join(root, directory)
  if (!isDirectory(dir)) return []
  return readdirSync(dir)
    .filter(isResourceFile)
    .sort()
    .map((name) => {
      const path = join(dir, name)
      return { store, path, text: readFileSync(path, "utf8") }
    })
}

const problemAt = (file: SourceFile, path: ReadonlyArray<PropertyKey>, message: string): ConfigurationProblem => ({
  file: displayPath(file.path),
  ...positionOf(file.text, path),
  path: path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join(""),
  message
})

interface Decoded<A> {
  readonly value: A
  readonly file: SourceFile
  /** Path prefix of the value within its file (`keys[2]` for an API key). */
  readonly at: ReadonlyArray<PropertyKey>
}

/**
 * Decodes each file with `schema`, collecting problems. The ids of files
 * that fail are noted in `broken`, so references to them are not reported
 * a second time as dangling.
 */
const decodeFiles = <A>(
  files: ReadonlyArray<SourceFile>,
  decode: (file: SourceFile) => YamlDecoded<A>,
  problems: Array<ConfigurationProblem>,
  broken: Set<string>
): Array<Decoded<A>> =>
  files.flatMap((file) => {
    const decoded = decode(file)
    if (!decoded.ok) {
      problems.push(...decoded.problems)
      const id = rawStringField(file.text, "id")
      if (id !== undefined) broken.add(id)
      return []
    }
    return [{ value: decoded.value, file, at: [] }]
  })

/** Reports every id defined twice (the later definition, pointing at the first). */
const uniqueIds = <A extends { readonly id: string }>(
  what: string,
  items: ReadonlyArray<Decoded<A>>,
  problems: Array<ConfigurationProblem>
): Map<string, Decoded<A>> => {
  const byId = new Map<string, Decoded<A>>()
  for (const item of items) {
    const first = byId.get(item.value.id)
    if (first === undefined) byId.set(item.value.id, item)
    else {
      problems.push(
        problemAt(
          item.file,
          [...item.at, "id"],
          `${what} "${item.value.id}" is already defined in ${displayPath(first.file.path)}`
        )
      )
    }
  }
  return byId
}

const readDatasets = (
  configDir: string,
  paths: ReadonlyArray<string>,
  settingsFile: SourceFile | undefined,
  problems: Array<ConfigurationProblem>
): Array<DatasetSpec> =>
  paths.flatMap((relativePath, i) => {
    const path = resolve(configDir, relativePath)
    const where = (message: string): ConfigurationProblem =>
      settingsFile === undefined
        ? { path: `datasets[${i}]`, message }
        : problemAt(settingsFile, ["datasets", i], message)
    const format = datasetFormatOf(path)
    if (format === undefined) {
      problems.push(where(`"${relativePath}": ${UNKNOWN_DATASET_FORMAT}`))
      return []
    }
    if (!existsSync(path)) {
      problems.push(where(`"${relativePath}": no such file (paths are relative to the config directory)`))
      return []
    }
    const spec: DatasetSpec = { name: displayPath(path), format, content: readFileSync(path, "utf8") }
    try {
      parseDataset(spec)
    } catch (error) {
      if (!(error instanceof DatasetError)) throw error
      for (const problem of error.problems) {
        const line = /^\d+$/.test(problem.location) ? Number(problem.location) : undefined
        problems.push({
          file: spec.name,
          ...(line === undefined ? {} : { line, column: 1 }),
          path: line === undefined ? `${problem.location}${problem.field ? `.${problem.field}` : ""}` : problem.field,
          message: problem.message
        })
      }
      return []
    }
    return [spec]
  })

/**
 * Loads and checks the config directory together with the API-created
 * resources `data` holds; never throws for bad content (only for I/O
 * failures other than absence).
 */
export const loadConfig = (
  location: ConfigLocation,
  data: DataDocuments = noDocuments,
  options: { readonly cache?: DecodeCache | undefined } = {}
): ConfigLoad => {
  const result = loadWith(location, data, options.cache)
  options.cache?.sweep()
  return result
}

const loadWith = (location: ConfigLocation, data: DataDocuments, cache: DecodeCache | undefined): ConfigLoad => {
  const decode: typeof decodeYaml = cache === undefined ? decodeYaml : (...args) => cache.decode(...args)
  const env = location.env ?? process.env
  const configDir = resolve(location.configDir)
  const problems: Array<ConfigurationProblem> = []
  if (!isDirectory(configDir)) {
    return {
      ok: false,
      problems: [{ file: displayPath(configDir), path: "", message: "the config directory does not exist" }]
    }
  }

  const { settings, file: settingsFile } = loadSettings(configDir, env, problems)
  const dataDir = dataDirFor(configDir, settings, location.dataDir ?? (env.CAMPUSGATE_DATA || undefined))
  const teams = teamsOf(settings)
  settings.teams.forEach((team, i) => {
    if (settingsFile !== undefined && settings.teams.findIndex((other) => other.id === team.id) !== i) {
      problems.push(problemAt(settingsFile, ["teams", i, "id"], `team "${team.id}" is declared twice`))
    }
  })

  const stored = (documents: DataDocuments[keyof DataDocuments]): Array<SourceFile> =>
    documents.map(({ location, text }) => ({ store: "data", path: location, text }))
  const yamlFiles = (directory: string) => [
    ...resourceFiles(configDir, "config", directory),
    ...stored(directory === TARGET_GROUPS_DIR ? data.targetGroups : data.offers)
  ]
  const brokenGroups = new Set<string>()
  const targetGroups = decodeFiles<TargetGroup>(
    yamlFiles(TARGET_GROUPS_DIR),
    (file) => decode(TargetGroup, displayPath(file.path), file.text),
    problems,
    brokenGroups
  )
  const offers = decodeFiles<Offer>(
    yamlFiles(OFFERS_DIR),
    (file) => decode(Offer, displayPath(file.path), file.text),
    problems,
    new Set()
  )
  const apiKeys = data.apiKeys.flatMap((document): Array<Decoded<ApiKeyRecord>> => {
    const file: SourceFile = { store: document.store, path: document.location, text: document.text }
    const decoded = decode(ApiKeysFile, displayPath(file.path), file.text, { empty: { keys: [] } })
    if (!decoded.ok) {
      problems.push(...decoded.problems)
      return []
    }
    return decoded.value.keys.map((value, i) => ({ value, file, at: ["keys", i] }))
  })

  const groupsById = uniqueIds("target group", targetGroups, problems)
  const offersById = uniqueIds("offer", offers, problems)
  const keysById = uniqueIds("API key", apiKeys, problems)

  const knownTeam = (team: string | undefined, item: Decoded<{ readonly id: string }>) => {
    if (team === undefined || teams.has(team)) return
    problems.push(
      problemAt(
        item.file,
        [...item.at, "team"],
        `unknown team "${team}": declare it under teams in ${SETTINGS_FILE} (known: ${[...teams].join(", ")})`
      )
    )
  }
  for (const item of targetGroups) knownTeam(item.value.team, item)
  for (const item of apiKeys) knownTeam(item.value.team, item)
  for (const item of offers) {
    knownTeam(item.value.team, item)
    item.value.targetGroups.forEach((groupId, i) => {
      const group = groupsById.get(groupId)
      const at = [...item.at, "targetGroups", i]
      if (group === undefined) {
        if (brokenGroups.has(groupId)) return
        const known = [...groupsById.keys()].join(", ") || "none"
        problems.push(problemAt(item.file, at, `no target group "${groupId}" (known: ${known})`))
      } else if (!targetGroupVisible(group.value, item.value.team)) {
        problems.push(
          problemAt(
            item.file,
            at,
            `target group "${groupId}" belongs to team "${group.value.team}", not to this offer's team "${item.value.team}"`
          )
        )
      }
    })
  }

  const datasets = readDatasets(configDir, settings.datasets, settingsFile, problems)
  const templates = loadMessageTemplates(configDir, problems)
  const smtpCa = readSmtpCa(configDir, settings, settingsFile, problems)
  if (problems.length > 0) return { ok: false, problems }
  const origins = <A>(byId: Map<string, Decoded<A>>) => new Map([...byId].map(([id, item]) => [id, item.file]))
  return {
    ok: true,
    config: {
      configDir,
      dataDir,
      settings,
      secrets: secretsFrom(env),
      teams,
      targetGroups: targetGroups.map((item) => item.value),
      offers: offers.map((item) => item.value),
      apiKeys: apiKeys.map((item) => item.value),
      datasets,
      templates,
      smtpCa,
      origins: { targetGroups: origins(groupsById), offers: origins(offersById), apiKeys: origins(keysById) }
    }
  }
}

/** The file `verification.mail.smtp.ca` names (relative to the config directory), or a problem when it cannot be read. */
const readSmtpCa = (
  configDir: string,
  settings: Settings,
  settingsFile: SourceFile | undefined,
  problems: Array<ConfigurationProblem>
): string | undefined => {
  const ca = settings.verification.mail.smtp?.ca
  if (ca === undefined) return undefined
  const path = resolve(configDir, ca)
  if (existsSync(path) && statSync(path).isFile()) return readFileSync(path, "utf8")
  const at = ["verification", "mail", "smtp", "ca"]
  const message = `"${ca}": no such file (paths are relative to the config directory)`
  problems.push(
    settingsFile === undefined ? { path: "verification.mail.smtp.ca", message } : problemAt(settingsFile, at, message)
  )
  return undefined
}

/** The settings an empty campusgate.yaml gives. */
export const defaultSettings = (): Settings => {
  const decoded = decodeYaml(Settings, SETTINGS_FILE, "{}")
  if (!decoded.ok) throw new Error("the default settings do not decode")
  return decoded.value
}

/**
 * `campusgate.yaml` of a config directory (all defaults when there is none),
 * with the environment's overrides; problems are added to `problems` and
 * the defaults stand in for a file that does not decode.
 */
export const loadSettings = (
  configDir: string,
  env: Environment,
  problems: Array<ConfigurationProblem>
): { readonly settings: Settings; readonly file: SourceFile | undefined } => {
  const path = join(configDir, SETTINGS_FILE)
  const file: SourceFile | undefined = existsSync(path)
    ? { store: "config", path, text: readFileSync(path, "utf8") }
    : undefined
  const decoded = file === undefined ? undefined : decodeYaml(Settings, displayPath(path), file.text, { empty: {} })
  if (decoded !== undefined && !decoded.ok) problems.push(...decoded.problems)
  const settings = decoded?.ok === true ? decoded.value : defaultSettings()
  return { settings: applyEnvironment(settings, env, problems), file }
}

/** The data directory a location resolves to (settings that do not decode count as defaults here). */
export const resolveDataDir = (location: ConfigLocation): string => {
  const env = location.env ?? process.env
  const configDir = resolve(location.configDir)
  const { settings } = loadSettings(configDir, env, [])
  return dataDirFor(configDir, settings, location.dataDir ?? (env.CAMPUSGATE_DATA || undefined))
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

/** The directories of a config read from disk; a config given in memory has none, and asking is a defect. */
export const directoriesOf = (config: LoadedConfig): { readonly configDir: string; readonly dataDir: string } => {
  if (config.configDir === undefined || config.dataDir === undefined) {
    throw new Error("this configuration was given in memory: it has no config or data directory")
  }
  return { configDir: config.configDir, dataDir: config.dataDir }
}
