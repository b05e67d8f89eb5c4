/**
 * The one copy mechanism behind `campusgate migrate`, `backup` and
 * `restore`: entries read from a store's ports (`readStore.ts`) or from an
 * archive (`archive.ts`), written into a store's ports (`writeStore.ts`)
 * or into an archive. Any kind to any kind: files, Redis, PostgreSQL.
 *
 * Guarantees: a copy into a store goes only into one that holds no records
 * (`holdsData`), unless told to keep what it holds; a restore reads the
 * whole archive first — every line decoded, the passphrase checked, the
 * counts matched — so a damaged, truncated or foreign archive, or a wrong
 * passphrase, restores nothing; a copy that stops says what it wrote
 * (`CopyStopped`).
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { type ArchiveRead, archiveWriter, readArchive } from "./archive.ts"
import { type JobsCopied, portsOf, readStore } from "./readStore.ts"
import type { Counts } from "./storeEntries.ts"
import type { OpenedStore } from "./storeKinds.ts"
import { holdsData, storeWriter } from "./writeStore.ts"

/** The target store holds records: a copy would mix them (and count statistics twice). */
export class StoreNotEmpty extends Error {
  readonly part: string
  constructor(where: string, part: string, hint: string) {
    super(`${where} already holds data (${part}); ${hint}`)
    this.part = part
  }
}

/** A copy into a store stopped part way: what failed, and what was written before. */
export class CopyStopped extends Error {
  readonly written: Counts
  override readonly cause: unknown
  constructor(what: string, written: Counts, cause: unknown) {
    const written_ = Object.entries(written)
      .filter(([, n]) => n > 0)
      .map(([part, n]) => `${part} ${n}`)
      .join(", ")
    super(
      `${what}: ${cause instanceof Error ? cause.message : String(cause)}. Written before it stopped: ${written_ === "" ? "nothing" : written_}`
    )
    this.written = written
    this.cause = cause
  }
}

const ensureEmpty = (target: OpenedStore, ports: Effect.Success<ReturnType<typeof portsOf>>, hint: string) =>
  Effect.flatMap(holdsData(ports), (part) =>
    part === undefined ? Effect.void : Effect.fail(new StoreNotEmpty(target.where, part, hint))
  )

/** Copies every record of `source` (jobs too) into `target`, which must hold none. */
export const migrateStore = (source: OpenedStore, target: OpenedStore) =>
  Effect.scoped(
    Effect.gen(function* () {
      const ports = yield* portsOf(target)
      yield* ensureEmpty(target, ports, "migrate into an empty store, with the daemons stopped")
      const writer = storeWriter(target, ports, { keepExisting: false, copyId: randomBytes(12).toString("hex") })
      yield* readStore(source, "all", writer.put).pipe(
        Effect.andThen(writer.end),
        Effect.mapError((cause) => new CopyStopped("The migration stopped", writer.written(), cause))
      )
      return writer.written()
    })
  )

/** Writes every record of `store` into the archive `file`: finished jobs with `jobs`, secrets sealed with `passphrase`. */
export const backupStore = (
  store: OpenedStore,
  file: string,
  options: { readonly jobs: boolean; readonly passphrase: string }
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const jobs: JobsCopied = options.jobs ? "finished" : "none"
      const writer = yield* archiveWriter(file, {
        kind: store.kind,
        jobs: jobs,
        passphrase: options.passphrase
      })
      yield* readStore(store, jobs, writer.put)
      return yield* writer.end
    })
  )

/**
 * Restores the archive `file` into `store`: read through once to check it
 * whole, then written. `keepExisting`: into a store holding data, keeping
 * what it holds under the same ids (the way to finish a restore that stopped).
 */
export const restoreStore = (
  store: OpenedStore,
  file: string,
  options: { readonly passphrase: string; readonly keepExisting: boolean }
): Effect.Effect<ArchiveRead & { readonly written: Counts }, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { header, open } = yield* readArchive(file, options.passphrase, () => Effect.void)
      const ports = yield* portsOf(store)
      if (!options.keepExisting) {
        yield* ensureEmpty(
          store,
          ports,
          "restore into an emptied store, or with --force to keep what it holds and add the rest"
        )
      }
      const writer = storeWriter(store, ports, { keepExisting: options.keepExisting, copyId: header.id })
      let line = 0
      const read = yield* readArchive(file, open, (entry, at) => {
        line = at
        return writer.put(entry)
      }).pipe(
        Effect.tap(() => writer.end),
        Effect.mapError(
          (cause) => new CopyStopped(`The restore stopped at line ${line} of ${file}`, writer.written(), cause)
        )
      )
      return { ...read, written: writer.written() }
    })
  )
