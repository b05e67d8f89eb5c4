/**
 * What the shared stores' key adapters (Redis, PostgreSQL) answer alike.
 * The config directory's `api-keys.yaml` is kept in git and deployed to
 * every daemon, so a key it defines that was revoked through the API is
 * recorded in the store and applied to that file's document when it is
 * handed to the config loader — every daemon refuses the key without
 * waiting for a deployment — and to its record when keys are listed; the
 * store's own keys follow as one more document.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import { parseDocument, YAMLMap, YAMLSeq } from "yaml"
import type { ApiKeyRecord } from "../domain/ApiKey.ts"
import { ApiKeyStoreUnavailable, ApiKeysError, type KeyDocument } from "./ApiKeyStore.ts"
import {
  ApiKeyAlreadyRevoked,
  ApiKeyNotFound,
  type KeyDirectories,
  type ListedApiKey,
  loadApiKeysFile,
  readKeyDocuments,
  serializeApiKeys
} from "./apiKeyFiles.ts"

/** A failure of a shared key store as the port says it: a key not found or already revoked, else the store unavailable. */
export const asApiKeysError = (error: unknown): ApiKeysError =>
  error instanceof ApiKeysError
    ? error
    : error instanceof ApiKeyNotFound || error instanceof ApiKeyAlreadyRevoked
      ? new ApiKeysError({ reason: error })
      : new ApiKeysError({ reason: new ApiKeyStoreUnavailable({ cause: error }) })

/** Oldest first, then by id: the order the store's keys are listed and written in. */
export const byCreation = (a: ApiKeyRecord, b: ApiKeyRecord): number =>
  a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)

/**
 * The reads of a shared key store over `configDir`'s key file and the
 * store's own keys (`stored`, at `location`) and revocations of config keys
 * (`revocations`, key id → when): the config directory alone, its records,
 * the documents the config loader reads, and the listing.
 */
export const sharedKeyReads = (options: {
  readonly configDir: string
  readonly location: string
  readonly stored: Effect.Effect<ReadonlyArray<ApiKeyRecord>, ApiKeysError>
  readonly revocations: Effect.Effect<ReadonlyMap<string, string>, ApiKeysError>
}) => {
  const { configDir, location, stored, revocations } = options
  // The config directory alone (`dataDir` the same directory: one file).
  const configOnly: KeyDirectories = { configDir: resolve(configDir), dataDir: resolve(configDir) }
  const configRecords = Effect.try({
    try: () => {
      const loaded = loadApiKeysFile(resolve(configDir, "api-keys.yaml"))
      return loaded.ok ? loaded.value : []
    },
    catch: asApiKeysError
  })
  const documents: Effect.Effect<ReadonlyArray<KeyDocument>, ApiKeysError> = Effect.gen(function* () {
    const files = yield* Effect.try({ try: () => readKeyDocuments(configOnly), catch: asApiKeysError })
    const revoked = yield* revocations
    const records = yield* stored
    return [
      ...files.map((file) => ({ ...file, text: withRevocations(file.text, revoked) })),
      ...(records.length === 0 ? [] : [{ store: "data" as const, location, text: serializeApiKeys(records) }])
    ]
  })
  const list: Effect.Effect<ReadonlyArray<ListedApiKey>, ApiKeysError> = Effect.gen(function* () {
    const revoked = yield* revocations
    const config = (yield* configRecords).map(
      (record): ListedApiKey => ({
        record:
          record.revokedAt === undefined && revoked.has(record.id)
            ? { ...record, revokedAt: revoked.get(record.id)! }
            : record,
        location: "config",
        file: resolve(configDir, "api-keys.yaml")
      })
    )
    const data = (yield* stored).map((record): ListedApiKey => ({ record, location: "data", file: location }))
    return [...config, ...data]
  })
  return { configOnly, configRecords, documents, list }
}

/** The config file's document with `revoked` applied to the keys it holds that are not revoked there. */
export const withRevocations = (text: string, revoked: ReadonlyMap<string, string>): string => {
  if (revoked.size === 0) return text
  const document = parseDocument(text)
  const keys = document.get("keys")
  if (!(keys instanceof YAMLSeq)) return text
  let changed = false
  for (const item of keys.items) {
    if (!(item instanceof YAMLMap)) continue
    const at = revoked.get(String(item.get("id")))
    if (at !== undefined && !item.has("revokedAt")) {
      item.set("revokedAt", at)
      changed = true
    }
  }
  return changed ? document.toString() : text
}
