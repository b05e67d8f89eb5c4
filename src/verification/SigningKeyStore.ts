/**
 * Where the keys that sign eligibility tokens live: the port, with a memory
 * adapter (the library without a data directory, tests) and a file adapter
 * (`<dataDir>/signing-keys.json`, mode 0600), a Redis adapter
 * (`signingKeyRedis.ts`) and a PostgreSQL adapter
 * (`signingKeyPostgres.ts`). One contract suite
 * (`test/verification/SigningKeyStore.test.ts`) runs against each.
 *
 * A change is a function of the keys read (`update`), applied atomically:
 * the file adapter holds a lock file across read, change and atomic
 * write, so `campusgate keys rotate-signing` and a running daemon rotating
 * on its own never lose each other's key, and `list` re-reads the file
 * when it changed, so the daemon signs with a key the command made without
 * a restart. The Redis adapter keeps the list under one key
 * (`<prefix>signing-keys`) and changes it by compare-and-set, trying again
 * when another daemon changed it in between. The PostgreSQL adapter
 * (`signingKeyPostgres.ts`) keeps it in one row and changes it in a
 * transaction holding the row's lock from read to write.
 */
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "../store/atomicWrite.ts"
import { withFileLock } from "../store/fileLock.ts"
import { markOutage } from "../store/outage.ts"

export const SIGNING_KEYS_FILE = "signing-keys.json"

export const SigningAlgorithm = Schema.Literals(["EdDSA", "ES256"])
export type SigningAlgorithm = typeof SigningAlgorithm.Type

const Jwk = Schema.Record(Schema.String, Schema.String)

export const SigningKey = Schema.Struct({
  /** The `kid` of its tokens: the key's RFC 7638 thumbprint. */
  kid: Schema.String,
  algorithm: SigningAlgorithm,
  createdAt: Schema.Number,
  /** When a newer key took over; absent for the key that signs now. */
  retiredAt: Schema.optionalKey(Schema.Number),
  /** Until when a retired key stays published: its last token's expiry. */
  publishUntil: Schema.optionalKey(Schema.Number),
  privateJwk: Jwk,
  publicJwk: Jwk
})
export type SigningKey = typeof SigningKey.Type

const SigningKeysFile = Schema.Struct({ version: Schema.Literal(1), keys: Schema.Array(SigningKey) })
/** The keys as the file adapter writes them (and the Redis adapter keeps them): `{ version: 1, keys }`. */
export const decodeSigningKeys = Schema.decodeUnknownSync(Schema.fromJsonString(SigningKeysFile))

export class SigningKeyStoreError extends Schema.TaggedError<SigningKeyStoreError>()("SigningKeyStoreError", {
  operation: Schema.Literals(["list", "update"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The signing key store failed to ${this.operation}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(SigningKeyStoreError)

export interface SigningKeyStoreService {
  list(): Effect.Effect<ReadonlyArray<SigningKey>, SigningKeyStoreError>
  /** Replaces the keys with `change(keys)`, atomically with the read; answers the new keys. */
  update(
    change: (keys: ReadonlyArray<SigningKey>) => ReadonlyArray<SigningKey>
  ): Effect.Effect<ReadonlyArray<SigningKey>, SigningKeyStoreError>
}

export class SigningKeyStore extends Context.Service<SigningKeyStore, SigningKeyStoreService>()(
  "campusgate/verification/SigningKeyStore"
) {
  static readonly makeMemory = (): SigningKeyStoreService => {
    let keys: ReadonlyArray<SigningKey> = []
    return {
      list: () => Effect.sync(() => keys),
      update: (change) =>
        Effect.try({
          try: () => {
            keys = change(keys)
            return keys
          },
          catch: (cause) => new SigningKeyStoreError({ operation: "update", cause })
        })
    }
  }

  static readonly makeFiles = (dataDir: string): SigningKeyStoreService => {
    const path = join(dataDir, SIGNING_KEYS_FILE)
    let cached: { readonly stamp: string; readonly keys: ReadonlyArray<SigningKey> } | undefined
    const stampOf = (): string | undefined => {
      try {
        const stat = statSync(path)
        return `${stat.mtimeMs}:${stat.size}:${stat.ino}`
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
        throw error
      }
    }
    const read = (): ReadonlyArray<SigningKey> => {
      const stamp = stampOf()
      if (stamp === undefined) return []
      if (cached?.stamp === stamp) return cached.keys
      const keys = decodeSigningKeys(readFileSync(path, "utf8")).keys
      cached = { stamp, keys }
      return keys
    }
    return {
      list: () => Effect.try({ try: read, catch: (cause) => new SigningKeyStoreError({ operation: "list", cause }) }),
      update: (change) =>
        Effect.try({
          try: () =>
            withFileLock(path, () => {
              cached = undefined
              const keys = change(read())
              writeFileAtomic(path, `${JSON.stringify({ version: 1, keys }, null, 2)}\n`, 0o600)
              return keys
            }),
          catch: (cause) => new SigningKeyStoreError({ operation: "update", cause })
        })
    }
  }

  static readonly layerMemory: Layer.Layer<SigningKeyStore> = Layer.sync(SigningKeyStore, SigningKeyStore.makeMemory)

  static readonly layerFiles = (dataDir: string): Layer.Layer<SigningKeyStore> =>
    Layer.sync(SigningKeyStore, () => SigningKeyStore.makeFiles(dataDir))
}
