/**
 * The store identity (`store/storeIdentity.ts`) of a shared kind's open
 * connection: where Redis and PostgreSQL keep it (beside the generated
 * secrets), the address the data directory names, and the connection's
 * breaker a lost store holds open. `deployment/stores.ts` checks it before
 * any secret is read (and the daemon watches it); `campusgate store
 * accept-new` adopts a store on purpose through the same options.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import type { StoreSettings } from "../config/Settings.ts"
import { PostgresBreaker, type PostgresConnection, type PostgresOutage } from "../store/postgres.ts"
import { postgresSecret, readPostgresSecret } from "../store/postgresSecret.ts"
import { RedisBreaker, type RedisConnection } from "../store/redis.ts"
import { readRedisSecret, redisSecret } from "../store/redisSecret.ts"
import { addressOf } from "../store/rememberedIdentity.ts"
import {
  checkAtStart,
  type IdentityOptions,
  STORE_IDENTITY_NAME,
  type StoreLost,
  watchIdentity
} from "../store/storeIdentity.ts"

/** The identity of the Redis store `connection` opened (`url` and prefix from `settings`). */
export const redisIdentity = (
  settings: StoreSettings & { readonly url: string },
  dataDir: string,
  connection: Context.Context<RedisConnection>
): IdentityOptions<Redis.RedisError, Redis.RedisError> => ({
  kind: "redis",
  address: addressOf(settings.url, settings.keyPrefix),
  dataDir,
  whenEmpty: settings.whenEmpty,
  access: {
    read: Effect.provide(readRedisSecret(STORE_IDENTITY_NAME), connection),
    mint: (id) =>
      Effect.provide(
        redisSecret(STORE_IDENTITY_NAME, () => id),
        connection
      )
  },
  breaker: Context.get(connection, RedisBreaker)
})

/** The identity of the PostgreSQL database `connection` opened. */
export const postgresIdentity = (
  settings: StoreSettings & { readonly url: string },
  dataDir: string,
  connection: Context.Context<PostgresConnection>
): IdentityOptions<PostgresOutage, PostgresOutage> => ({
  kind: "postgres",
  address: addressOf(settings.url),
  dataDir,
  whenEmpty: settings.whenEmpty,
  access: {
    read: Effect.provide(readPostgresSecret(STORE_IDENTITY_NAME), connection),
    mint: (id) =>
      Effect.provide(
        postgresSecret(STORE_IDENTITY_NAME, () => id),
        connection
      )
  },
  breaker: Context.get(connection, PostgresBreaker)
})

/**
 * The identity checked before anything reads or mints a secret in the
 * store: a lost store fails with `StoreLost`; with `watch`, checked again
 * every `IDENTITY_POLL_MS` while the scope lasts. Answers the look a
 * change seen in the store waits for (true: the store is this
 * deployment's).
 */
export const guardIdentity = <E, Outage>(
  options: IdentityOptions<E, Outage>,
  watch: boolean
): Effect.Effect<Effect.Effect<boolean>, E | StoreLost, Scope.Scope> =>
  Effect.gen(function* () {
    const id = yield* checkAtStart(options)
    return watch ? yield* watchIdentity(options, id) : Effect.succeed(true)
  })
