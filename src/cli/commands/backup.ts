/**
 * `campusgate backup --to FILE` and `campusgate restore --from FILE`: the
 * deployment's store (whatever kind campusgate.yaml names) into one
 * portable archive and back (`cli/copy/archive.ts`, `copyStore.ts`), so a
 * backup of one kind restores into any other. Secrets and signing keys are
 * sealed with a passphrase: `--passphrase-file FILE`, else
 * CAMPUSGATE_BACKUP_PASSPHRASE. Finished jobs travel with `--jobs`.
 * `restore` refuses a store holding records unless `--force`, which keeps
 * what the store holds and adds the rest (the way to finish a restore that
 * stopped). Each prints one JSON line; URLs without their passwords. With
 * `store.kind: files` the daemon must be stopped: opening the data
 * directory's stores compacts the verification journal and sweeps staged
 * uploads, which would pull them from under a running daemon.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import * as Console from "effect/Console"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { backupStore, restoreStore } from "../copy/copyStore.ts"
import { MIN_PASSPHRASE } from "../copy/sealing.ts"
import { deploymentSpec, directoriesOf, openStoreOf } from "../copy/storeKinds.ts"
import { directoryFlags } from "../options.ts"
import { failedWith, userError } from "./migrate.ts"

const PASSPHRASE_VARIABLE = "CAMPUSGATE_BACKUP_PASSPHRASE"

const passphraseFileFlag = Flag.String("passphrase-file").pipe(
  Flag.withDescription(`A file holding the passphrase that seals the secrets (else env ${PASSPHRASE_VARIABLE})`),
  Flag.withMetavar("FILE"),
  Flag.optional
)

/** The passphrase: the file's first line, else the environment's; at least `MIN_PASSPHRASE` characters to seal. */
const passphraseOf = (file: Option.Option<string>, sealing: boolean) =>
  Effect.gen(function* () {
    const fromFile = Option.getOrUndefined(file)
    const passphrase =
      fromFile === undefined
        ? process.env[PASSPHRASE_VARIABLE]
        : yield* Effect.try({
            try: () => readFileSync(resolve(fromFile), "utf8").split(/\r?\n/)[0]!,
            catch: (error) => error
          }).pipe(
            Effect.catch((error) =>
              userError(`Cannot read the passphrase file ${fromFile}: ${(error as Error).message}`)
            )
          )
    if (passphrase === undefined || passphrase === "") {
      return yield* userError(`Give the passphrase: --passphrase-file FILE, or ${PASSPHRASE_VARIABLE}.`)
    }
    if (sealing && passphrase.length < MIN_PASSPHRASE) {
      return yield* userError(`The passphrase must be at least ${MIN_PASSPHRASE} characters: it seals the secrets.`)
    }
    return passphrase
  })

export const backupCommand = Command.make(
  "backup",
  {
    ...directoryFlags,
    to: Flag.String("to").pipe(
      Flag.withDescription("The archive to write (replaced whole once written)"),
      Flag.withMetavar("FILE")
    ),
    jobs: Flag.Boolean("jobs").pipe(
      Flag.withDescription("Include finished jobs, with their input and results"),
      Flag.withDefault(false)
    ),
    passphraseFile: passphraseFileFlag
  },
  ({ config, data, to, jobs, passphraseFile }) =>
    Effect.gen(function* () {
      const passphrase = yield* passphraseOf(passphraseFile, true)
      const location = { configDir: config, dataDir: Option.getOrUndefined(data) }
      const started = Date.now()
      const made = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* openStoreOf(yield* deploymentSpec(location), directoriesOf(location))
          const written = yield* backupStore(store, resolve(to), { jobs, passphrase })
          return { backedUp: written.counts, bytes: written.bytes, from: store.where }
        })
      ).pipe(Effect.mapError(failedWith("No backup was written: ")))
      yield* Console.log(JSON.stringify({ ...made, to: resolve(to), seconds: (Date.now() - started) / 1000 }))
    })
).pipe(
  Command.withDescription(
    "Write the store's keys, resources, statistics, verifications, reviews, sealed secrets and signing keys (and finished jobs) to one archive (with store.kind: files, stop the daemon first: it owns the data directory)"
  )
)

export const restoreCommand = Command.make(
  "restore",
  {
    ...directoryFlags,
    from: Flag.String("from").pipe(
      Flag.withDescription("The archive `campusgate backup` wrote"),
      Flag.withMetavar("FILE")
    ),
    force: Flag.Boolean("force").pipe(
      Flag.withDescription(
        "Restore into a store that holds records: what it holds under the same ids stays, the rest is added"
      ),
      Flag.withDefault(false)
    ),
    passphraseFile: passphraseFileFlag
  },
  ({ config, data, from, force, passphraseFile }) =>
    Effect.gen(function* () {
      const passphrase = yield* passphraseOf(passphraseFile, false)
      const location = { configDir: config, dataDir: Option.getOrUndefined(data) }
      const started = Date.now()
      const restored = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* openStoreOf(yield* deploymentSpec(location), directoriesOf(location))
          const read = yield* restoreStore(store, resolve(from), { passphrase, keepExisting: force })
          return {
            restored: read.written,
            archive: { kind: read.header.kind, createdAt: read.header.createdAt, campusgate: read.header.campusgate },
            to: store.where
          }
        })
      ).pipe(Effect.mapError(failedWith("")))
      yield* Console.log(JSON.stringify({ ...restored, from: resolve(from), seconds: (Date.now() - started) / 1000 }))
    })
).pipe(
  Command.withDescription(
    "Restore an archive `campusgate backup` wrote into the store campusgate.yaml names (with store.kind: files, the daemon stopped; after another deployment's archive, restart the daemons: they read the secrets at start)"
  )
)
