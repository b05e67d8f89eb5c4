/**
 * `campusgate store accept-new`: adopts the shared store (Redis or
 * PostgreSQL, as campusgate.yaml names it) as it is now, on purpose, for
 * a data directory whose daemon refuses it as lost or replaced
 * (`store/storeIdentity.ts`): the store's identity, or a new one minted
 * into an empty store, becomes the one the data directory remembers. The
 * daemons then make new signing keys and secrets (tokens issued before
 * stop verifying, unique-email counts restart); restart them. Run it once
 * for each data directory the daemons use. Prints what it did as one JSON
 * line, the store's address without credentials.
 */
import { resolve } from "node:path"
import * as Console from "effect/Console"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { resolveDataDir } from "../../config/loadConfig.ts"
import { postgresMigrations } from "../../deployment/postgresStores.ts"
import { postgresIdentity, redisIdentity } from "../../deployment/storeIdentity.ts"
import { type StoreConnectionError, storeSettingsOf, tlsMaterialOf } from "../../deployment/stores.ts"
import { redactCredentials } from "../../observability/redact.ts"
import { postgresStoreLayer } from "../../store/postgres.ts"
import { redisStoreLayer } from "../../store/redis.ts"
import { addressOf } from "../../store/rememberedIdentity.ts"
import { type Accepted, accept } from "../../store/storeIdentity.ts"
import { directoryFlags } from "../options.ts"

const failed = (error: unknown) =>
  new CliError.UserError({
    cause: error,
    userMessage: `Nothing was accepted: ${redactCredentials((error as Error).message || String(error))}`
  })

const acceptNew = Command.make("accept-new", directoryFlags, ({ config, data }) =>
  Effect.gen(function* () {
    const settings = storeSettingsOf({ configDir: config })
    const { url } = settings
    if (settings.kind === "files" || url === undefined)
      return yield* Effect.fail(
        new CliError.UserError({
          cause: new Error("files"),
          userMessage:
            "store.kind is files: the data directory is the store, and has no identity to accept. Name a shared store (store.kind: redis or postgres, store.url) first."
        })
      )
    const dataDir = resolveDataDir({ configDir: config, dataDir: Option.getOrUndefined(data) })
    const tls = yield* Effect.mapError(tlsMaterialOf(settings.tls, resolve(config)), failed)
    const acceptance: Effect.Effect<Accepted, StoreConnectionError, Scope.Scope> =
      settings.kind === "redis"
        ? Effect.flatMap(Layer.build(redisStoreLayer({ url, keyPrefix: settings.keyPrefix, tls })), (connection) =>
            accept(redisIdentity({ ...settings, url }, dataDir, connection))
          )
        : Effect.flatMap(Layer.build(postgresStoreLayer({ url, migrations: postgresMigrations, tls })), (connection) =>
            accept(postgresIdentity({ ...settings, url }, dataDir, connection))
          )
    const accepted = yield* Effect.mapError(Effect.scoped(acceptance), failed)
    yield* Console.log(
      JSON.stringify({
        accepted: accepted.id,
        minted: accepted.minted,
        forgot: accepted.forgot ?? null,
        store: addressOf(url, settings.kind === "redis" ? settings.keyPrefix : undefined),
        dataDir
      })
    )
  })
).pipe(
  Command.withDescription(
    "Adopt the shared store as it is now for this data directory (after it came back empty or was replaced on purpose); then restart the daemons"
  )
)

export const storeCommand = Command.make("store").pipe(
  Command.withDescription("The shared store's identity: accept a new or emptied store on purpose"),
  Command.withSubcommands([acceptNew])
)
