/**
 * Where usage statistics persist: a port with a file adapter (the default,
 * `<dataDir>/stats/`) and a memory adapter (tests, or a library without a
 * data directory). Its one write is `apply`: add a delta to an offer's
 * counters — what a Redis adapter would do with HINCRBY for the counters
 * and a register merge for the unique count, so several replicas can share
 * one store. `apply` is atomic per offer: after a failure nothing of that
 * delta is stored and the caller may apply it again.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { addUsage, copyUsage, emptyUsageState, type UsageState } from "./UsageState.ts"
import { readUsageFiles, writeUsageFile } from "./usageFiles.ts"

export class UsageStoreError extends Schema.TaggedError<UsageStoreError>()("UsageStoreError", {
  operation: Schema.Literals(["load", "apply", "get"]),
  offerId: Schema.optionalKey(Schema.String),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const what = this.offerId === undefined ? "" : ` for offer "${this.offerId}"`
    return `Usage statistics ${this.operation}${what} failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

export class UsageStore extends Context.Service<
  UsageStore,
  {
    /** Adds `delta` to the offer's stored counters (atomic per offer). */
    apply(offerId: string, delta: UsageState): Effect.Effect<void, UsageStoreError>
    /** A copy of the offer's stored counters; undefined when nothing is stored. */
    get(offerId: string): Effect.Effect<UsageState | undefined, UsageStoreError>
    /** The offers with stored counters. */
    offerIds(): Effect.Effect<ReadonlyArray<string>, UsageStoreError>
  }
>()("campusgate/stats/UsageStore") {
  /** Counters in memory only: lost when the process ends. */
  static readonly layerMemory: Layer.Layer<UsageStore> = Layer.sync(UsageStore, () => {
    const states = new Map<string, UsageState>()
    return UsageStore.of({
      apply: (offerId, delta) =>
        Effect.sync(() => {
          states.set(offerId, addUsage(copyUsage(states.get(offerId) ?? emptyUsageState()), delta))
        }),
      get: (offerId) => Effect.sync(() => cloneOrUndefined(states.get(offerId))),
      offerIds: () => Effect.sync(() => [...states.keys()])
    })
  })

  /**
   * One JSON file per offer under `<dataDir>/stats/`, loaded at start and
   * kept in memory; each `apply` rewrites the offer's file atomically and
   * durably (temp file, fsync, rename) before the new counters count as stored.
   */
  static readonly layerFile = (dataDir: string): Layer.Layer<UsageStore, UsageStoreError> =>
    Layer.effect(
      UsageStore,
      Effect.gen(function* () {
        const states = yield* Effect.try({
          try: () => readUsageFiles(dataDir),
          catch: (cause) => new UsageStoreError({ operation: "load", cause })
        })
        const apply = (offerId: string, delta: UsageState) =>
          Effect.try({
            try: () => {
              const next = addUsage(copyUsage(states.get(offerId) ?? emptyUsageState()), delta)
              writeUsageFile(dataDir, offerId, next)
              states.set(offerId, next)
            },
            catch: (cause) => new UsageStoreError({ operation: "apply", offerId, cause })
          })
        return UsageStore.of({
          apply,
          get: (offerId) => Effect.sync(() => cloneOrUndefined(states.get(offerId))),
          offerIds: () => Effect.sync(() => [...states.keys()])
        })
      })
    )
}

const cloneOrUndefined = (state: UsageState | undefined): UsageState | undefined =>
  state === undefined ? undefined : copyUsage(state)
