/**
 * Where usage statistics persist: a port with a file adapter (the default,
 * `<dataDir>/stats/`), a memory adapter (tests, or a library without a
 * data directory), and a Redis adapter (`usageRedis.ts`) and a PostgreSQL
 * adapter (`usagePostgres.ts`) shared by several daemons. Its write is adding a delta to an offer's counters —
 * what a Redis adapter would do with HINCRBY for the counters and a
 * register merge for the unique count, so several replicas can share one
 * store — either as is (`apply`, a migration's copy) or once per step of a
 * source (`applyOnce`: a job's checkpoints, and each process's flushes of
 * recorded counts; the store remembers the last step of each source with the
 * counters, so a delta stored again after a crash or a lost reply is not
 * counted twice). Both are atomic per offer. A failure says nothing was
 * stored only where the store can know it: a network store's reply can be
 * lost after it did the write, so callers that retry use `applyOnce`.
 */

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { markOutage } from "../store/outage.ts"
import { addUsage, copyUsage, emptyUsageState, type UsageState } from "./UsageState.ts"
import { readUsageFiles, type StoredUsage, writeUsageFile } from "./usageFiles.ts"

export class UsageStoreError extends Schema.TaggedError<UsageStoreError>()("UsageStoreError", {
  operation: Schema.Literals(["load", "apply", "get", "forget"]),
  offerId: Schema.optionalKey(Schema.String),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const what = this.offerId === undefined ? "" : ` for offer "${this.offerId}"`
    return `Usage statistics ${this.operation}${what} failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(UsageStoreError)

export class UsageStore extends Context.Service<
  UsageStore,
  {
    /** Adds `delta` to the offer's stored counters (atomic per offer). */
    apply(offerId: string, delta: UsageState): Effect.Effect<void, UsageStoreError>
    /**
     * Adds `delta` unless `source`'s step `step` (or a later one) is already
     * stored, and remembers `step` with the counters, atomically: applying
     * the same step again changes nothing.
     */
    applyOnce(offerId: string, source: string, step: number, delta: UsageState): Effect.Effect<void, UsageStoreError>
    /** Forgets the steps of `source` (a job that is gone); its counts stay. */
    forget(offerId: string, source: string): Effect.Effect<void, UsageStoreError>
    /** A copy of the offer's stored counters; undefined when nothing is stored. */
    get(offerId: string): Effect.Effect<UsageState | undefined, UsageStoreError>
    /** The offers with stored counters. */
    offerIds(): Effect.Effect<ReadonlyArray<string>, UsageStoreError>
    /** The last step stored of each source the offer's counters were applied once from (what a backup copies). */
    applied(offerId: string): Effect.Effect<ReadonlyMap<string, number>, UsageStoreError>
  }
>()("campusgate/stats/UsageStore") {
  /** Counters in memory only: lost when the process ends. */
  static readonly layerMemory: Layer.Layer<UsageStore> = Layer.effect(
    UsageStore,
    Effect.suspend(() => storeOver(new Map(), undefined))
  )

  /**
   * One JSON file per offer under `<dataDir>/stats/`, loaded at start and
   * kept in memory; each write rewrites the offer's file atomically and
   * durably (temp file, fsync, rename) before the new counters count as
   * stored, on libuv's pool: an offer job stores its usage at each of its
   * checkpoints (40 per 1M emails), and the two fsyncs held the request
   * thread, and every request waiting on it, 2-3 ms each time.
   */
  static readonly layerFiles = (dataDir: string): Layer.Layer<UsageStore, UsageStoreError> =>
    Layer.effect(
      UsageStore,
      Effect.flatMap(
        Effect.try({
          try: () => readUsageFiles(dataDir),
          catch: (cause) => new UsageStoreError({ operation: "load", cause })
        }),
        (offers) => storeOver(offers, (offerId, stored) => writeUsageFile(dataDir, offerId, stored))
      )
    )
}

/**
 * The adapters' one logic: offers in memory, each change computed on a
 * copy, persisted by `persist` (a promise that rejects on failure; none
 * keeps nothing), and only then installed — so a failed write changes
 * nothing. Changes are made one at a time, so that one persisting does not
 * hide another's from the next, and a change once persisting is installed
 * even if its caller is interrupted meanwhile.
 */
const storeOver = Effect.fnUntraced(function* (
  offers: Map<string, StoredUsage>,
  persist: ((offerId: string, stored: StoredUsage) => Promise<void>) | undefined
) {
  const lock = yield* Semaphore.make(1)
  const change = (
    operation: UsageStoreError["operation"],
    offerId: string,
    next: (current: StoredUsage) => StoredUsage | undefined
  ): Effect.Effect<void, UsageStoreError> =>
    Effect.try({
      try: () => next(offers.get(offerId) ?? { state: emptyUsageState(), applied: new Map<string, number>() }),
      catch: (cause) => new UsageStoreError({ operation, offerId, cause })
    }).pipe(
      Effect.flatMap((changed) => {
        if (changed === undefined) return Effect.void
        const install = () => void offers.set(offerId, changed)
        if (persist === undefined) return Effect.sync(install)
        return Effect.tryPromise({
          try: () => persist(offerId, changed),
          catch: (cause) => new UsageStoreError({ operation, offerId, cause })
        }).pipe(Effect.tap(() => Effect.sync(install)))
      }),
      Effect.uninterruptible,
      Semaphore.withPermit(lock)
    )
  return UsageStore.of({
    apply: (offerId, delta) =>
      change("apply", offerId, (current) => ({
        state: addUsage(copyUsage(current.state), delta),
        applied: current.applied
      })),
    applyOnce: (offerId, source, step, delta) =>
      change("apply", offerId, (current) => {
        const stored = current.applied.get(source)
        if (stored !== undefined && stored >= step) return undefined
        return {
          state: addUsage(copyUsage(current.state), delta),
          applied: new Map(current.applied).set(source, step)
        }
      }),
    forget: (offerId, source) =>
      change("forget", offerId, (current) => {
        if (!current.applied.has(source)) return undefined
        const applied = new Map(current.applied)
        applied.delete(source)
        return { state: current.state, applied }
      }),
    get: (offerId) => Effect.sync(() => cloneOrUndefined(offers.get(offerId)?.state)),
    offerIds: () => Effect.sync(() => [...offers.keys()]),
    applied: (offerId) => Effect.sync(() => new Map(offers.get(offerId)?.applied ?? []))
  })
})

const cloneOrUndefined = (state: UsageState | undefined): UsageState | undefined =>
  state === undefined ? undefined : copyUsage(state)
