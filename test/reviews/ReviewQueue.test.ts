import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe } from "vitest"
import type { Candidate } from "../../src/domain/InstitutionReview.ts"
import type { ValidationResult } from "../../src/domain/ValidationResult.ts"
import { ReviewBuffer, ReviewQueue } from "../../src/reviews/ReviewQueue.ts"
import { ReviewStore, ReviewStoreError } from "../../src/reviews/ReviewStore.ts"

const T0 = Date.UTC(2026, 10, 20, 12)
const candidate = (score: number, domain = "x.de"): Candidate => ({ domain, score, signals: [] })

/** The fields of a result the queue reads: the host, and the registrable domain its candidate judged. */
const result = (host: string, reasonCode: string, score = 0.5, registrable = host): ValidationResult =>
  ({
    isValid: reasonCode === "LIKELY_INSTITUTION",
    email: `someone@${host}`,
    reasonCode,
    validationDetails: { domain: { status: "failed", domain: host, candidate: candidate(score, registrable) } }
  }) as unknown as ValidationResult

describe("ReviewBuffer", () => {
  it("records unknown and likely institutions only, by the registrable domain judged, never the address", () => {
    const buffer = new ReviewBuffer(
      () => 100,
      () => T0
    )
    buffer.sighted("team-a", result("cs.x-college.de", "UNKNOWN_INSTITUTION", 0.4, "x-college.de"))
    buffer.sighted("team-a", result("x-college.de", "LIKELY_INSTITUTION", 0.6))
    buffer.sighted("team-a", result("gmail.com", "FREE_MAIL"))
    const batch = buffer.take()
    expect([...batch.get("team-a")!.entries.values()]).toEqual([
      {
        domain: "x-college.de",
        count: 2,
        accepted: 1,
        days: { "2026-11-20": 2 },
        firstSeen: T0,
        lastSeen: T0,
        candidate: candidate(0.6, "x-college.de")
      }
    ])
    expect(JSON.stringify([...batch.get("team-a")!.entries.values()])).not.toContain("@")
    expect(buffer.isEmpty).toBe(true)
  })

  it("stays bounded under many distinct domains, keeping the most met and counting the dropped", () => {
    const buffer = new ReviewBuffer(
      () => 50,
      () => T0
    )
    for (let i = 0; i < 5; i++)
      for (let n = 0; n < 10; n++) buffer.add("team-a", `often-${i}.de`, false, candidate(0.1), T0)
    for (let i = 0; i < 20_000; i++) {
      buffer.add("team-a", `d${i}.example.de`, false, candidate(0.5), T0)
      expect(buffer.size).toBeLessThan(100)
    }
    const queue = buffer.take().get("team-a")!
    expect(queue.entries.size).toBe(50)
    expect(queue.dropped).toBe(20_005 - 50)
    for (let i = 0; i < 5; i++) expect(queue.entries.get(`often-${i}.de`)?.count).toBe(10)
  })
})

describe("ReviewQueue", () => {
  it.effect("flushes every team in one write; a failed write keeps the counts for the next", () =>
    Effect.gen(function* () {
      let failing = true
      const writes: Array<number> = []
      const memory = yield* Effect.provide(ReviewStore, ReviewStore.layerMemory)
      const flaky = Layer.succeed(
        ReviewStore,
        ReviewStore.of({
          ...memory,
          record: (batch, options) => {
            writes.push(batch.size)
            return failing
              ? Effect.fail(new ReviewStoreError({ operation: "record", cause: new Error("down") }))
              : memory.record(batch, options)
          }
        })
      )
      yield* Effect.gen(function* () {
        const queue = yield* ReviewQueue
        queue.sighted("team-a", result("x-college.de", "UNKNOWN_INSTITUTION"))
        queue.sighted("team-b", result("y-college.de", "UNKNOWN_INSTITUTION"))
        yield* Effect.flip(queue.flush)
        queue.sighted("team-a", result("x-college.de", "UNKNOWN_INSTITUTION"))
        failing = false
        yield* queue.flush
        yield* queue.flush
      }).pipe(Effect.provide(ReviewQueue.layer({ flushIntervalMs: 60_000 }).pipe(Layer.provide(flaky))))
      expect(writes).toEqual([2, 2])
      expect((yield* memory.entry("team-a", "x-college.de"))?.count).toBe(2)
      expect((yield* memory.entry("team-b", "y-college.de"))?.count).toBe(1)
    })
  )
})
