import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Candidate, ReviewRejection } from "../../src/domain/InstitutionReview.ts"
import { addSighting, emptyTeamQueue, type QueueBatch } from "../../src/reviews/queueEntries.ts"
import { ReviewStore } from "../../src/reviews/ReviewStore.ts"
import * as ReviewPostgres from "../../src/reviews/reviewPostgres.ts"
import { layerRedis as reviewStoreRedis } from "../../src/reviews/reviewRedis.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { universityApproval } from "../fixtures.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, everywhere, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const tempDir = () => mkdtempSync(join(tmpdir(), "campusgate-reviews-"))

const DAY = 86_400_000
const T0 = Date.UTC(2026, 10, 20, 12)

const candidate = (score: number): Candidate => ({
  domain: "x.de",
  score,
  signals: [{ signal: "academic-word", detail: `score ${score}`, weight: score }]
})

/** A batch: [team, domain, times, score, at, accepted] sightings. */
const batchOf = (sightings: ReadonlyArray<readonly [string, string, number, number, number, boolean?]>): QueueBatch => {
  const batch: QueueBatch = new Map()
  for (const [team, domain, times, score, at, accepted] of sightings) {
    const queue = batch.get(team) ?? emptyTeamQueue()
    batch.set(team, queue)
    for (let i = 0; i < times; i++) addSighting(queue.entries, domain, accepted ?? false, candidate(score), at)
  }
  return batch
}

const approval = (team: string, domain: string, name = "Hochschule") =>
  universityApproval(team, domain, name, new Date(T0).toISOString())

const rejection = (team: string, domain: string): ReviewRejection =>
  ({
    domain,
    team,
    reason: "a shop",
    rejectedBy: "key_1",
    rejectedAt: new Date(T0).toISOString()
  }) as ReviewRejection

const options = { maxPerTeam: 100, now: T0 }

/** The contract every adapter keeps. */
const contract = storeContract("ReviewStore", (makeLayer: () => Layer.Layer<ReviewStore>) => {
  it.effect("holds nothing at first", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      expect(yield* store.queue("team-a")).toEqual({ entries: [], dropped: 0 })
      expect(yield* store.entry("team-a", "x.de")).toBeUndefined()
      expect(yield* store.decisions()).toEqual({ approvals: [], rejections: [] })
      expect(yield* store.teams()).toEqual([])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("adds flushes up: counts, accepted, days, first and last seen, the last candidate; teams apart", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* store.record(
        batchOf([
          ["team-a", "hfmt-hamburg.de", 2, 0.7, T0 - DAY],
          ["team-b", "hfmt-hamburg.de", 1, 0.7, T0]
        ]),
        options
      )
      yield* store.record(batchOf([["team-a", "hfmt-hamburg.de", 3, 0.8, T0, true]]), options)
      const entry = yield* store.entry("team-a", "hfmt-hamburg.de")
      expect(entry).toMatchObject({
        domain: "hfmt-hamburg.de",
        count: 5,
        accepted: 3,
        days: { "2026-11-19": 2, "2026-11-20": 3 },
        firstSeen: T0 - DAY,
        lastSeen: T0,
        candidate: candidate(0.8)
      })
      expect((yield* store.queue("team-b")).entries.map((e) => [e.domain, e.count])).toEqual([["hfmt-hamburg.de", 1]])
      expect([...(yield* store.teams())].sort()).toEqual(["team-a", "team-b"])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("keeps the last 30 UTC days only", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* store.record(batchOf([["team-a", "x-college.de", 1, 0.5, T0 - 40 * DAY]]), {
        ...options,
        now: T0 - 40 * DAY
      })
      yield* store.record(batchOf([["team-a", "x-college.de", 1, 0.5, T0]]), options)
      const entry = yield* store.entry("team-a", "x-college.de")
      expect(entry?.days).toEqual({ "2026-11-20": 1 })
      expect(entry?.count).toBe(2)
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("bounds each team's queue to the top by count then score, counting the dropped; decided ones stay", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* store.decide({ kind: "reject", rejection: rejection("team-a", "rare.de") })
      yield* store.record(
        batchOf([
          ["team-a", "rare.de", 1, 0.1, T0],
          ["team-a", "a.de", 5, 0.1, T0],
          ["team-a", "b.de", 3, 0.9, T0],
          ["team-a", "c.de", 3, 0.2, T0],
          ["team-a", "d.de", 1, 0.9, T0],
          ["team-b", "e.de", 1, 0.1, T0]
        ]),
        { ...options, maxPerTeam: 2 }
      )
      yield* store.record(batchOf([["team-a", "f.de", 1, 0.1, T0]]), { ...options, maxPerTeam: 2 })
      const queue = yield* store.queue("team-a")
      expect(queue.entries.map((entry) => entry.domain).sort()).toEqual(["a.de", "b.de", "rare.de"])
      expect(queue.dropped).toBe(3)
      expect((yield* store.queue("team-b")).entries).toHaveLength(1)
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("keeps one decision per team and domain: a rejection replaces the approval and back", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* store.decide({ kind: "approve", approval: approval("team-a", "x.de") })
      yield* store.decide({ kind: "approve", approval: approval("team-b", "x.de") })
      yield* store.decide({ kind: "reject", rejection: rejection("team-a", "x.de") })
      expect(yield* store.decisions("team-a")).toEqual({ approvals: [], rejections: [rejection("team-a", "x.de")] })
      yield* store.decide({ kind: "approve", approval: approval("team-a", "x.de", "Renamed") })
      expect(yield* store.decisions("team-a")).toEqual({
        approvals: [approval("team-a", "x.de", "Renamed")],
        rejections: []
      })
      expect((yield* store.decisions()).approvals.map((a) => a.team)).toEqual(["team-a", "team-b"])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("decisions sent at once leave exactly one", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* Effect.all(
        Array.from({ length: 10 }, (_, i) =>
          store.decide(
            i % 2 === 0
              ? { kind: "approve", approval: approval("team-a", "race.de") }
              : { kind: "reject", rejection: rejection("team-a", "race.de") }
          )
        ),
        { concurrency: "unbounded" }
      )
      const { approvals, rejections } = yield* store.decisions("team-a")
      expect(approvals.length + rejections.length).toBe(1)
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("flushes sent at once all add up, and the bound holds", () =>
    Effect.gen(function* () {
      const store = yield* ReviewStore
      yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          store.record(
            batchOf([
              ["team-a", "shared.de", 2, 0.5, T0],
              ["team-a", `own-${i}.de`, 1, 0.1, T0],
              ["team-b", "shared.de", 1, 0.5, T0]
            ]),
            { ...options, maxPerTeam: 3 }
          )
        ),
        { concurrency: "unbounded" }
      )
      expect((yield* store.entry("team-a", "shared.de"))?.count).toBe(16)
      expect((yield* store.entry("team-b", "shared.de"))?.count).toBe(8)
      const queue = yield* store.queue("team-a")
      expect(queue.entries).toHaveLength(3)
      expect(queue.dropped).toBe(6)
    }).pipe(Effect.provide(makeLayer()))
  )
})

contract("memory", () => ReviewStore.layerMemory)
contract("files", () => ReviewStore.layerFiles(tempDir()).pipe(Layer.orDie))
contract("redis", () => reviewStoreRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () =>
    ReviewPostgres.layerPostgres.pipe(
      Layer.provide(testPostgresLayer([...ConfigVersion.migrations, ...ReviewPostgres.migrations]))
    ),
  describePostgres
)

everywhere("ReviewStore files", () => {
  it.effect("keeps the queue and decisions across a restart", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      yield* Effect.gen(function* () {
        const store = yield* ReviewStore
        yield* store.record(batchOf([["team-a", "hfmt-hamburg.de", 2, 0.7, T0]]), options)
        yield* store.decide({ kind: "approve", approval: approval("team-a", "x.de") })
      }).pipe(Effect.provide(ReviewStore.layerFiles(dir)))
      const store = yield* Effect.provide(ReviewStore, ReviewStore.layerFiles(dir))
      expect((yield* store.entry("team-a", "hfmt-hamburg.de"))?.count).toBe(2)
      expect((yield* store.decisions()).approvals).toEqual([approval("team-a", "x.de")])
    })
  )
})
