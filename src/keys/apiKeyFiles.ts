/**
 * The file adapter of the API-key store (`ApiKeyStore.ts`): `api-keys.yaml`
 * in the config directory and in the data directory. Reading both, adding
 * a record (to the config directory when it is writable, else to the data
 * directory) and revoking one; every read-modify-write holds the file's
 * lock (`store/fileLock.ts`), so concurrent writers lose nothing, and an
 * invalid file is never overwritten. Files hold hashes only.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import * as Schema from "effect/Schema"
import { stringify } from "yaml"
import { API_KEYS_FILE, displayPath } from "../config/layout.ts"
import { decodeYaml, type YamlDecoded } from "../config/yamlDecode.ts"
import { type ApiKeyId, type ApiKeyRecord, ApiKeysFile } from "../domain/ApiKey.ts"
import { ConfigurationProblem, formatProblem } from "../domain/errors.ts"
import { writeFileAtomic } from "../store/atomicWrite.ts"
import { withFileLock } from "../store/fileLock.ts"

export class InvalidApiKeysFile extends Schema.TaggedError<InvalidApiKeysFile>()("InvalidApiKeysFile", {
  problems: Schema.Array(ConfigurationProblem)
}) {
  override get message(): string {
    return `Invalid API keys file:\n${this.problems.map((problem) => `  ${formatProblem(problem)}`).join("\n")}`
  }
}

export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `There is no API key "${this.id}".`
  }
}

export class ApiKeyAlreadyRevoked extends Schema.TaggedError<ApiKeyAlreadyRevoked>()("ApiKeyAlreadyRevoked", {
  id: Schema.String,
  revokedAt: Schema.String
}) {
  override get message(): string {
    return `The API key "${this.id}" was already revoked at ${this.revokedAt}.`
  }
}

export class ApiKeysFileNotWritable extends Schema.TaggedError<ApiKeysFileNotWritable>()("ApiKeysFileNotWritable", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot write ${this.file}: ${this.reason}`
  }
}

export type KeyLocation = "config" | "data"

export interface KeyDirectories {
  readonly configDir: string
  readonly dataDir: string
}

interface KeysFile {
  readonly location: KeyLocation
  readonly file: string
}

/** The key files to read, config first; one file when both directories are the same. */
const keysFiles = ({ configDir, dataDir }: KeyDirectories): ReadonlyArray<KeysFile> => {
  const config = resolve(configDir, API_KEYS_FILE)
  const data = resolve(dataDir, API_KEYS_FILE)
  return config === data
    ? [{ location: "config", file: config }]
    : [
        { location: "config", file: config },
        { location: "data", file: data }
      ]
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

/** The records in one `api-keys.yaml`, or problems that point into it. A missing file holds no keys. */
export const loadApiKeysFile = (file: string): YamlDecoded<ReadonlyArray<ApiKeyRecord>> => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { ok: true, value: [] }
    throw error
  }
  const shown = displayPath(file)
  const decoded = decodeYaml(ApiKeysFile, shown, text, { empty: { keys: [] } })
  if (!decoded.ok) return { ok: false, problems: decoded.problems }
  const seen = new Set<string>()
  const problems: Array<ConfigurationProblem> = []
  decoded.value.keys.forEach((record, i) => {
    if (seen.has(record.id))
      problems.push({ file: shown, path: `keys[${i}].id`, message: `duplicate key id "${record.id}"` })
    seen.add(record.id)
  })
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: decoded.value.keys }
}

const readKeys = (file: string): ReadonlyArray<ApiKeyRecord> => {
  const loaded = loadApiKeysFile(file)
  if (!loaded.ok) throw new InvalidApiKeysFile({ problems: loaded.problems })
  return loaded.value
}

const HEADER = [
  "# Campusgate API keys. Keys are stored as hashes only (SHA-256); a key is shown",
  "# once, when it is created, and cannot be recovered from this file.",
  "# This file is managed by `campusgate keys` (create, list, revoke)."
].join("\n")

/** The comment lines a file starts with (e.g. a `yaml-language-server` schema line), kept when it is rewritten. */
const leadingComments = (file: string): string | undefined => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  const lines: Array<string> = []
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("#")) break
    lines.push(line)
  }
  return lines.length > 0 ? lines.join("\n") : undefined
}

/** The text of an `api-keys.yaml` holding `records`, under `header` (comment lines; default: a note that only hashes are stored). */
export const serializeApiKeys = (records: ReadonlyArray<ApiKeyRecord>, header: string = HEADER): string =>
  `${header}\n${stringify({ keys: records }, { lineWidth: 0 })}`

const writeKeys = (file: string, records: ReadonlyArray<ApiKeyRecord>): void =>
  writeFileAtomic(file, serializeApiKeys(records, leadingComments(file) ?? HEADER))

export interface ListedApiKey {
  readonly record: ApiKeyRecord
  readonly location: KeyLocation
  readonly file: string
}

/** Every stored key record, config directory first, with the file that holds it. */
export const listApiKeys = (directories: KeyDirectories): ReadonlyArray<ListedApiKey> => {
  const problems: Array<ConfigurationProblem> = []
  const listed: Array<ListedApiKey> = []
  for (const { location, file } of keysFiles(directories)) {
    const loaded = loadApiKeysFile(file)
    if (loaded.ok) for (const record of loaded.value) listed.push({ record, location, file })
    else problems.push(...loaded.problems)
  }
  if (problems.length > 0) throw new InvalidApiKeysFile({ problems })
  return listed
}

/** Whether the process may create files in `directory` (false when it does not exist). */
export const isDirectoryWritable = (directory: string): boolean => {
  try {
    accessSync(directory, constants.W_OK)
    return true
  } catch {
    return false
  }
}

const READ_ONLY_CODES = new Set(["EACCES", "EROFS", "EPERM"])

/**
 * Appends `record` to `file`, holding the file's lock from reading to
 * writing, so records another writer adds meanwhile are never lost (an
 * invalid file is never overwritten).
 */
const appendRecord = (file: string, record: ApiKeyRecord): void => {
  mkdirSync(dirname(file), { recursive: true })
  withFileLock(file, () => writeKeys(file, [...readKeys(file), record]))
}

/**
 * Stores a new key's record: in the config directory's `api-keys.yaml` when
 * `preferConfig` and that directory is writable (teams commit the hash in
 * git), else, or when writing there is refused, in the data directory's.
 */
export const addApiKeyRecord = (
  directories: KeyDirectories,
  record: ApiKeyRecord,
  preferConfig: boolean,
  isWritable: (directory: string) => boolean = isDirectoryWritable
): { readonly location: KeyLocation; readonly file: string } => {
  const [config, data] = keysFiles(directories)
  let target: KeysFile = config!
  if (data !== undefined && (!preferConfig || !isWritable(resolve(directories.configDir)))) target = data
  try {
    appendRecord(target.file, record)
  } catch (error) {
    if (target !== config || data === undefined || !READ_ONLY_CODES.has(errorCode(error) ?? "")) throw error
    target = data
    appendRecord(target.file, record)
  }
  return { location: target.location, file: target.file }
}

/** The key files as they are (config directory first), for the config loader; absent files are left out. */
export const readKeyDocuments = (
  directories: KeyDirectories
): ReadonlyArray<{ readonly store: KeyLocation; readonly location: string; readonly text: string }> =>
  keysFiles(directories).flatMap(({ location, file }) => {
    try {
      return [{ store: location, location: file, text: readFileSync(file, "utf8") }]
    } catch (error) {
      if (errorCode(error) === "ENOENT") return []
      throw error
    }
  })

export interface RevokedApiKey {
  readonly id: ApiKeyId
  readonly revokedAt: string
  /** The files that were changed. */
  readonly files: ReadonlyArray<string>
}

/** Marks the key `id` revoked in whichever file holds it, holding both files' locks (config first). */
export const revokeApiKeyRecord = (directories: KeyDirectories, id: string, revokedAt: string): RevokedApiKey =>
  keysFiles(directories).reduceRight<() => RevokedApiKey>(
    (inner, { file }) =>
      () =>
        existsSync(dirname(file)) ? withFileLock(file, inner) : inner(),
    () => revokeUnlocked({ ...directories, id }, revokedAt)
  )()

const revokeUnlocked = (options: KeyDirectories & { readonly id: string }, revokedAt: string): RevokedApiKey => {
  const holding = keysFiles(options)
    .map(({ file }) => ({ file, records: readKeys(file) }))
    .filter(({ records }) => records.some((record) => record.id === options.id))
  if (holding.length === 0) throw new ApiKeyNotFound({ id: options.id })
  const active = holding.filter(({ records }) =>
    records.some((record) => record.id === options.id && record.revokedAt === undefined)
  )
  if (active.length === 0) {
    const record = holding[0]!.records.find((r) => r.id === options.id)!
    throw new ApiKeyAlreadyRevoked({ id: options.id, revokedAt: record.revokedAt ?? "" })
  }
  for (const { file, records } of active) {
    const updated = records.map((record) =>
      record.id === options.id && record.revokedAt === undefined ? { ...record, revokedAt } : record
    )
    try {
      writeKeys(file, updated)
    } catch (error) {
      const code = errorCode(error)
      if (code === undefined || !READ_ONLY_CODES.has(code)) throw error
      throw new ApiKeysFileNotWritable({
        file: displayPath(file),
        reason: `${code}; set revokedAt on the key in this file where it is maintained (its repository)`
      })
    }
  }
  return { id: options.id as ApiKeyId, revokedAt, files: active.map(({ file }) => file) }
}
