/**
 * Where verification records live: the port the `Verifications` service
 * uses. A record is inserted once, then replaced whole, each replacement
 * naming the version it was read at (`version + 1`), so two changes to one
 * verification cannot both win — what a shared store (Redis: a WATCHed key
 * or a compare-and-set script) does across daemons. Records are found by id,
 * by the keyed hash of their canonical address (lookups) and all at once
 * (resuming sends at start, the sweeper).
 *
 * The store also keeps the limits of an address (`domain/verificationLimits.ts`):
 * a write may name checks (at most so many units under a key since a
 * time), and the store decides them together with the write, over every
 * record of the address as it would be after it — in one step no other
 * write of the address can come between, in this process and across the
 * processes sharing the store — and refuses the write with
 * `LimitExceeded` when one would break. That is how concurrent starts and
 * confirmations keep the message and redemption limits exactly.
 *
 * Adapters: `layerMemory` (the library without a data directory, tests),
 * `layerFiles(dataDir)` (`verificationJournal.ts`: an fsync'd append-only
 * journal with group commit), `layerRedis` (`verificationRedis.ts`) and
 * `layerPostgres` (`verificationPostgres.ts`). One contract suite
 * (`test/verification/VerificationStore.test.ts`) runs against each.
 * Guarantee of a durable adapter: a change whose effect succeeded survives
 * a crash; a change that failed changed nothing that a reader can see.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { VerificationRecord } from "../domain/Verification.ts"
import { breachOf, type LimitCheck } from "../domain/verificationLimits.ts"
import { markOutage } from "../store/outage.ts"
import { RecordIndex } from "./recordIndex.ts"
import { type JournalLine, openJournal } from "./verificationJournal.ts"

export class VerificationStoreError extends Schema.TaggedError<VerificationStoreError>()("VerificationStoreError", {
  operation: Schema.Literals(["load", "insert", "replace", "remove"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const code = (this.cause as NodeJS.ErrnoException | undefined)?.code
    return `The verification store failed to ${this.operation}${code === undefined ? "" : ` (${code})`}`
  }
}
markOutage(VerificationStoreError)

/** A write that would break one of its limit checks; nothing was written. */
export class LimitExceeded extends Schema.TaggedError<LimitExceeded>()("LimitExceeded", {
  check: Schema.Struct({ key: Schema.String, max: Schema.Number, since: Schema.Number }),
  /** The oldest unit under the key in the check's window: the limit lets one more through once it leaves. */
  oldest: Schema.Number
}) {}

export interface VerificationStoreService {
  /**
   * Whether other processes share the store (Redis): then a message another
   * process has claimed is left to it until the claim lapses. In a store one
   * process owns (files, memory) a claim that is not this process's is a
   * dead process's, taken over at once.
   */
  readonly shared: boolean
  /** Stores a new record (version 0), unless that would break one of `limits`. */
  insert(
    record: VerificationRecord,
    limits?: ReadonlyArray<LimitCheck>
  ): Effect.Effect<void, VerificationStoreError | LimitExceeded>
  /**
   * Replaces the stored record with `record` when the stored one is at
   * `record.version - 1`; answers false (changing nothing) when it is not
   * (another change came first) or is gone. Refuses with `LimitExceeded`
   * (changing nothing) when the replacement would break one of `limits`.
   */
  replace(
    record: VerificationRecord,
    limits?: ReadonlyArray<LimitCheck>
  ): Effect.Effect<boolean, VerificationStoreError | LimitExceeded>
  get(id: string): Effect.Effect<VerificationRecord | undefined>
  /** The records whose canonical address has this keyed hash. */
  byAddress(addressHash: string): Effect.Effect<ReadonlyArray<VerificationRecord>>
  /** Every record. */
  list(): Effect.Effect<ReadonlyArray<VerificationRecord>>
  /**
   * Every record, handed to `use` a page of at most `size` at a time, each
   * once (a backup of 100k records): a network store reads one page at a
   * time, so the caller never holds them all. Records written meanwhile may
   * or may not be seen.
   */
  eachPage<E, R>(
    size: number,
    use: (records: ReadonlyArray<VerificationRecord>) => Effect.Effect<void, E, R>
  ): Effect.Effect<void, E, R>
  /**
   * Stores records as they are, each not stored yet (a restore): no limit
   * checks; a record whose id is stored stays as it is. Answers how many it
   * stored. Written together where the store can (one statement, one group
   * commit), so 100k records restore in seconds.
   */
  insertAll(records: ReadonlyArray<VerificationRecord>): Effect.Effect<number, VerificationStoreError>
  /** Deletes a record (no error when it is gone). */
  remove(id: string): Effect.Effect<void, VerificationStoreError>
}

export class VerificationStore extends Context.Service<VerificationStore, VerificationStoreService>()(
  "campusgate/verification/VerificationStore"
) {
  /** Records in this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<VerificationStore> = Layer.sync(VerificationStore, () =>
    storeOver(new RecordIndex(), () => Effect.void)
  )

  /** Records in `<dataDir>/verifications/journal.ndjson`, loaded at start, every change fsync'd before it counts. */
  static readonly layerFiles = (dataDir: string): Layer.Layer<VerificationStore, VerificationStoreError> =>
    Layer.effect(
      VerificationStore,
      Effect.gen(function* () {
        const journal = yield* Effect.acquireRelease(
          Effect.try({
            try: () => openJournal(dataDir),
            catch: (cause) => new VerificationStoreError({ operation: "load", cause })
          }),
          (journal) => Effect.promise(() => journal.close())
        )
        return storeOver(journal.index, (lines, operation) =>
          Effect.tryPromise({
            try: () => journal.append(lines),
            catch: (cause) => new VerificationStoreError({ operation, cause })
          })
        )
      })
    )
}

/**
 * The adapters' one logic over an index: a change is checked against the
 * latest version (committed or being written) and its limits against the
 * latest versions of the address's records, synchronously with staging it,
 * so no other change comes between; then written by `persist`, and only
 * then visible to readers. A failed write leaves the index as it was.
 */
const storeOver = (
  index: RecordIndex,
  persist: (
    line: JournalLine,
    operation: VerificationStoreError["operation"]
  ) => Effect.Effect<void, VerificationStoreError>
): VerificationStoreService => {
  /** Stages the change now (call it in the same synchronous step as the checks it passed) and writes it. */
  const write = (line: JournalLine, operation: VerificationStoreError["operation"], id: string) => {
    const ticket = index.stage(id, "r" in line ? line.r : undefined)
    return persist(line, operation).pipe(
      Effect.onExit((exit) => Effect.sync(() => (exit._tag === "Success" ? index.commit(ticket) : index.drop(ticket))))
    )
  }
  /** The breach `record` would make of `limits`, with every other record of its address as it is latest. */
  const breach = (record: VerificationRecord, limits: ReadonlyArray<LimitCheck> | undefined) => {
    if (limits === undefined || limits.length === 0) return undefined
    const after = index.latestByAddress(record.addressHash).filter((other) => other.id !== record.id)
    after.push(record)
    const found = breachOf(after, limits)
    return found === undefined ? undefined : new LimitExceeded(found)
  }
  return {
    shared: false,
    insert: (record, limits) =>
      Effect.suspend((): Effect.Effect<void, VerificationStoreError | LimitExceeded> => {
        const refused = breach(record, limits)
        return refused === undefined ? write({ r: record }, "insert", record.id) : Effect.fail(refused)
      }),
    replace: (record, limits) =>
      Effect.suspend((): Effect.Effect<boolean, VerificationStoreError | LimitExceeded> => {
        const latest = index.latest(record.id)
        if (latest === undefined || latest.version !== record.version - 1) return Effect.succeed(false)
        const refused = breach(record, limits)
        if (refused !== undefined) return Effect.fail(refused)
        return Effect.as(write({ r: record }, "replace", record.id), true)
      }),
    insertAll: (records) =>
      Effect.suspend(() => {
        const fresh = records.filter((record) => index.latest(record.id) === undefined)
        // At once: the journal writes them in one group commit.
        return Effect.as(
          Effect.forEach(fresh, (record) => write({ r: record }, "insert", record.id), {
            concurrency: "unbounded",
            discard: true
          }),
          fresh.length
        )
      }),
    get: (id) => Effect.sync(() => index.get(id)),
    byAddress: (addressHash) => Effect.sync(() => index.byAddress(addressHash)),
    list: () => Effect.sync(() => index.all()),
    // In this process's memory already: pages of one snapshot.
    eachPage: (size, use) =>
      Effect.suspend(() => {
        const all = index.all()
        const pages: Array<ReadonlyArray<VerificationRecord>> = []
        for (let start = 0; start < all.length; start += size) pages.push(all.slice(start, start + size))
        return Effect.forEach(pages, use, { discard: true })
      }),
    remove: (id) =>
      Effect.suspend(() => (index.latest(id) === undefined ? Effect.void : write({ d: id }, "remove", id)))
  }
}
