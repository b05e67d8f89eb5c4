/**
 * Reads a config directory (and the data directory's API-created
 * resources) into the domain model: settings with environment overrides,
 * target groups, offers, API keys and institution datasets. Every file is
 * decoded with its schema, then cross-references are checked: ids unique
 * across both directories, teams declared, an offer's target groups present
 * and visible to its team. All problems are collected (never just the
 * first), each with its file, line, column and field, grouped by file: a
 * campusgate.yaml with a mistake still declares its teams, and a file that
 * fails to decode still has its references checked (`references.ts`).
 *
 * Synchronous and cheap (a few small files): `check` and the hot-reload
 * watcher call it on every change.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { type ApiKeyRecord, ApiKeysFile } from "../domain/ApiKey.ts"
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { ReviewedInstitution } from "../domain/InstitutionReview.ts"
import type { TemplateFile } from "../domain/MessageTemplate.ts"
import { Offer } from "../domain/Offer.ts"
import { OidcClient } from "../domain/OidcClient.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import {
  DatasetError,
  type DatasetSpec,
  datasetFormatOf,
  parseDataset,
  UNKNOWN_DATASET_FORMAT
} from "../engine/institutions/userDatasets.ts"
import { didYouMean } from "./didYouMean.ts"
import { type Environment, type Secrets, secretsFrom } from "./environment.ts"
import { CLIENTS_DIR, displayPath, isResourceFile, OFFERS_DIR, TARGET_GROUPS_DIR } from "./layout.ts"
import { loadMessageTemplates } from "./messageTemplates.ts"
import { type PageLogo, readPageLogos } from "./pageLogos.ts"
import { withOwners } from "./problemOwners.ts"
import {
  checkTargetGroups,
  checkTeams,
  problemAt,
  type References,
  rawReferences,
  type SourceFile
} from "./references.ts"
import { readReviewed } from "./reviewedDatasets.ts"
import type { Settings } from "./Settings.ts"
import { dataDirFor, loadSettings, teamsOf } from "./settingsFile.ts"
import { type DecodeCache, decodeYaml, rawDocument, rawStringField, type YamlDecoded } from "./yamlDecode.ts"

export type { SourceFile } from "./references.ts"

export interface ConfigLocation {
  readonly configDir: string
  /** Wins over `CAMPUSGATE_DATA` and `dataDir` in campusgate.yaml; the default is `./data`. */
  readonly dataDir?: string | undefined
  /** Default `process.env`. */
  readonly env?: Environment | undefined
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
  /**
   * Institutions approved from the review queue, each for its team's targets
   * (`datasets/reviewed.yaml` in the config directory, `reviewed.yaml` in the
   * data directory, and the Redis store's approvals). Absent: none.
   */
  readonly reviewed?: ReadonlyArray<ReviewedInstitution> | undefined
  /** Overrides of the verification messages by locale (`templates/<locale>.yaml`). */
  readonly templates: ReadonlyMap<string, TemplateFile>
  /** The hosted page's logos (`verification.page.logo`) by path as written, read with the config; absent: none. */
  readonly pageLogos?: ReadonlyMap<string, PageLogo> | undefined
  /** The certificate authorities (PEM) `verification.mail.smtp.ca` names, read with the config. */
  readonly smtpCa: string | undefined
  /** The OpenID Connect provider's clients (`clients/*.yaml`); absent: none. */
  readonly clients?: ReadonlyArray<OidcClient> | undefined
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
  /** The store's approvals as reviewed datasets (Redis); the files of both directories are read besides. */
  readonly reviewed?: ReadonlyArray<{ readonly location: string; readonly text: string }> | undefined
  /** `team/domain` of the store's rejections: an approval a file still holds no longer counts. */
  readonly reviewedRejected?: ReadonlyArray<string> | undefined
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

interface Decoded<A> {
  readonly value: A
  readonly file: SourceFile
  /** Path prefix of the value within its file (`keys[2]` for an API key). */
  readonly at: ReadonlyArray<PropertyKey>
}

/** The files of one kind, decoded, and what those that failed still refer to. */
interface DecodedFiles<A> {
  readonly decoded: Array<Decoded<A>>
  /** The ids of the files that failed, so references to them are not reported a second time as dangling. */
  readonly brokenIds: Set<string>
  readonly brokenReferences: Array<References>
}

/** Decodes each file with `schema`, collecting problems. */
const decodeFiles = <A>(
  files: ReadonlyArray<SourceFile>,
  decode: (file: SourceFile) => YamlDecoded<A>,
  problems: Array<ConfigurationProblem>
): DecodedFiles<A> => {
  const result: DecodedFiles<A> = { decoded: [], brokenIds: new Set(), brokenReferences: [] }
  for (const file of files) {
    const decoded = decode(file)
    if (decoded.ok) {
      result.decoded.push({ value: decoded.value, file, at: [] })
      continue
    }
    problems.push(...decoded.problems)
    const id = rawStringField(file.text, "id")
    if (id !== undefined) result.brokenIds.add(id)
    result.brokenReferences.push(rawReferences(file, [], rawDocument(file.text), decoded.problems))
  }
  return result
}

/** What a decoded target group, offer or API key refers to. */
const referencesOf = (item: Decoded<{ readonly team?: string; readonly targetGroups?: ReadonlyArray<string> }>) => ({
  file: item.file,
  at: item.at,
  team: item.value.team,
  targetGroups: item.value.targetGroups ?? []
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

  const { settings, file: settingsFile, readable } = loadSettings(configDir, env, problems)
  const dataDir = dataDirFor(configDir, settings, location.dataDir ?? (env.CAMPUSGATE_DATA || undefined))
  const teams = teamsOf(settings)
  settings.teams.forEach((team, i) => {
    if (settingsFile !== undefined && settings.teams.findIndex((other) => other.id === team.id) !== i) {
      problems.push(problemAt(settingsFile, ["teams", i, "id"], `team "${team.id}" is declared twice`))
    }
  })

  const stored = (documents: DataDocuments["offers"]): Array<SourceFile> =>
    documents.map(({ location, text }) => ({ store: "data", path: location, text }))
  const yamlFiles = (directory: string) => [
    ...resourceFiles(configDir, "config", directory),
    ...stored(directory === TARGET_GROUPS_DIR ? data.targetGroups : data.offers)
  ]
  const targetGroupFiles = yamlFiles(TARGET_GROUPS_DIR)
  const offerFiles = yamlFiles(OFFERS_DIR)
  const keyFiles: Array<SourceFile> = data.apiKeys.map((document) => ({
    store: document.store,
    path: document.location,
    text: document.text
  }))
  const targetGroups = decodeFiles<TargetGroup>(
    targetGroupFiles,
    (file) => decode(TargetGroup, displayPath(file.path), file.text),
    problems
  )
  const offers = decodeFiles<Offer>(offerFiles, (file) => decode(Offer, displayPath(file.path), file.text), problems)
  const apiKeys: Array<Decoded<ApiKeyRecord>> = []
  const brokenKeys: Array<References> = []
  for (const file of keyFiles) {
    const decoded = decode(ApiKeysFile, displayPath(file.path), file.text, { empty: { keys: [] } })
    if (decoded.ok) {
      apiKeys.push(...decoded.value.keys.map((value, i) => ({ value, file, at: ["keys", i] })))
      continue
    }
    problems.push(...decoded.problems)
    const keys = (rawDocument(file.text) as { keys?: unknown } | null)?.keys
    if (Array.isArray(keys))
      brokenKeys.push(...keys.map((key, i) => rawReferences(file, ["keys", i], key, decoded.problems)))
  }

  const groupsById = uniqueIds("target group", targetGroups.decoded, problems)
  const offersById = uniqueIds("offer", offers.decoded, problems)
  const keysById = uniqueIds("API key", apiKeys, problems)
  const clientFiles = resourceFiles(configDir, "config", CLIENTS_DIR)
  const clients = decodeFiles<OidcClient>(
    clientFiles,
    (file) => decode(OidcClient, displayPath(file.path), file.text),
    problems
  )
  uniqueIds("client", clients.decoded, problems)
  checkClientOffers(clients.decoded, offersById, offers.brokenIds, problems)

  const references = {
    // Teams cannot be checked against a campusgate.yaml that cannot be read: every file would be reported.
    teams: readable ? teams : undefined,
    targetGroups: groupsById,
    brokenTargetGroups: targetGroups.brokenIds
  }
  const offerReferences = [...offers.decoded.map(referencesOf), ...offers.brokenReferences]
  checkTeams(
    references,
    [
      ...targetGroups.decoded.map(referencesOf),
      ...targetGroups.brokenReferences,
      ...apiKeys.map(referencesOf),
      ...brokenKeys,
      ...offerReferences
    ],
    problems
  )
  checkTargetGroups(references, offerReferences, problems)

  const datasets = readDatasets(configDir, settings.datasets, settingsFile, problems)
  const reviewed = readReviewed(configDir, dataDir, data, teams, readable, problems)
  const templates = loadMessageTemplates(configDir, problems)
  const smtpCa = readSmtpCa(configDir, settings, settingsFile, problems)
  const pageLogos = readPageLogos(configDir, settings, settingsFile, offers.decoded, problems)
  if (problems.length > 0)
    return { ok: false, problems: byFile(withOwners(problems, [...targetGroupFiles, ...offerFiles], keyFiles)) }
  const origins = <A>(byId: Map<string, Decoded<A>>) => new Map([...byId].map(([id, item]) => [id, item.file]))
  return {
    ok: true,
    config: {
      configDir,
      dataDir,
      settings,
      secrets: secretsFrom(env),
      teams,
      targetGroups: targetGroups.decoded.map((item) => item.value),
      offers: offers.decoded.map((item) => item.value),
      apiKeys: apiKeys.map((item) => item.value),
      datasets,
      reviewed,
      templates,
      smtpCa,
      pageLogos,
      clients: clients.decoded.map((item) => item.value),
      origins: { targetGroups: origins(groupsById), offers: origins(offersById), apiKeys: origins(keysById) }
    }
  }
}

/** Every offer a client allows must exist (one that failed to decode is reported once, in its own file). */
const checkClientOffers = (
  clients: ReadonlyArray<Decoded<OidcClient>>,
  offers: ReadonlyMap<string, unknown>,
  brokenOffers: ReadonlySet<string>,
  problems: Array<ConfigurationProblem>
): void => {
  for (const client of clients)
    client.value.allowedOffers.forEach((offerId, i) => {
      if (offers.has(offerId) || brokenOffers.has(offerId)) return
      const known = [...offers.keys()]
      const hint = didYouMean(offerId, known)
      problems.push(
        problemAt(
          client.file,
          ["allowedOffers", i],
          `no offer "${offerId}"${hint || ` (known: ${known.join(", ") || "none"})`}`
        )
      )
    })
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

/**
 * Problems grouped by file, in the order the files were read, and by line
 * within a file: a file's decoding and reference problems found in
 * separate passes read as one list.
 */
const byFile = (problems: ReadonlyArray<ConfigurationProblem>): Array<ConfigurationProblem> => {
  const files = [...new Set(problems.map((problem) => problem.file))]
  const rank = (problem: ConfigurationProblem) => files.indexOf(problem.file)
  return problems
    .map((problem, i) => ({ problem, i }))
    .sort(
      (a, b) =>
        rank(a.problem) - rank(b.problem) ||
        (a.problem.line ?? 0) - (b.problem.line ?? 0) ||
        (a.problem.column ?? 0) - (b.problem.column ?? 0) ||
        a.i - b.i
    )
    .map(({ problem }) => problem)
}

/** The data directory a location resolves to (settings that do not decode count as defaults here). */
export const resolveDataDir = (location: ConfigLocation): string => {
  const env = location.env ?? process.env
  const configDir = resolve(location.configDir)
  const { settings } = loadSettings(configDir, env, [])
  return dataDirFor(configDir, settings, location.dataDir ?? (env.CAMPUSGATE_DATA || undefined))
}

/** The directories of a config read from disk; a config given in memory has none, and asking is a defect. */
export const directoriesOf = (config: LoadedConfig): { readonly configDir: string; readonly dataDir: string } => {
  if (config.configDir === undefined || config.dataDir === undefined) {
    throw new Error("this configuration was given in memory: it has no config or data directory")
  }
  return { configDir: config.configDir, dataDir: config.dataDir }
}
