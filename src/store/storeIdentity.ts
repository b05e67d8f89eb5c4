/**
 * A shared store's identity: a random id kept in the store beside the
 * generated secrets (Redis `<prefix>secrets:store-identity`, PostgreSQL
 * the `campusgate_secrets` row `store-identity`), so that a backup copying
 * every secret carries it, and remembered in each daemon's data directory
 * (`store-identity.json`: the kind, the store's address without
 * credentials, the id; `store/rememberedIdentity.ts`).
 *
 * What it guarantees: a store that comes back empty, or another store put
 * in its place, is noticed before anything is minted into it. A daemon
 * that remembers an identity and finds none, or another, in the store
 * refuses to start (`StoreLost`), and a running one holds its connection's
 * breaker (`store/breaker.ts`) open with the reason, so every store call
 * fails at once as an outage: no new signing key, no new secret, no write
 * that would fork the deployment's state; once the store answers with the
 * remembered identity again (a backup restored), the breaker is released
 * without a restart. `whenEmpty: start-over` keeps the old behaviour
 * (mint a new identity and go on), said loudly in the log.
 *
 * The rules are `judgeIdentity` (pure); `checkIdentity` applies them at
 * start, `watchIdentity` every `IDENTITY_POLL_MS` while the daemon runs,
 * off the request path.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Breaker } from "./breaker.ts"
import { type RememberedIdentity, readRemembered, remember, STORE_IDENTITY_FILE } from "./rememberedIdentity.ts"

/** The identity's name among the store's secrets (a Redis key `<prefix>secrets:…`, a `campusgate_secrets` row). */
export const STORE_IDENTITY_NAME = "store-identity"
/** How often a running daemon reads the store's identity (the configuration version's poll). */
export const IDENTITY_POLL_MS = 500

/** What a daemon does on a store found without its identity: refuse (the default), or mint a new one and go on. */
export type WhenEmpty = "refuse" | "start-over"

export const newIdentity = (): string => randomBytes(16).toString("hex")

/**
 * What to do with the identity the store holds (`stored`) and the one this
 * daemon remembers: `mint` a first one (a new deployment, or starting over),
 * `join` the store's (a fresh data directory), go on (`same`), or refuse
 * (`lost`: the store is empty or holds another identity).
 */
export type Verdict =
  | { readonly _tag: "mint" }
  | { readonly _tag: "join"; readonly id: string }
  | { readonly _tag: "same" }
  | { readonly _tag: "lost"; readonly remembered: string; readonly found: string | undefined }

export const judgeIdentity = (
  stored: string | undefined,
  remembered: string | undefined,
  whenEmpty: WhenEmpty
): Verdict => {
  if (remembered === undefined) return stored === undefined ? { _tag: "mint" } : { _tag: "join", id: stored }
  if (stored === remembered) return { _tag: "same" }
  if (whenEmpty === "start-over") return stored === undefined ? { _tag: "mint" } : { _tag: "join", id: stored }
  return { _tag: "lost", remembered, found: stored }
}

/** The store holds no identity, or another, than the one this daemon remembers: it was lost or replaced. */
export class StoreLost extends Schema.TaggedError<StoreLost>()("StoreLost", {
  kind: Schema.String,
  address: Schema.String,
  remembered: Schema.String,
  found: Schema.optionalKey(Schema.String),
  rememberedIn: Schema.String
}) {
  override get message(): string {
    return lostReason(this)
  }
}

/** The reason and what an operator must do, in one text (the log, the 503, the refusal to start). */
export const lostReason = (lost: {
  readonly kind: string
  readonly address: string
  readonly remembered: string
  readonly found?: string | undefined
  readonly rememberedIn: string
}): string =>
  `The ${lost.kind} store at ${lost.address} ${
    lost.found === undefined
      ? "came back empty (it holds no store identity)"
      : `holds another store identity (${lost.found})`
  } while this daemon remembers ${lost.remembered} (${lost.rememberedIn}): it was lost or replaced, so nothing is written to it and no key or secret is made anew. Restore it from a backup (campusgate restore --from FILE; the daemons go on once it holds ${lost.remembered} again), or start over on purpose: campusgate store accept-new (tokens already issued stop verifying, unique-email counts restart), then restart the daemons.`

/** How the identity is read and minted in one kind of store; `mint` sets it if absent and answers the stored one. */
export interface IdentityAccess<E> {
  readonly read: Effect.Effect<string | undefined, E>
  readonly mint: (id: string) => Effect.Effect<string, E>
}

export interface IdentityOptions<E, Outage> {
  readonly kind: string
  readonly address: string
  readonly dataDir: string
  readonly whenEmpty: WhenEmpty
  readonly access: IdentityAccess<E>
  readonly breaker: Breaker<Outage>
}

/**
 * Applies the rules once to what the store holds and `remembered`: answers
 * the identity the daemon goes on with (minted or joined, and then
 * remembered in the data directory), or fails with `StoreLost`. The
 * store's calls look past a hold of the breaker.
 */
export const checkIdentity = <E, Outage>(
  options: IdentityOptions<E, Outage>,
  remembered: RememberedIdentity | undefined
): Effect.Effect<string, StoreLost | E> =>
  Effect.gen(function* () {
    const stored = yield* options.breaker.pastHold(options.access.read)
    const verdict = judgeIdentity(stored, remembered?.id, options.whenEmpty)
    const rememberNow = (id: string) => remember(options.dataDir, { kind: options.kind, address: options.address, id })
    switch (verdict._tag) {
      case "same": {
        const id = remembered!.id
        // The same store at a new address (moved, or restored elsewhere): the file names where it is now.
        if (remembered!.address !== options.address || remembered!.kind !== options.kind) rememberNow(id)
        return id
      }
      case "join":
        if (remembered !== undefined)
          yield* Effect.logWarning("store.whenEmpty is start-over: going on with the store's other identity", {
            remembered: remembered.id,
            found: verdict.id
          })
        rememberNow(verdict.id)
        return verdict.id
      case "mint": {
        const id = yield* options.breaker.pastHold(options.access.mint(newIdentity()))
        if (remembered !== undefined)
          yield* Effect.logWarning(
            "store.whenEmpty is start-over: the store came back empty and starts over; tokens issued before stop verifying",
            { remembered: remembered.id, minted: id }
          )
        rememberNow(id)
        return id
      }
      case "lost":
        return yield* new StoreLost({
          kind: options.kind,
          address: options.address,
          remembered: verdict.remembered,
          ...(verdict.found === undefined ? {} : { found: verdict.found }),
          rememberedIn: join(options.dataDir, STORE_IDENTITY_FILE)
        })
    }
  })

/** The check at start: against what the data directory remembers. */
export const checkAtStart = <E, Outage>(options: IdentityOptions<E, Outage>): Effect.Effect<string, StoreLost | E> =>
  Effect.suspend(() => checkIdentity(options, readRemembered(options.dataDir)))

/**
 * Checks the identity every `IDENTITY_POLL_MS` until the scope closes,
 * against the one the daemon started with (not the file, which
 * `campusgate store accept-new` may remove under a running daemon): a lost
 * store holds the breaker open with the reason (said once at error level),
 * and the identity found again releases it. A store that cannot be read
 * meanwhile changes nothing. Answers the same look, to run before acting
 * on a change seen in the store (a configuration reload): true when the
 * store is this deployment's.
 */
export const watchIdentity = <E, Outage>(
  options: IdentityOptions<E, Outage>,
  startedWith: string
): Effect.Effect<Effect.Effect<boolean>, never, Scope.Scope> => {
  let current = startedWith
  const look = Effect.matchEffect(
    Effect.suspend(() => checkIdentity(options, { kind: options.kind, address: options.address, id: current })),
    {
      onSuccess: (id) =>
        Effect.suspend(() => {
          current = id
          if (options.breaker.heldFor() === undefined) return Effect.succeed(true)
          options.breaker.release()
          return Effect.as(
            Effect.logInfo("the store holds this deployment's identity again; store calls go on", {
              store: options.address
            }),
            true
          )
        }),
      onFailure: (error) =>
        Effect.suspend(() => {
          if (!(error instanceof StoreLost)) return Effect.succeed(options.breaker.heldFor() === undefined)
          if (options.breaker.heldFor() === error.message) return Effect.succeed(false)
          options.breaker.hold(error.message)
          return Effect.as(
            Effect.logError("the store was lost or replaced; store calls are refused until it is restored", {
              reason: error.message,
              store: options.address,
              remembered: error.remembered,
              found: error.found ?? null
            }),
            false
          )
        })
    }
  )
  return Effect.gen(function* () {
    // Said in the log of whoever started the watch, whichever fiber looks (the poll, a reload's guard).
    const looked = Effect.provideService(look, Logger.CurrentLoggers, yield* Logger.CurrentLoggers)
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(looked, `${IDENTITY_POLL_MS} millis`), Schedule.forever))
    return looked
  })
}

/** What `accept` did: the identity the data directory now remembers, whether it was minted, and the one it forgot. */
export interface Accepted {
  readonly id: string
  readonly minted: boolean
  readonly forgot: string | undefined
}

/**
 * Adopts the store as it is now, on purpose (`campusgate store
 * accept-new`): its identity, or a new one minted into it when it holds
 * none, becomes the one the data directory remembers. A daemon on another
 * data directory needs the same (a second run adopts what the first minted).
 */
export const accept = <E, Outage>(options: IdentityOptions<E, Outage>): Effect.Effect<Accepted, E> =>
  Effect.gen(function* () {
    const forgot = readRemembered(options.dataDir)?.id
    const stored = yield* options.breaker.pastHold(options.access.read)
    const id = stored ?? (yield* options.breaker.pastHold(options.access.mint(newIdentity())))
    remember(options.dataDir, { kind: options.kind, address: options.address, id })
    return { id, minted: stored === undefined, forgot: forgot === id ? undefined : forgot }
  })
