/**
 * Offer usage statistics as a service: validations are recorded
 * synchronously into memory (`record`, `recordMany`: no I/O, no effect per
 * email) and flushed to the `UsageStore` every `flushIntervalMs` by a
 * background fiber and once more when the layer is released (shutdown).
 * `usage` answers stored + pending, so a read right after a validation sees
 * it.
 *
 * Guarantees:
 * - A failed flush is logged and retried at the next tick, and nothing is
 *   lost or counted twice: a failure may come after the store did the
 *   write (a network store's reply lost as it goes away), so each flush of
 *   an offer's counts is stored once per step of this process's own source
 *   (`applyOnce`), and counts the store did not confirm are sent again as
 *   they were, under their step, before any later ones of that offer.
 * - A crash (SIGKILL, power loss) loses at most what was recorded since
 *   the last completed flush: one interval (default 1 s) plus the time of
 *   one flush. Every stored file is a whole version
 *   (test/stats/crash.test.ts measures both).
 * - Reads and flushes are serialised, so `usage` never misses a delta in
 *   flight to the store, and sees one twice only when the store did the
 *   write but its reply was lost, until the next flush confirms it.
 * - A bulk job counts apart (`tally`): its counts travel in its checkpoints
 *   and are stored once per checkpoint (`applyOnce`), so a job counts each
 *   input exactly once however often the daemon crashes under it.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { HostedFlowStep, OfferUsage, UsageDelta, UsageTally } from "../domain/OfferUsage.ts"
import type { OfferValidationResult } from "../domain/ValidationResult.ts"
import type { HashKey } from "../engine/email/canonicalHash.ts"
import { hashKeyFor, hashKeyFromSecret, randomHashKey } from "./hashKey.ts"
import { UsageRecorder, usageTally } from "./UsageRecorder.ts"
import {
  addUsage,
  emptyUsageState,
  fromUsageDelta,
  toOfferUsage,
  type UsageState,
  type VerificationCountEvent
} from "./UsageState.ts"
import { UsageStore, UsageStoreError } from "./UsageStore.ts"

/** The default of `statistics.flushIntervalMs` in campusgate.yaml. */
export const DEFAULT_FLUSH_INTERVAL_MS = 1000

/**
 * A flush's offers are sent together, this many at once: a network store's
 * client pipelines commands issued together (Redis: one write, one round
 * trip for all), where one offer after another cost a round trip each.
 */
const FLUSH_CONCURRENCY = 64
const together = { concurrency: FLUSH_CONCURRENCY, discard: true } as const

export interface UsageStatisticsOptions {
  /** How often pending counts are written to the store (default 1000 ms). */
  readonly flushIntervalMs?: number | undefined
  /** The unique-email hash key (default: a random one, for memory-only statistics). */
  readonly key?: HashKey | undefined
}

export class UsageStatistics extends Context.Service<
  UsageStatistics,
  {
    /** Counts one validation against an offer. Synchronous, never fails. `at` defaults to the clock's now. */
    record(offerId: string, email: string, result: OfferValidationResult, at?: number): void
    /** Counts a batch (results in the order of `emails`) at one instant. */
    recordMany(
      offerId: string,
      emails: ReadonlyArray<string>,
      results: ReadonlyArray<OfferValidationResult>,
      at?: number
    ): void
    /** Counts one verification event of the offer. Synchronous, never fails. */
    recordVerification(offerId: string, event: VerificationCountEvent): void
    /** Counts one step of a hosted flow of the offer (the hosted page's funnel). Synchronous, never fails. */
    recordHostedFlow(offerId: string, step: HostedFlowStep): void
    /** The offer's statistics: stored plus not yet flushed (empty for an offer never validated). */
    usage(offerId: string): Effect.Effect<OfferUsage, UsageStoreError>
    /** Writes pending counts to the store now; on failure they stay pending. */
    readonly flush: Effect.Effect<void, UsageStoreError>
    /** A tally for one run of a bulk job against `offerId`, with the same unique-email key. */
    tally(offerId: string): UsageTally
    /** The unique-email hash key, for tallies kept on another thread (`usageTally`); undefined when nothing is counted. */
    readonly uniqueEmailKey: HashKey | undefined
    /** Stores `source`'s counts of step `step` unless that step is already stored (`UsageStore.applyOnce`). */
    applyOnce(offerId: string, source: string, step: number, delta: UsageDelta): Effect.Effect<void, UsageStoreError>
    /** Forgets the steps of `source` (a job that is gone); its counts stay. */
    forget(offerId: string, source: string): Effect.Effect<void, UsageStoreError>
  }
>()("campusgate/stats/UsageStatistics") {
  static readonly layer = (options: UsageStatisticsOptions = {}): Layer.Layer<UsageStatistics, never, UsageStore> =>
    Layer.effect(
      UsageStatistics,
      Effect.gen(function* () {
        const store = yield* UsageStore
        const clock = yield* Clock.clockWith(Effect.succeed)
        const key = options.key ?? randomHashKey()
        const recorder = new UsageRecorder(key, () => clock.currentTimeMillisUnsafe())
        const lock = yield* Semaphore.make(1)
        const intervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS

        /** This process's flushes, as one source of steps (`UsageStore.applyOnce`). */
        const source = `flush:${randomUUID()}`
        let lastStep = 0
        /** By offer, the counts last sent that the store did not confirm: perhaps stored, perhaps not. */
        const unconfirmed = new Map<string, { readonly step: number; readonly delta: UsageState }>()
        /** Offers whose counts this process stored: their record of its steps is dropped at shutdown. */
        const flushedOffers = new Set<string>()

        const flush = Effect.gen(function* () {
          if (recorder.isEmpty && unconfirmed.size === 0) return
          let failure: UsageStoreError | undefined
          const send = (offerId: string, sent: { readonly step: number; readonly delta: UsageState }) =>
            store.applyOnce(offerId, source, sent.step, sent.delta).pipe(
              Effect.andThen(() =>
                Effect.sync(() => {
                  unconfirmed.delete(offerId)
                  flushedOffers.add(offerId)
                })
              ),
              Effect.catch((error) => {
                unconfirmed.set(offerId, sent)
                failure ??= error
                return Effect.void
              })
            )
          // First, as they were: a step stored already counts nothing again.
          yield* Effect.forEach([...unconfirmed], ([offerId, sent]) => send(offerId, sent), together)
          const fresh: Array<readonly [string, { readonly step: number; readonly delta: UsageState }]> = []
          for (const [offerId, delta] of recorder.take()) {
            // Later counts of an offer wait behind its unconfirmed ones, or their step would hide these.
            if (unconfirmed.has(offerId)) recorder.restore(offerId, delta)
            else fresh.push([offerId, { step: ++lastStep, delta }])
          }
          yield* Effect.forEach(fresh, ([offerId, sent]) => send(offerId, sent), together)
          if (failure !== undefined) return yield* failure
        }).pipe(Effect.uninterruptible, Semaphore.withPermit(lock), Effect.withSpan("UsageStatistics.flush"))

        const usage = Effect.fn("UsageStatistics.usage")(function* (offerId: string) {
          const stored = yield* store.get(offerId)
          const pending = recorder.pending(offerId)
          // Counted as not stored yet: more than the store holds only if it stored them and the reply was lost.
          const sent = unconfirmed.get(offerId)?.delta
          if (stored === undefined && pending === undefined && sent === undefined) return toOfferUsage(undefined)
          const state = stored ?? emptyUsageState()
          if (sent !== undefined) addUsage(state, sent)
          if (pending !== undefined) addUsage(state, pending)
          return toOfferUsage(state)
        }, Semaphore.withPermit(lock))

        const flushOrLog = (when: string) =>
          flush.pipe(
            Effect.catch((error) =>
              Effect.logWarning("usage statistics flush failed; the counts are kept pending", {
                when,
                error: error.message
              })
            )
          )
        // After the last flush no step of this source comes again: its records would only pile up, one per start.
        const forgetSource = Effect.suspend(() =>
          Effect.forEach(
            [...flushedOffers].filter((offerId) => !unconfirmed.has(offerId)),
            (offerId) => Effect.ignore(store.forget(offerId, source)),
            { discard: true }
          )
        )
        yield* Effect.addFinalizer(() => Effect.andThen(flushOrLog("at shutdown"), forgetSource))
        yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(intervalMs), flushOrLog("on interval"))))

        return UsageStatistics.of({
          record: (offerId, email, result, at) => recorder.record(offerId, email, result, at),
          recordMany: (offerId, emails, results, at) => recorder.recordMany(offerId, emails, results, at),
          recordVerification: (offerId, event) => recorder.recordVerification(offerId, event),
          recordHostedFlow: (offerId, step) => recorder.recordHostedFlow(offerId, step),
          usage,
          flush,
          tally: (offerId) => usageTally(key, offerId),
          uniqueEmailKey: key,
          applyOnce: (offerId, source, step, delta) =>
            Effect.suspend(() => store.applyOnce(offerId, source, step, fromUsageDelta(delta))).pipe(
              Effect.uninterruptible,
              Semaphore.withPermit(lock)
            ),
          forget: (offerId, source) => store.forget(offerId, source).pipe(Semaphore.withPermit(lock))
        })
      })
    )

  /** In memory only (tests, or a library user without a data directory). */
  static readonly layerMemory = (
    options: { readonly flushIntervalMs?: number | undefined; readonly secret?: string | undefined } = {}
  ): Layer.Layer<UsageStatistics> =>
    UsageStatistics.layer({
      flushIntervalMs: options.flushIntervalMs,
      key: options.secret === undefined ? randomHashKey() : hashKeyFromSecret(options.secret)
    }).pipe(Layer.provide(UsageStore.layerMemory))

  /** Persisted under `<dataDir>/stats/`, the hash key from `secret` or the data directory's key file. */
  static readonly layerFile = (options: {
    readonly dataDir: string
    readonly flushIntervalMs?: number | undefined
    readonly secret?: string | undefined
  }): Layer.Layer<UsageStatistics, UsageStoreError> =>
    Layer.unwrap(
      Effect.try({
        try: () => hashKeyFor(options.dataDir, options.secret),
        catch: (cause) => new UsageStoreError({ operation: "load", cause })
      }).pipe(
        Effect.map((key) =>
          UsageStatistics.layer({ flushIntervalMs: options.flushIntervalMs, key }).pipe(
            Layer.provide(UsageStore.layerFiles(options.dataDir))
          )
        )
      )
    )

  /** Statistics switched off (`statistics.enabled: false`): nothing is counted, every offer's usage is empty. */
  static readonly layerOff: Layer.Layer<UsageStatistics> = Layer.succeed(
    UsageStatistics,
    UsageStatistics.of({
      record: () => undefined,
      recordMany: () => undefined,
      recordVerification: () => undefined,
      recordHostedFlow: () => undefined,
      usage: () => Effect.succeed(toOfferUsage(undefined)),
      flush: Effect.void,
      tally: () => ({
        recordMany: () => undefined,
        recordVerdicts: () => undefined,
        take: () => undefined,
        restore: () => undefined,
        takeCounts: () => undefined,
        addCounts: () => undefined
      }),
      uniqueEmailKey: undefined,
      applyOnce: () => Effect.void,
      forget: () => Effect.void
    })
  )
}
