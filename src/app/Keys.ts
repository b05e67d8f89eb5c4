/**
 * API keys as every transport manages them, over the `ApiKeyStore` port:
 * the CLI (`campusgate keys`), the daemon (its bootstrap key) and the HTTP
 * API (`/api/v1/keys`). Making a key (256 random bits, shown once; only its
 * hash is stored), with a valid record and expiry, revoking one, listing
 * them, and the first key of a deployment that has none.
 *
 * The rules of keys managed by a key are here and nowhere else
 * (`createFor`, `revokeFor`, `listFor`): a key sees and revokes its own
 * team's keys only (another team's is not found, never "exists"); it makes
 * keys for its own team only, with scopes it holds itself, expiring no
 * later than it does — a key never makes more than it holds. A change is
 * stored, then applied to the snapshot (that one key, `Snapshot.change`)
 * before the answer, so the key index
 * accepts or refuses the key at once on this daemon; other daemons sharing
 * the store apply it within a second (the shared adapters record it in the
 * change feed they follow; the file adapter's files are watched).
 * The synchronous functions at the end run it over the file store, for the
 * command line and tests.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Semaphore from "effect/Semaphore"
import {
  type ApiKeyId,
  type ApiKeyRecord,
  ApiKeyRecord as ApiKeyRecordSchema,
  type ApiKeyView,
  allScopes,
  type CreatedApiKeyView,
  type NewApiKeyRequest,
  type Scope
} from "../domain/ApiKey.ts"
import { type FieldError, formatProblem } from "../domain/errors.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import { ApiKeyStore, ApiKeysError } from "../keys/ApiKeyStore.ts"
import type { KeyDirectories, KeyLocation, ListedApiKey, RevokedApiKey } from "../keys/apiKeyFiles.ts"
import { ApiKeyIndex, generateApiKey, hashApiKey, keyStatus } from "../keys/apiKeys.ts"
import {
  InvalidApiKeyRequest,
  InvalidKeyCursor,
  InvalidKeyRequest,
  KeyAlreadyRevoked,
  KeyChangeNotApplied,
  KeyInConfigDirectory,
  KeyNotFound,
  KeyStoreUnavailable,
  KeysError,
  ScopesNotHeld
} from "./KeysError.ts"
import { type ReloadOutcome, Snapshot } from "./Snapshot.ts"
import { isStoreUnreadable } from "./sources.ts"

/** The key making a request: its id, team and scopes (the HTTP `Caller`). */
export interface KeyHolder {
  readonly keyId: string
  readonly team: string
  readonly scopes: ReadonlySet<Scope>
}

/** A page of a team's keys: at most `limit`, after the key the opaque `cursor` names. */
export interface KeyPageRequest {
  readonly limit: number
  readonly cursor?: string | undefined
}

export interface KeyPage {
  readonly data: ReadonlyArray<ApiKeyView>
  readonly nextCursor: string | null
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
  /**
   * Makes a key for `caller`'s team, stored with the data (never in the
   * config directory), serving before the answer: scopes the caller holds,
   * expiring no later than the caller's key (neither expiry given: when the
   * caller's key expires, or never).
   */
  createFor(caller: KeyHolder, request: NewApiKeyRequest, now?: number): Effect.Effect<CreatedApiKeyView, KeysError>
  /** Revokes `caller`'s team's key `id` (the caller's own included), refused at once. */
  revokeFor(caller: KeyHolder, id: string, now?: number): Effect.Effect<ApiKeyView, KeysError>
  /** A page of `team`'s keys, ordered by id, each with its status at `now`; no hash. */
  listFor(team: string, page: KeyPageRequest, now?: number): Effect.Effect<KeyPage, KeysError>
}

/** What makes a change to the keys serve (the daemon); absent, the store's watchers do. */
export interface KeysOptions {
  /** The snapshot's change of the one key (`Snapshot.change`): applied alone, or reloaded where that is not sure. */
  readonly change?: ((id: string) => Effect.Effect<ReloadOutcome>) | undefined
  /** The snapshot's reload, when there is no `change`. */
  readonly reload?: Effect.Effect<ReloadOutcome> | undefined
}

const DAY_MS = 86_400_000

const fail = (reason: KeysError["reason"]) => Effect.fail(new KeysError({ reason }))

/** The store's failure as the reason a transport answers; `id` is the key a revocation named. */
const storeFailure = (error: ApiKeysError, id = "") => {
  const reason = error.reason
  switch (reason._tag) {
    case "ApiKeyNotFound":
      return fail(new KeyNotFound({ id: reason.id }))
    case "ApiKeyAlreadyRevoked":
      return fail(new KeyAlreadyRevoked({ id: reason.id, revokedAt: reason.revokedAt }))
    case "ApiKeysFileNotWritable":
      return fail(new KeyInConfigDirectory({ id }))
    case "InvalidApiKeysFile":
      return fail(
        new KeyChangeNotApplied({
          detail: "The API key store holds a file that is not valid, so its keys cannot be listed or changed now.",
          problems: reason.problems.map(formatProblem)
        })
      )
    case "ApiKeyStoreUnavailable":
      return fail(
        new KeyStoreUnavailable({
          detail: `The API key store cannot be used now (${reason.message}); nothing was changed. Try again later.`
        })
      )
  }
}

/** Every record once, by id (the first held, as the key index takes it). */
const recordsOf = (listed: ReadonlyArray<ListedApiKey>): ReadonlyArray<ApiKeyRecord> => {
  const byId = new Map<string, ApiKeyRecord>()
  for (const { record } of listed) if (!byId.has(record.id)) byId.set(record.id, record)
  return [...byId.values()]
}

/** A record as its team is shown it: no hash, absent times as null, its status at `now`. */
export const keyView = (record: Omit<ApiKeyRecord, "hash">, now: number): ApiKeyView => ({
  id: record.id,
  ...(record.name === undefined ? {} : { name: record.name }),
  team: record.team,
  scopes: record.scopes,
  createdAt: record.createdAt,
  expiresAt: record.expiresAt ?? null,
  revokedAt: record.revokedAt ?? null,
  status: keyStatus(record, now)
})

// The cursor of a page of keys: the base64url of the last id shown, opaque to clients (as the other lists').
const encodeCursor = (id: string): string => Buffer.from(id, "utf8").toString("base64url")
const decodeCursor = (cursor: string): string | undefined => {
  const id = Buffer.from(cursor, "base64url").toString("utf8")
  return id !== "" && encodeCursor(id) === cursor ? id : undefined
}

/**
 * When a new key expires (epoch milliseconds; undefined: never), or the
 * field errors: one expiry form at most, in the future, and never after the
 * key that makes it (whose expiry it takes when none is given).
 */
const expiryFor = (
  request: NewApiKeyRequest,
  maker: ApiKeyRecord | undefined,
  now: number
): number | undefined | ReadonlyArray<FieldError> => {
  const errors: Array<FieldError> = []
  let at: number | undefined
  let field = "/expiresAt"
  if (request.expiresInDays !== undefined && request.expiresAt !== undefined) {
    errors.push({ field, code: "CONFLICTING_EXPIRY", message: "give expiresInDays or expiresAt, not both" })
  } else if (request.expiresInDays !== undefined) {
    at = now + request.expiresInDays * DAY_MS
    field = "/expiresInDays"
  } else if (request.expiresAt !== undefined) {
    at = Date.parse(request.expiresAt)
    if (!(at > now)) errors.push({ field, code: "NOT_IN_FUTURE", message: "expiresAt must lie in the future" })
  }
  const limit = maker?.expiresAt
  if (errors.length === 0 && limit !== undefined) {
    if (at === undefined) at = Date.parse(limit)
    else if (at > Date.parse(limit)) {
      errors.push({
        field,
        code: "OUTLIVES_KEY",
        message: `the key making it expires at ${limit}; a key it makes cannot expire later`
      })
    }
  }
  return errors.length > 0 ? errors : at
}

/**
 * `reload` run one at a time, a caller that arrives while one waits to
 * start joining it: that reload reads the store after the caller's write,
 * so twenty keys made at once cost two reloads, not twenty.
 */
const coalesced = (reload: Effect.Effect<ReloadOutcome>): Effect.Effect<ReloadOutcome> => {
  const running = Semaphore.makeUnsafe(1)
  let waiting: Deferred.Deferred<ReloadOutcome> | undefined
  return Effect.suspend(() => {
    if (waiting !== undefined) return Deferred.await(waiting)
    const mine = Deferred.makeUnsafe<ReloadOutcome>()
    waiting = mine
    const run = running.withPermit(
      Effect.suspend(() => {
        if (waiting === mine) waiting = undefined
        return reload
      })
    )
    return Effect.uninterruptible(Effect.onExit(run, (exit) => Deferred.done(mine, exit)))
  })
}

export class Keys extends Context.Service<Keys, KeysService>()("campusgate/app/Keys") {
  static readonly make = (store: ApiKeyStore["Service"], options: KeysOptions = {}): KeysService => {
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
    const reloaded = options.reload === undefined ? undefined : coalesced(options.reload)
    const { change } = options
    const reload = (id: string) => (change === undefined ? reloaded : change(id))
    /**
     * Makes the stored change of key `id` serve here now; a rejected change
     * runs `rejected`, which undoes what it can and fails. A change that could
     * not read a store (it went away after the change) checked nothing: that
     * failure is the store's outage (503, to retry), not a rejected change.
     */
    const serve = (id: string, rejected: (problems: ReadonlyArray<string>) => Effect.Effect<never, KeysError>) => {
      const serving = reload(id)
      return serving === undefined
        ? Effect.void
        : Effect.flatMap(serving, (outcome) => {
            if (outcome.ok) return Effect.void
            const undone = rejected(outcome.problems.map(formatProblem))
            const unreadable = outcome.problems.find(isStoreUnreadable)
            if (unreadable === undefined) return undone
            return Effect.catch(undone, (error) =>
              error.reason._tag === "KeyChangeNotApplied"
                ? fail(
                    new KeyStoreUnavailable({
                      detail: `${error.reason.detail} A store cannot be read now (${unreadable.message}); try again later.`
                    })
                  )
                : Effect.fail(error)
            )
          })
    }
    const records = Effect.map(store.list, recordsOf)

    const createFor = (caller: KeyHolder, request: NewApiKeyRequest, at?: number) =>
      Effect.gen(function* () {
        const now = at ?? Date.now()
        const scopes = [...new Set(request.scopes)]
        const missing = scopes.filter((scope) => !caller.scopes.has(scope))
        if (missing.length > 0) return yield* fail(new ScopesNotHeld({ missing }))
        const maker = (yield* Effect.catch(records, storeFailure)).find((record) => record.id === caller.keyId)
        const expiry = expiryFor(request, maker, now)
        if (typeof expiry === "object") {
          return yield* fail(
            new InvalidKeyRequest({
              detail: `The key cannot be made: ${expiry.map((error) => `${error.field}: ${error.message}`).join("; ")}.`,
              errors: expiry
            })
          )
        }
        const made = yield* create(
          {
            team: caller.team as TeamId,
            scopes,
            now,
            ...(request.name === undefined ? {} : { name: request.name }),
            ...(expiry === undefined ? {} : { expiresAt: new Date(expiry).toISOString() })
          },
          false
        ).pipe(
          Effect.catchTags({
            ApiKeysError: (error) => storeFailure(error),
            InvalidApiKeyRequest: (error) => fail(new InvalidKeyRequest({ detail: error.message, errors: [] }))
          })
        )
        yield* serve(made.id, (problems) =>
          Effect.gen(function* () {
            // Not serving, so not made: the record stays, revoked, and the key never works.
            yield* Effect.ignore(store.revoke(made.id, new Date().toISOString()))
            yield* Effect.ignore(reload(made.id) ?? Effect.void)
            return yield* fail(
              new KeyChangeNotApplied({
                detail:
                  "The key could not be made to serve (the configuration could not be reloaded), so it was revoked again and is not usable.",
                problems
              })
            )
          })
        )
        yield* Effect.logInfo("API key made", {
          keyId: made.id,
          team: made.team,
          scopes: made.scopes,
          expiresAt: made.expiresAt,
          madeBy: caller.keyId
        })
        const record = {
          id: made.id,
          ...(made.name === undefined ? {} : { name: made.name }),
          team: made.team,
          scopes: made.scopes,
          createdAt: made.createdAt,
          ...(made.expiresAt === null ? {} : { expiresAt: made.expiresAt })
        }
        return { ...keyView(record, now), key: made.key } satisfies CreatedApiKeyView
      })

    const revokeFor = (caller: KeyHolder, id: string, at?: number) =>
      Effect.gen(function* () {
        const now = at ?? Date.now()
        const held = (yield* Effect.catch(records, storeFailure)).find(
          (record) => record.id === id && record.team === caller.team
        )
        if (held === undefined) return yield* fail(new KeyNotFound({ id }))
        if (held.revokedAt !== undefined) {
          return yield* fail(new KeyAlreadyRevoked({ id, revokedAt: held.revokedAt }))
        }
        const revoked = yield* store
          .revoke(id, new Date(now).toISOString())
          .pipe(Effect.catch((error) => storeFailure(error, id)))
        yield* serve(id, (problems) =>
          fail(
            new KeyChangeNotApplied({
              detail: `The API key "${id}" is revoked in the store, but this daemon could not reload its configuration (a change is not valid: GET /api/v1/status names it), so it may accept the key until that is fixed.`,
              problems
            })
          )
        )
        yield* Effect.logInfo("API key revoked", { keyId: id, team: held.team, revokedBy: caller.keyId })
        return keyView({ ...held, revokedAt: revoked.revokedAt }, now)
      })

    const listFor = (team: string, page: KeyPageRequest, at?: number) =>
      Effect.gen(function* () {
        const now = at ?? Date.now()
        let after: string | undefined
        if (page.cursor !== undefined) {
          after = decodeCursor(page.cursor)
          if (after === undefined) return yield* fail(new InvalidKeyCursor())
        }
        const following = (yield* Effect.catch(records, storeFailure))
          .filter((record) => record.team === team && (after === undefined || record.id > after))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        const data = following.slice(0, page.limit).map((record) => keyView(record, now))
        const more = following.length > page.limit
        return { data, nextCursor: more ? encodeCursor(data[data.length - 1]!.id) : null }
      })

    return {
      create,
      createFor,
      revokeFor,
      listFor,
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

  /** Over the store in force, each change reloading the snapshot before its answer (the daemon). */
  static readonly layer: Layer.Layer<Keys, never, ApiKeyStore | Snapshot> = Layer.effect(
    Keys,
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      const snapshots = yield* Snapshot
      return Keys.of(Keys.make(store, { change: (id) => snapshots.change([{ kind: "apiKey", id }]) }))
    })
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
