import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import { toOfferUsage } from "../../src/stats/UsageState.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { UsageStore, UsageStoreError } from "../../src/stats/UsageStore.ts"
import { captureLog } from "../observability/logCapture.ts"
import { eligible, ineligible } from "./fixtures.ts"

const withMemoryStore = UsageStatistics.layer({ flushIntervalMs: 1000 }).pipe(
  Layer.provideMerge(UsageStore.layerMemory)
)

/** A memory store whose writes fail while `down.value` is true. */
const flakyStore = (down: { value: boolean }) =>
  Layer.effect(
    UsageStore,
    Effect.gen(function* () {
      const memory = yield* UsageStore
      const refused = (offerId: string) =>
        Effect.fail(new UsageStoreError({ operation: "apply", offerId, cause: new Error("disk full") }))
      return UsageStore.of({
        ...memory,
        apply: (offerId, delta) => (down.value ? refused(offerId) : memory.apply(offerId, delta)),
        applyOnce: (offerId, source, step, delta) =>
          down.value ? refused(offerId) : memory.applyOnce(offerId, source, step, delta)
      })
    })
  ).pipe(Layer.provide(UsageStore.layerMemory))

/**
 * A memory store whose next write is stored and then reported failed while
 * `lose.next` is true: a reply lost as a network store goes away, after it
 * did the write. While `lose.down` is true, writes fail and store nothing.
 */
const lostReplyStore = (lose: { next: boolean; down: boolean }) =>
  Layer.effect(
    UsageStore,
    Effect.gen(function* () {
      const memory = yield* UsageStore
      const replyLost = (offerId: string, write: Effect.Effect<void, UsageStoreError>) =>
        lose.down
          ? Effect.fail(new UsageStoreError({ operation: "apply", offerId, cause: new Error("connection refused") }))
          : Effect.andThen(write, () => {
              if (!lose.next) return Effect.void
              lose.next = false
              return Effect.fail(
                new UsageStoreError({ operation: "apply", offerId, cause: new Error("connection closed") })
              )
            })
      return UsageStore.of({
        ...memory,
        apply: (offerId, delta) => replyLost(offerId, memory.apply(offerId, delta)),
        applyOnce: (offerId, source, step, delta) => replyLost(offerId, memory.applyOnce(offerId, source, step, delta))
      })
    })
  ).pipe(Layer.provide(UsageStore.layerMemory))

const stored = (offerId: string) =>
  Effect.gen(function* () {
    const store = yield* UsageStore
    return toOfferUsage(yield* store.get(offerId)).validations
  })

describe("UsageStatistics", () => {
  it.effect("answers pending counts at once and stores them each interval", () =>
    Effect.gen(function* () {
      const stats = yield* UsageStatistics
      stats.record("o", "a@x.edu", eligible("a@x.edu"))
      stats.recordMany("o", ["b@x.edu", "c@x.edu"], [eligible("b@x.edu"), ineligible("c@x.edu", "DOMAIN_DENIED")])
      expect(yield* stats.usage("o")).toMatchObject({ validations: 3, eligible: 2, uniqueEmails: { estimate: 3 } })
      expect(yield* stored("o")).toBe(0)
      yield* TestClock.adjust(999)
      expect(yield* stored("o")).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* stored("o")).toBe(3)
      stats.record("o", "a@x.edu", eligible("a@x.edu"))
      expect(yield* stats.usage("o")).toMatchObject({ validations: 4, uniqueEmails: { estimate: 3 } })
      yield* TestClock.adjust(1000)
      expect(yield* stored("o")).toBe(4)
      expect((yield* stats.usage("never")).validations).toBe(0)
    }).pipe(Effect.provide(withMemoryStore))
  )

  it.effect("stamps validations with the clock's time", () =>
    Effect.gen(function* () {
      // Set before the layer starts its flush fiber, which would otherwise tick through every second since 1970.
      yield* TestClock.setTime(Date.UTC(2025, 0, 31, 23, 59))
      const usage = yield* Effect.gen(function* () {
        const stats = yield* UsageStatistics
        stats.record("o", "a@x.edu", eligible("a@x.edu"))
        return yield* stats.usage("o")
      }).pipe(Effect.provide(withMemoryStore))
      expect(usage.lastValidatedAt).toBe("2025-01-31T23:59:00.000Z")
      expect(usage.daily).toEqual([{ date: "2025-01-31", validations: 1, eligible: 1, ineligible: 0 }])
    })
  )

  it.effect("keeps counts pending through a failing store and stores them once it recovers", () => {
    const down = { value: true }
    return Effect.gen(function* () {
      const stats = yield* UsageStatistics
      stats.record("o", "a@x.edu", eligible("a@x.edu"))
      yield* TestClock.adjust(1000)
      expect(yield* stored("o")).toBe(0)
      stats.record("o", "b@x.edu", eligible("b@x.edu"))
      const failed = yield* Effect.flip(stats.flush)
      expect(failed).toBeInstanceOf(UsageStoreError)
      expect(yield* stats.usage("o")).toMatchObject({ validations: 2 })
      down.value = false
      yield* TestClock.adjust(1000)
      expect(yield* stored("o")).toBe(2)
      expect(yield* stats.usage("o")).toMatchObject({ validations: 2, uniqueEmails: { estimate: 2 } })
    }).pipe(Effect.provide(UsageStatistics.layer({ flushIntervalMs: 1000 }).pipe(Layer.provideMerge(flakyStore(down)))))
  })

  it.effect("counts a flush whose reply was lost once: what was sent is sent again as it was, and stored once", () => {
    const lose = { next: true, down: false }
    return Effect.gen(function* () {
      const stats = yield* UsageStatistics
      stats.record("o", "a@x.edu", eligible("a@x.edu"))
      expect(yield* Effect.flip(stats.flush)).toBeInstanceOf(UsageStoreError)
      // The store is down now: what was sent stays unconfirmed, and later counts wait behind it.
      lose.down = true
      stats.record("o", "b@x.edu", eligible("b@x.edu"))
      expect(yield* Effect.flip(stats.flush)).toBeInstanceOf(UsageStoreError)
      expect(yield* stored("o")).toBe(1)
      lose.down = false
      yield* stats.flush
      expect(yield* stored("o")).toBe(2)
      expect(yield* stats.usage("o")).toMatchObject({ validations: 2, uniqueEmails: { estimate: 2 } })
    }).pipe(
      Effect.provide(UsageStatistics.layer({ flushIntervalMs: 60_000 }).pipe(Layer.provideMerge(lostReplyStore(lose))))
    )
  })

  it.effect("sends a flush's offers together: one store round trip for all, not one per offer", () => {
    // A network store: each write answers 50 ms after it was sent.
    const slow = Layer.effect(
      UsageStore,
      Effect.gen(function* () {
        const memory = yield* UsageStore
        return UsageStore.of({
          ...memory,
          applyOnce: (offerId, source, step, delta) =>
            Effect.andThen(Effect.sleep(50), memory.applyOnce(offerId, source, step, delta))
        })
      })
    ).pipe(Layer.provide(UsageStore.layerMemory))
    return Effect.gen(function* () {
      const stats = yield* UsageStatistics
      const offers = Array.from({ length: 20 }, (_, i) => `o${i}`)
      for (const offerId of offers) stats.record(offerId, "a@x.edu", eligible("a@x.edu"))
      const flushing = yield* Effect.forkChild(stats.flush)
      yield* TestClock.adjust(50)
      expect((yield* Effect.forEach(offers, stored)).every((validations) => validations === 1)).toBe(true)
      expect(flushing.pollUnsafe()).toBeDefined()
    }).pipe(Effect.provide(UsageStatistics.layer({ flushIntervalMs: 60_000 }).pipe(Layer.provideMerge(slow))))
  })

  it.effect("stores its flushes as steps of its own source, and drops that source's record at shutdown", () => {
    const calls: Array<string> = []
    const recording = Layer.effect(
      UsageStore,
      Effect.gen(function* () {
        const memory = yield* UsageStore
        return UsageStore.of({
          ...memory,
          applyOnce: (offerId, source, step, delta) => {
            calls.push(`applyOnce ${offerId} ${source.slice(0, 6)} ${step}`)
            return memory.applyOnce(offerId, source, step, delta)
          },
          forget: (offerId, source) => {
            calls.push(`forget ${offerId} ${source.slice(0, 6)}`)
            return memory.forget(offerId, source)
          }
        })
      })
    ).pipe(Layer.provide(UsageStore.layerMemory))
    return Effect.gen(function* () {
      const scope = yield* Scope.make()
      const layer = UsageStatistics.layer({ flushIntervalMs: 60_000 }).pipe(Layer.provide(recording))
      const stats = Context.get(yield* Layer.buildWithScope(layer, scope), UsageStatistics)
      stats.record("o", "a@x.edu", eligible("a@x.edu"))
      yield* stats.flush
      stats.record("o", "b@x.edu", eligible("b@x.edu"))
      stats.record("p", "c@x.edu", eligible("c@x.edu"))
      yield* Scope.close(scope, Exit.void)
      expect(calls).toEqual([
        "applyOnce o flush: 1",
        "applyOnce o flush: 2",
        "applyOnce p flush: 3",
        "forget o flush:",
        "forget p flush:"
      ])
    })
  })

  it.effect("logs a failed flush, on the interval and at shutdown, as a warning", () => {
    const down = { value: true }
    const log = captureLog()
    return Effect.gen(function* () {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        UsageStatistics.layer({ flushIntervalMs: 1000 }).pipe(
          Layer.provideMerge(flakyStore(down)),
          Layer.provide(log.layer)
        ),
        scope
      )
      Context.get(context, UsageStatistics).record("o", "a@x.edu", eligible("a@x.edu"))
      yield* TestClock.adjust(1000)
      yield* Scope.close(scope, Exit.void)
      expect(log.lines()).toEqual([
        expect.objectContaining({
          level: "warn",
          msg: "usage statistics flush failed; the counts are kept pending",
          when: "on interval"
        }),
        expect.objectContaining({ level: "warn", when: "at shutdown", error: expect.stringContaining("disk full") })
      ])
    })
  })

  it.effect("flushes at shutdown, and a restart on the same data directory sees every count", () =>
    Effect.gen(function* () {
      const dataDir = mkdtempSync(join(tmpdir(), "campusgate-stats-"))
      const layer = UsageStatistics.layerFile({ dataDir, flushIntervalMs: 60_000 })
      const scope = yield* Scope.make()
      const first = Context.get(yield* Layer.buildWithScope(layer, scope), UsageStatistics)
      first.recordMany(
        "o",
        ["a@x.edu", "A+promo@x.edu", "b@x.edu", "junk"],
        [
          eligible("a@x.edu", "eu"),
          eligible("A+promo@x.edu", "eu", "uk"),
          ineligible("b@x.edu", "NOT_AN_INSTITUTION"),
          ineligible("junk", "INVALID_EMAIL_FORMAT")
        ]
      )
      const before = yield* first.usage("o")
      yield* Scope.close(scope, Exit.void)

      const restarted = yield* Effect.scoped(
        Effect.gen(function* () {
          const stats = yield* UsageStatistics
          stats.record("o", "b@x.edu", ineligible("b@x.edu", "NOT_AN_INSTITUTION"))
          return yield* stats.usage("o")
        }).pipe(Effect.provide(layer))
      )
      expect(before).toMatchObject({ validations: 4, uniqueEmails: { estimate: 2 } })
      expect(restarted).toMatchObject({
        validations: 5,
        eligible: 2,
        ineligible: 3,
        ineligibleByReason: { INVALID_EMAIL_FORMAT: 1, NOT_AN_INSTITUTION: 2 },
        matchesByTargetGroup: { eu: 2, uk: 1 },
        uniqueEmails: { estimate: 2 },
        firstValidatedAt: before.firstValidatedAt
      })
    })
  )
})
