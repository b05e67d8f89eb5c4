/**
 * `campusgate migrate --from files|redis|postgres --to files|redis|postgres`:
 * moves a deployment's state from one store kind into the store
 * campusgate.yaml (or CAMPUSGATE_REDIS_URL, CAMPUSGATE_DATABASE_URL) names,
 * which must be of the `--to` kind — before the daemons start on it
 * (`cli/copy/copyStore.ts`). The source: the data directory (`files`), or
 * the server `--from-url` names (Redis under `--from-prefix`). It refuses
 * a target holding records, and a copy onto itself. Prints what was moved
 * as one JSON line, every URL without its password.
 */
import * as Console from "effect/Console"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { redactCredentials } from "../../observability/redact.ts"
import { migrateStore } from "../copy/copyStore.ts"
import {
  deploymentSpec,
  directoriesOf,
  openStoreOf,
  type StoreKind,
  type StoreSpec,
  sameStore
} from "../copy/storeKinds.ts"
import { directoryFlags } from "../options.ts"

const KINDS: ReadonlyArray<StoreKind> = ["files", "redis", "postgres"]

export const userError = (userMessage: string, cause: unknown = new Error(userMessage)) =>
  Effect.fail(new CliError.UserError({ cause, userMessage: redactCredentials(userMessage) }))

/** A failure as the operator reads it: its message, every URL's password hidden. */
export const failedWith = (prefix: string) => (error: unknown) =>
  new CliError.UserError({
    cause: error,
    userMessage: redactCredentials(`${prefix}${(error as Error)?.message || String(error)}`)
  })

export const migrateCommand = Command.make(
  "migrate",
  {
    ...directoryFlags,
    from: Flag.String("from").pipe(
      Flag.withDescription("Where the state is now: files (the data directory), redis or postgres (--from-url)")
    ),
    fromUrl: Flag.String("from-url").pipe(
      Flag.withDescription("The Redis or PostgreSQL server the state is in now (with --from redis|postgres)"),
      Flag.optional
    ),
    fromPrefix: Flag.String("from-prefix").pipe(
      Flag.withDescription("The Redis key prefix the state is under now (default campusgate:)"),
      Flag.withDefault("campusgate:")
    ),
    to: Flag.String("to").pipe(
      Flag.withDescription(
        "Where it goes: the store campusgate.yaml names — files, redis (store.url or CAMPUSGATE_REDIS_URL) or postgres (store.url or CAMPUSGATE_DATABASE_URL)"
      )
    )
  },
  ({ config, data, from, fromUrl, fromPrefix, to }) =>
    Effect.gen(function* () {
      if (!KINDS.includes(from as StoreKind) || !KINDS.includes(to as StoreKind)) {
        return yield* userError(`--from and --to take files, redis or postgres, not --from ${from} --to ${to}.`)
      }
      const location = { configDir: config, dataDir: Option.getOrUndefined(data) }
      const directories = directoriesOf(location)
      const targetSpec = yield* Effect.mapError(deploymentSpec(location), failedWith("Nothing was moved: "))
      if (targetSpec.kind !== to) {
        return yield* userError(
          to === "files"
            ? "campusgate.yaml names a shared store: migrate --to files with store.kind: files."
            : to === "redis"
              ? "Name the Redis server: store.kind: redis and store.url in campusgate.yaml, or CAMPUSGATE_REDIS_URL."
              : "Name the database: store.kind: postgres and store.url in campusgate.yaml, or CAMPUSGATE_DATABASE_URL."
        )
      }
      const url = Option.getOrUndefined(fromUrl)
      if (from !== "files" && url === undefined) {
        return yield* userError(`Name the ${from} server the state is in now: --from-url URL.`)
      }
      const tls = "tls" in targetSpec ? targetSpec.tls : undefined
      const sourceSpec: StoreSpec =
        from === "files"
          ? { kind: "files" }
          : from === "redis"
            ? { kind: "redis", url: url!, keyPrefix: fromPrefix, tls }
            : { kind: "postgres", url: url!, tls }
      if (sameStore(sourceSpec, targetSpec, directories, directories)) {
        return yield* userError("--from and --to name the same store: there is nothing to move.")
      }
      const moved = yield* Effect.scoped(
        Effect.gen(function* () {
          const source = yield* openStoreOf(sourceSpec, directories)
          const target = yield* openStoreOf(targetSpec, directories)
          const migrated = yield* migrateStore(source, target)
          return { migrated, from: source.where, to: target.where }
        })
      ).pipe(Effect.mapError(failedWith("")))
      yield* Console.log(JSON.stringify(moved))
    })
).pipe(
  Command.withDescription(
    "Move a deployment's keys, resources, statistics, verifications, reviews, secrets and jobs from one store kind into the one campusgate.yaml names"
  )
)
