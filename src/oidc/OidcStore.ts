/**
 * The OpenID Connect provider's state (`oidc-provider`'s models: sessions,
 * interactions, grants, authorization codes, access tokens, and the
 * eligibility claims bound to a grant), kept by a store port as every other
 * slice keeps its state, so daemons sharing a store continue each other's
 * authorizations.
 *
 * What a caller relies on, the same for every adapter (one contract suite,
 * `test/oidc/OidcStore.test.ts`):
 * - an entry is a JSON object kept under its model and id, and gone once
 *   its lifetime (seconds, from the write) has passed;
 * - `consume` marks an entry consumed and answers whether this call did:
 *   of two consumptions of one authorization code, even on two daemons,
 *   exactly one succeeds (the other is a replay);
 * - `revokeByGrantId` removes every entry written with that `grantId`;
 * - a session is also found by its `uid`.
 *
 * Adapters: memory (one process: the library, tests); files
 * (`<dataDir>/oidc/<hash>.json`, 0600, one daemon: its reads and writes are
 * synchronous, so a consumption is atomic within the process; expired
 * files go as they are met and by a sweep); Redis (`oidcRedis.ts`: shared
 * by every daemon, a consumption is one `SET NX`); PostgreSQL
 * (`oidcPostgres.ts`: shared, a consumption is one conditional `UPDATE`).
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ensurePrivateDirectory, writeFileAtomic } from "../store/atomicWrite.ts"
import { markOutage } from "../store/outage.ts"

/** One of the provider's entries: a JSON object. */
export type OidcPayload = Readonly<Record<string, unknown>>

export class OidcStoreError extends Schema.TaggedError<OidcStoreError>()("OidcStoreError", {
  operation: Schema.Literals(["upsert", "find", "consume", "destroy", "revoke"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The OpenID Connect store failed to ${this.operation}`
  }
}
markOutage(OidcStoreError)

export interface OidcStoreService {
  /** Writes the entry, replacing any, for `expiresInSeconds` (undefined: until removed). */
  upsert(
    model: string,
    id: string,
    payload: OidcPayload,
    expiresInSeconds: number | undefined
  ): Effect.Effect<void, OidcStoreError>
  find(model: string, id: string): Effect.Effect<OidcPayload | undefined, OidcStoreError>
  /** The session whose `uid` this is. */
  findSessionByUid(uid: string): Effect.Effect<OidcPayload | undefined, OidcStoreError>
  /** Marks the entry consumed (`consumed`: epoch seconds); true when this call did, false when it was already, or is gone. */
  consume(model: string, id: string): Effect.Effect<boolean, OidcStoreError>
  destroy(model: string, id: string): Effect.Effect<void, OidcStoreError>
  /** Removes every entry written with this `grantId`. */
  revokeByGrantId(grantId: string): Effect.Effect<void, OidcStoreError>
}

/** The model whose entries are also found by their `uid`. */
export const SESSION_MODEL = "Session"

/** An entry as the memory and file adapters keep it. */
interface Entry {
  readonly model: string
  readonly id: string
  readonly payload: OidcPayload
  /** Epoch ms; absent: no end. */
  readonly expiresAt?: number | undefined
}

/** Where the memory and file adapters keep entries: synchronous, so each operation is one step of the process. */
interface EntryBackend {
  get(key: string): Entry | undefined
  set(key: string, entry: Entry): void
  delete(key: string): void
  keys(): Iterable<string>
}

const keyOf = (model: string, id: string): string => createHash("sha256").update(`${model}\n${id}`).digest("base64url")

const UID_INDEX = "SessionUid"

const failed = (operation: OidcStoreError["operation"]) => (cause: unknown) => new OidcStoreError({ operation, cause })

/** The port over a synchronous backend: the memory and file adapters' shared rules. */
const overEntries = (backend: EntryBackend): OidcStoreService => {
  const live = (key: string): Entry | undefined => {
    const entry = backend.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      backend.delete(key)
      return undefined
    }
    return entry
  }
  const run = <A>(operation: OidcStoreError["operation"], body: () => A) =>
    Effect.try({ try: body, catch: failed(operation) })
  return {
    upsert: (model, id, payload, expiresInSeconds) =>
      run("upsert", () => {
        const expiresAt = expiresInSeconds === undefined ? undefined : Date.now() + expiresInSeconds * 1000
        backend.set(keyOf(model, id), { model, id, payload, expiresAt })
        if (model === SESSION_MODEL && typeof payload.uid === "string") {
          backend.set(keyOf(UID_INDEX, payload.uid), { model: UID_INDEX, id: payload.uid, payload: { id }, expiresAt })
        }
      }),
    find: (model, id) => run("find", () => live(keyOf(model, id))?.payload),
    findSessionByUid: (uid) =>
      run("find", () => {
        const sessionId = live(keyOf(UID_INDEX, uid))?.payload.id
        return typeof sessionId === "string" ? live(keyOf(SESSION_MODEL, sessionId))?.payload : undefined
      }),
    consume: (model, id) =>
      run("consume", () => {
        const key = keyOf(model, id)
        const entry = live(key)
        if (entry === undefined || entry.payload.consumed !== undefined) return false
        backend.set(key, { ...entry, payload: { ...entry.payload, consumed: Math.floor(Date.now() / 1000) } })
        return true
      }),
    destroy: (model, id) => run("destroy", () => backend.delete(keyOf(model, id))),
    revokeByGrantId: (grantId) =>
      run("revoke", () => {
        for (const key of [...backend.keys()]) if (live(key)?.payload.grantId === grantId) backend.delete(key)
      })
  }
}

const makeMemory = (): OidcStoreService => {
  const entries = new Map<string, Entry>()
  return overEntries({
    get: (key) => entries.get(key),
    set: (key, entry) => void entries.set(key, entry),
    delete: (key) => void entries.delete(key),
    keys: () => entries.keys()
  })
}

const StoredEntry = Schema.Struct({
  model: Schema.String,
  id: Schema.String,
  payload: Schema.Record(Schema.String, Schema.Unknown),
  expiresAt: Schema.optionalKey(Schema.Number)
})
const decodeEntry = Schema.decodeUnknownSync(Schema.fromJsonString(StoredEntry))

/** How often the file adapter removes entries past their lifetime. */
const SWEEP_INTERVAL = "10 minutes"

const makeFiles = (dataDir: string) =>
  Effect.gen(function* () {
    const directory = join(dataDir, "oidc")
    ensurePrivateDirectory(directory)
    const fileOf = (key: string) => join(directory, `${key}.json`)
    const backend: EntryBackend = {
      get: (key) => {
        try {
          return decodeEntry(readFileSync(fileOf(key), "utf8"))
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
          throw error
        }
      },
      set: (key, entry) => writeFileAtomic(fileOf(key), JSON.stringify(entry)),
      delete: (key) => rmSync(fileOf(key), { force: true }),
      keys: () =>
        readdirSync(directory)
          .filter((name) => name.endsWith(".json") && !name.startsWith("."))
          .map((name) => name.slice(0, -".json".length))
    }
    const sweep = Effect.sync(() => {
      const now = Date.now()
      for (const key of backend.keys()) {
        try {
          const entry = backend.get(key)
          if (entry?.expiresAt !== undefined && entry.expiresAt <= now) backend.delete(key)
        } catch {
          backend.delete(key) // a file that does not decode holds nothing
        }
      }
    })
    yield* sweep
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(SWEEP_INTERVAL), sweep)))
    return overEntries(backend)
  })

export class OidcStore extends Context.Service<OidcStore, OidcStoreService>()("campusgate/oidc/OidcStore") {
  /** Entries in this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<OidcStore> = Layer.sync(OidcStore, makeMemory)

  /** Entries in `<dataDir>/oidc/`, kept across restarts (one daemon). */
  static readonly layerFiles = (dataDir: string): Layer.Layer<OidcStore> => Layer.effect(OidcStore, makeFiles(dataDir))
}
