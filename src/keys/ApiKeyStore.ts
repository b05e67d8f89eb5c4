/**
 * Where API-key records are kept: a port with a file adapter (the
 * `api-keys.yaml` of the config directory, kept in git, and of the data
 * directory; `apiKeyFiles.ts`), a Redis adapter (`apiKeyRedis.ts`: the
 * config directory's file and keys held in Redis), a PostgreSQL adapter
 * (`apiKeyPostgres.ts`: the same, keys held in the database) and a memory
 * adapter. Records hold hashes only. The store hands the config loader its documents, so keys are decoded
 * with the config directory's files and reach the snapshot's key index the
 * same way whatever the store; writes are atomic, and concurrent writers
 * lose nothing. Failures are one `ApiKeysError` with its reason inside.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { stringify } from "yaml"
import type { ApiKeyId, ApiKeyRecord } from "../domain/ApiKey.ts"
import { markOutage } from "../store/outage.ts"
import {
  ApiKeyAlreadyRevoked,
  ApiKeyNotFound,
  ApiKeysFileNotWritable,
  addApiKeyRecord,
  InvalidApiKeysFile,
  type KeyDirectories,
  type KeyLocation,
  type ListedApiKey,
  listApiKeys,
  type RevokedApiKey,
  readKeyDocuments,
  revokeApiKeyRecord
} from "./apiKeyFiles.ts"

/** The store could not be read or written (a failing disk, permissions). */
export class ApiKeyStoreUnavailable extends Schema.TaggedError<ApiKeyStoreUnavailable>()("ApiKeyStoreUnavailable", {
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The API key store cannot be used now: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(ApiKeyStoreUnavailable)

export class ApiKeysError extends Schema.TaggedError<ApiKeysError>()("ApiKeysError", {
  reason: Schema.Union([
    InvalidApiKeysFile,
    ApiKeyNotFound,
    ApiKeyAlreadyRevoked,
    ApiKeysFileNotWritable,
    ApiKeyStoreUnavailable
  ])
}) {
  override get message(): string {
    return this.reason.message
  }
}

/** A stored key document, for the config loader: what it holds and where. */
export interface KeyDocument {
  readonly store: KeyLocation
  readonly location: string
  readonly text: string
}

export interface ApiKeyStoreService {
  /** The documents holding the records (the config directory's first). */
  readonly documents: Effect.Effect<ReadonlyArray<KeyDocument>, ApiKeysError>
  /** Every record, with where it is held (the config directory's first). */
  readonly list: Effect.Effect<ReadonlyArray<ListedApiKey>, ApiKeysError>
  /** Stores a new record: in the config directory when `preferConfig` and it can be written there, else in the data directory. */
  add(
    record: ApiKeyRecord,
    preferConfig: boolean
  ): Effect.Effect<{ readonly location: KeyLocation; readonly file: string }, ApiKeysError>
  /** Marks the key `id` revoked wherever it is held. */
  revoke(id: string, revokedAt: string): Effect.Effect<RevokedApiKey, ApiKeysError>
  /**
   * Stores `record` in the data location only when no key is stored at all,
   * atomically (a store shared by daemons starting together); answers
   * whether it did. Absent: the store has one writer, and `list` then `add` does.
   */
  readonly addFirst?: ((record: ApiKeyRecord) => Effect.Effect<boolean, ApiKeysError>) | undefined
}

const reasons = [InvalidApiKeysFile, ApiKeyNotFound, ApiKeyAlreadyRevoked, ApiKeysFileNotWritable] as const

/** A file adapter's failure as the port's error: a known reason as itself, anything else as the store being unavailable. */
const asError = (cause: unknown): ApiKeysError =>
  new ApiKeysError({
    reason: reasons.some((Reason) => cause instanceof Reason)
      ? (cause as ApiKeysError["reason"])
      : new ApiKeyStoreUnavailable({ cause })
  })

const attempt = <A>(run: () => A): Effect.Effect<A, ApiKeysError> => Effect.try({ try: run, catch: asError })

export class ApiKeyStore extends Context.Service<ApiKeyStore, ApiKeyStoreService>()("campusgate/keys/ApiKeyStore") {
  /** The file adapter over `directories`; `isWritable` says whether a directory accepts new files (tests). */
  static readonly makeFiles = (
    directories: KeyDirectories,
    isWritable?: (directory: string) => boolean
  ): ApiKeyStoreService => ({
    documents: attempt(() => readKeyDocuments(directories)),
    list: attempt(() => listApiKeys(directories)),
    add: (record, preferConfig) => attempt(() => addApiKeyRecord(directories, record, preferConfig, isWritable)),
    revoke: (id, revokedAt) => attempt(() => revokeApiKeyRecord(directories, id, revokedAt))
  })

  static readonly layerFiles = (directories: KeyDirectories): Layer.Layer<ApiKeyStore> =>
    Layer.succeed(ApiKeyStore, ApiKeyStore.makeFiles(directories))

  /** Records in this process's memory, one list per location: lost when it ends. */
  static readonly layerMemory: Layer.Layer<ApiKeyStore> = Layer.sync(ApiKeyStore, () => {
    const held: Record<KeyLocation, Array<ApiKeyRecord>> = { config: [], data: [] }
    const where = (location: KeyLocation) => `memory:${location}/api-keys.yaml`
    return ApiKeyStore.of({
      documents: Effect.sync(() =>
        (["config", "data"] as const)
          .filter((location) => held[location].length > 0)
          .map((location) => ({
            store: location,
            location: where(location),
            text: stringify({ keys: held[location] })
          }))
      ),
      list: Effect.sync(() =>
        (["config", "data"] as const).flatMap((location) =>
          held[location].map((record) => ({ record, location, file: where(location) }))
        )
      ),
      add: (record, preferConfig) =>
        Effect.sync(() => {
          const location: KeyLocation = preferConfig ? "config" : "data"
          held[location].push(record)
          return { location, file: where(location) }
        }),
      revoke: (id, revokedAt) =>
        Effect.suspend(() => {
          const holding = (["config", "data"] as const).filter((location) =>
            held[location].some((record) => record.id === id)
          )
          if (holding.length === 0) return Effect.fail(new ApiKeysError({ reason: new ApiKeyNotFound({ id }) }))
          const active = holding.filter((location) =>
            held[location].some((record) => record.id === id && record.revokedAt === undefined)
          )
          if (active.length === 0) {
            const record = held[holding[0]!].find((candidate) => candidate.id === id)!
            return Effect.fail(
              new ApiKeysError({ reason: new ApiKeyAlreadyRevoked({ id, revokedAt: record.revokedAt ?? "" }) })
            )
          }
          for (const location of active) {
            held[location] = held[location].map((record) =>
              record.id === id && record.revokedAt === undefined ? { ...record, revokedAt } : record
            )
          }
          return Effect.succeed({ id: id as ApiKeyId, revokedAt, files: active.map(where) })
        })
    })
  })
}
