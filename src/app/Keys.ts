/**
 * API keys as the CLI (`campusgate keys`) and the daemon (its bootstrap key)
 * manage them, over the `ApiKeyStore` port: making a key (256 random bits,
 * shown once; only its hash is stored), with a valid record and expiry,
 * revoking one, listing them, and the first key of a deployment that has
 * none. The synchronous functions at the end run it over the file store,
 * for the command line and tests.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import {
  type ApiKeyId,
  type ApiKeyRecord,
  ApiKeyRecord as ApiKeyRecordSchema,
  allScopes,
  type Scope
} from "../domain/ApiKey.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import { ApiKeyStore, ApiKeysError } from "../keys/ApiKeyStore.ts"
import type { KeyDirectories, KeyLocation, ListedApiKey, RevokedApiKey } from "../keys/apiKeyFiles.ts"
import { ApiKeyIndex, generateApiKey, hashApiKey } from "../keys/apiKeys.ts"

export class InvalidApiKeyRequest extends Schema.TaggedError<InvalidApiKeyRequest>()("InvalidApiKeyRequest", {
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot create the API key: ${this.reason}`
  }
}

export interface NewApiKey {
  readonly team: TeamId
  readonly scopes: ReadonlyArray<Scope>
  readonly name?: string
  /** Days from `now` until the key expires; or give `expiresAt`. */
  readonly expiresInDays?: number
  /** When the key expires, an ISO instant (see `parseExpiry`). */
  readonly expiresAt?: string
  /** Epoch milliseconds; defaults to the clock. */
  readonly now?: number
}

export interface CreatedApiKey {
  readonly id: ApiKeyId
  /** The secret, to show once. */
  readonly key: string
  readonly team: TeamId
  readonly scopes: ReadonlyArray<Scope>
  readonly name?: string
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly location: KeyLocation
  /** Where the record was written. */
  readonly file: string
}

export type BootstrapResult = ({ readonly created: true } & CreatedApiKey) | { readonly created: false }

const expiryOf = (options: NewApiKey, now: number): string | undefined => {
  if (options.expiresInDays !== undefined && options.expiresAt !== undefined) {
    throw new InvalidApiKeyRequest({ reason: "give expiresInDays or expiresAt, not both" })
  }
  if (options.expiresInDays !== undefined) {
    if (!(options.expiresInDays > 0) || !Number.isFinite(options.expiresInDays)) {
      throw new InvalidApiKeyRequest({ reason: "expiresInDays must be a number above zero" })
    }
    return new Date(now + options.expiresInDays * 86_400_000).toISOString()
  }
  if (options.expiresAt !== undefined && !(Date.parse(options.expiresAt) > now)) {
    throw new InvalidApiKeyRequest({ reason: `expiresAt ${options.expiresAt} is not in the future` })
  }
  return options.expiresAt
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** A valid record for a new key, or `InvalidApiKeyRequest`. */
const makeRecord = (options: NewApiKey, now: number, id: ApiKeyId, key: string): ApiKeyRecord => {
  const expiresAt = expiryOf(options, now)
  const candidate = {
    id,
    ...(options.name === undefined ? {} : { name: options.name }),
    team: options.team,
    scopes: [...new Set(options.scopes)],
    hash: hashApiKey(key),
    createdAt: new Date(now).toISOString(),
    ...(expiresAt === undefined ? {} : { expiresAt })
  }
  const exit = Schema.decodeUnknownExit(ApiKeyRecordSchema, { errors: "all" })(candidate)
  if (exit._tag === "Success") return exit.value
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  const issues = failure === undefined ? [] : formatIssues((failure.error as Schema.SchemaError).issue).issues
  const reason = issues.map((issue) => `${(issue.path ?? []).map(String).join(".") || "key"}: ${issue.message}`)
  throw new InvalidApiKeyRequest({ reason: reason.join("; ") || "invalid key record" })
}

export interface KeysService {
  /** Makes a key and stores its record (the config directory's keys when `preferConfig` and it can be written). */
  create(options: NewApiKey, preferConfig?: boolean): Effect.Effect<CreatedApiKey, ApiKeysError | InvalidApiKeyRequest>
  revoke(id: string, now?: number): Effect.Effect<RevokedApiKey, ApiKeysError>
  readonly list: Effect.Effect<ReadonlyArray<ListedApiKey>, ApiKeysError>
  /**
   * When no key is stored: makes one for `team` with every scope, in the data
   * directory (the config directory may be a read-only checkout), for the
   * daemon to print once.
   */
  ensureBootstrap(team: TeamId, now?: number): Effect.Effect<BootstrapResult, ApiKeysError | InvalidApiKeyRequest>
}

export class Keys extends Context.Service<Keys, KeysService>()("campusgate/app/Keys") {
  static readonly make = (store: ApiKeyStore["Service"]): KeysService => {
    const create = (options: NewApiKey, preferConfig = true) =>
      Effect.gen(function* () {
        const now = options.now ?? Date.now()
        const existing = new Set((yield* store.list).map((listed) => listed.record.id))
        let generated = generateApiKey()
        while (existing.has(generated.id)) generated = generateApiKey()
        const record = yield* Effect.try({
          try: () => makeRecord(options, now, generated.id, generated.key),
          catch: (error) => error as InvalidApiKeyRequest
        })
        const stored = yield* store.add(record, preferConfig)
        return {
          id: record.id,
          key: generated.key,
          team: record.team,
          scopes: record.scopes,
          ...(record.name === undefined ? {} : { name: record.name }),
          createdAt: record.createdAt,
          expiresAt: record.expiresAt ?? null,
          location: stored.location,
          file: stored.file
        }
      })
    return {
      create,
      revoke: (id, now) => store.revoke(id, new Date(now ?? Date.now()).toISOString()),
      list: store.list,
      ensureBootstrap: (team, now) =>
        Effect.gen(function* () {
          if ((yield* store.list).length > 0) return { created: false } as const
          const options = { team, scopes: allScopes, name: "bootstrap", ...(now === undefined ? {} : { now }) }
          const { addFirst } = store
          if (addFirst === undefined) return { created: true, ...(yield* create(options, false)) } as const
          // A shared store: of several daemons starting together, one makes the key.
          const at = options.now ?? Date.now()
          const generated = generateApiKey()
          const record = yield* Effect.try({
            try: () => makeRecord(options, at, generated.id, generated.key),
            catch: (error) => error as InvalidApiKeyRequest
          })
          if (!(yield* addFirst(record))) return { created: false } as const
          const listed = (yield* store.list).find((entry) => entry.record.id === record.id)
          return {
            created: true,
            id: record.id,
            key: generated.key,
            team: record.team,
            scopes: record.scopes,
            name: "bootstrap",
            createdAt: record.createdAt,
            expiresAt: null,
            location: "data",
            file: listed?.file ?? "redis"
          } as const
        })
    }
  }

  static readonly layer: Layer.Layer<Keys, never, ApiKeyStore> = Layer.effect(
    Keys,
    Effect.map(Effect.service(ApiKeyStore), (store) => Keys.of(Keys.make(store)))
  )
}

/** Runs `use` over the file store of `directories`, throwing the reason of a failure (what the CLI prints). */
const overFiles = <A>(
  directories: KeyDirectories,
  use: (keys: KeysService) => Effect.Effect<A, ApiKeysError | InvalidApiKeyRequest>,
  isWritable?: (directory: string) => boolean
): A => {
  const exit = Effect.runSyncExit(use(Keys.make(ApiKeyStore.makeFiles(directories, isWritable))))
  if (exit._tag === "Success") return exit.value
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (failure === undefined) throw Cause.squash(exit.cause)
  throw failure.error instanceof ApiKeysError ? failure.error.reason : failure.error
}

export interface CreateApiKeyOptions extends KeyDirectories, NewApiKey {
  /** Whether a directory accepts new files; defaults to the process's access to it. */
  readonly isWritable?: (directory: string) => boolean
}

/**
 * Makes a key for `team` with `scopes` and stores its record in the config
 * directory's `api-keys.yaml`, or in the data directory's when the config
 * directory is not writable. The returned key is the only copy.
 */
export const createApiKey = (options: CreateApiKeyOptions): CreatedApiKey =>
  overFiles(options, (keys) => keys.create(options), options.isWritable)

/** Marks the key `id` revoked in whichever file holds it. */
export const revokeApiKey = (options: KeyDirectories & { readonly id: string; readonly now?: number }): RevokedApiKey =>
  overFiles(options, (keys) => keys.revoke(options.id, options.now))

/** When neither `api-keys.yaml` holds a key: one for `team` with every scope, in the data directory. */
export const ensureBootstrapKey = (
  options: KeyDirectories & { readonly team: TeamId; readonly now?: number }
): BootstrapResult => overFiles(options, (keys) => keys.ensureBootstrap(options.team, options.now))

/** An index of every stored key, for checking presented keys. */
export const loadApiKeyIndex = (directories: KeyDirectories): ApiKeyIndex =>
  new ApiKeyIndex(overFiles(directories, (keys) => keys.list).map((listed) => listed.record))
