import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { estimate } from "../../src/stats/HyperLogLog.ts"
import { hashKeyFor, hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../src/stats/UsageRecorder.ts"
import { toOfferUsage, type UsageState, VERIFICATION_EVENTS } from "../../src/stats/UsageState.ts"
import { UsageStore, type UsageStoreError } from "../../src/stats/UsageStore.ts"
import * as UsagePostgres from "../../src/stats/usagePostgres.ts"
import { layerRedis as usageStoreRedis } from "../../src/stats/usageRedis.ts"
import { isStoreOutage } from "../../src/store/outage.ts"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import { Redis } from "../../src/store/redis.ts"
import { together } from "../childProcesses.ts"
import { holdingLock } from "../postgresLocks.ts"
import { describePostgres, testDatabase, testPostgresLayer } from "../postgresTesting.ts"
import { currentPrefix, describeRedis, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"
import { DAY, eligible, ineligible, MAY_1 } from "./fixtures.ts"

const delta = (emails: ReadonlyArray<string>, at: number, valid = true): UsageState => {
  const recorder = new UsageRecorder(hashKeyFromSecret("test"))
  for (const email of emails)
    recorder.record("o", email, valid ? eligible(email, "eu") : ineligible(email, "NOT_AN_INSTITUTION"), at)
  return recorder.take().get("o")!
}

/** Three flows on the day of `at`: one completed, one left at the code step, one left at the email step. */
const hostedDelta = (at: number): UsageState => {
  const recorder = new UsageRecorder(hashKeyFromSecret("test"))
  for (const step of ["started", "started", "started", "ineligibleSubmissions", "reachedCodeStep"] as const)
    recorder.recordHostedFlow("o", step, at)
  recorder.recordHostedFlow("o", "reachedCodeStep", at)
  recorder.recordHostedFlow("o", "completed", at)
  return recorder.take().get("o")!
}

const tempDir = () => mkdtempSync(join(tmpdir(), "campusgate-stats-"))

/** The contract every adapter keeps. */
const contract = storeContract("UsageStore", (makeLayer: () => Layer.Layer<UsageStore, UsageStoreError>) => {
  it.effect("knows nothing of an offer never stored", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      expect(yield* store.get("o")).toBeUndefined()
      expect(yield* store.offerIds()).toEqual([])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("adds deltas: counters sum, unique emails merge, days and times widen", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      yield* store.apply("o", delta(["a@x.edu", "b@x.edu"], MAY_1))
      yield* store.apply("o", delta(["b@x.edu", "c@x.edu"], MAY_1 + DAY, false))
      yield* store.apply("p", delta(["z@x.edu"], MAY_1))
      const usage = toOfferUsage(yield* store.get("o"))
      expect(usage).toMatchObject({
        validations: 4,
        eligible: 2,
        ineligible: 2,
        ineligibleByReason: { NOT_AN_INSTITUTION: 2 },
        matchesByTargetGroup: { eu: 2 },
        uniqueEmails: { estimate: 3 },
        firstValidatedAt: "2024-05-01T12:00:00.000Z",
        lastValidatedAt: "2024-05-02T12:00:00.000Z"
      })
      expect(usage.daily.map((d) => [d.date, d.validations])).toEqual([
        ["2024-05-01", 2],
        ["2024-05-02", 2]
      ])
      expect([...(yield* store.offerIds())].sort()).toEqual(["o", "p"])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("lists the last step stored of each source applied once, not the plain applies", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      expect(yield* store.applied("o")).toEqual(new Map())
      yield* store.apply("o", delta(["a@x.edu"], MAY_1))
      yield* store.applyOnce("o", "job_1", 3, delta(["b@x.edu"], MAY_1))
      yield* store.applyOnce("o", "job_1", 7, delta(["c@x.edu"], MAY_1))
      yield* store.applyOnce("o", "daemon_a", 1, delta(["d@x.edu"], MAY_1))
      expect(yield* store.applied("o")).toEqual(
        new Map([
          ["job_1", 7],
          ["daemon_a", 1]
        ])
      )
      yield* store.forget("o", "job_1")
      expect(yield* store.applied("o")).toEqual(new Map([["daemon_a", 1]]))
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("answers copies: changing one does not change the store", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      yield* store.apply("o", delta(["a@x.edu"], MAY_1))
      const copy = (yield* store.get("o"))!
      copy.validations = 99
      copy.registers!.fill(30)
      expect(toOfferUsage(yield* store.get("o"))).toMatchObject({ validations: 1, uniqueEmails: { estimate: 1 } })
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("counts every change made at once to one offer", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? store.apply("o", delta([`a${i}@x.edu`], MAY_1))
            : store.applyOnce("o", `job-${i}`, 1, delta([`a${i}@x.edu`], MAY_1))
        ),
        { concurrency: "unbounded" }
      )
      expect(toOfferUsage(yield* store.get("o"))).toMatchObject({ validations: 8, eligible: 8 })
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("applies a source's step once: again, or an older step, changes nothing; a later step adds", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      yield* store.applyOnce("o", "job_1", 100, delta(["a@x.edu", "b@x.edu"], MAY_1))
      yield* store.applyOnce("o", "job_1", 100, delta(["a@x.edu", "b@x.edu"], MAY_1))
      yield* store.applyOnce("o", "job_1", 50, delta(["c@x.edu"], MAY_1))
      expect((yield* store.get("o"))?.validations).toBe(2)
      yield* store.applyOnce("o", "job_1", 200, delta(["c@x.edu"], MAY_1))
      yield* store.applyOnce("o", "job_2", 100, delta(["d@x.edu"], MAY_1)) // another source, its own steps
      yield* store.apply("o", delta(["e@x.edu"], MAY_1)) // plain deltas still add
      expect(toOfferUsage(yield* store.get("o"))).toMatchObject({ validations: 5, uniqueEmails: { estimate: 5 } })
      // Forgetting a source keeps its counts; its steps count afresh.
      yield* store.forget("o", "job_1")
      yield* store.forget("o", "job_9")
      expect((yield* store.get("o"))?.validations).toBe(5)
      yield* store.applyOnce("o", "job_1", 100, delta(["f@x.edu"], MAY_1))
      expect((yield* store.get("o"))?.validations).toBe(6)
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("keeps every verification counter, the funnel's step `sent` included", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      const recorder = new UsageRecorder(hashKeyFromSecret("test"))
      for (const event of VERIFICATION_EVENTS) recorder.recordVerification("o", event)
      recorder.recordVerification("o", "messagesSent")
      recorder.recordVerification("o", "started")
      yield* store.apply("o", recorder.take().get("o")!)
      expect(toOfferUsage(yield* store.get("o")).verifications).toEqual({
        started: 2,
        sent: 1,
        messagesSent: 2,
        verified: 1,
        failed: 1,
        expired: 1,
        conversionRate: 0.5
      })
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("adds the hosted page's funnel, in total and by day", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      yield* store.apply("o", hostedDelta(MAY_1))
      yield* store.apply("o", hostedDelta(MAY_1 + DAY))
      yield* store.apply("o", delta(["a@x.edu"], MAY_1))
      const usage = toOfferUsage(yield* store.get("o"))
      expect(usage.hostedFlow).toEqual({
        started: 6,
        reachedCodeStep: 4,
        completed: 2,
        ineligibleSubmissions: 2,
        abandonedAtEmailStep: 2,
        abandonedAtCodeStep: 2
      })
      const day = { started: 3, reachedCodeStep: 2, completed: 1, ineligibleSubmissions: 1 }
      expect(usage.daily).toEqual([
        { date: "2024-05-01", validations: 1, eligible: 1, ineligible: 0, hostedFlow: day },
        { date: "2024-05-02", validations: 0, eligible: 0, ineligible: 0, hostedFlow: day }
      ])
    }).pipe(Effect.provide(makeLayer()))
  )
})

contract("memory", () => UsageStore.layerMemory)
contract("file", () => UsageStore.layerFiles(tempDir()))
contract("redis", () => usageStoreRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () => UsagePostgres.layerPostgres.pipe(Layer.provide(testPostgresLayer(UsagePostgres.migrations))),
  describePostgres
)

/** The store as a daemon on PostgreSQL at `url` opens it (each call another daemon's pool), in the test's scope. */
const openPostgresStore = (url: string) =>
  Effect.map(
    Layer.build(
      UsagePostgres.layerPostgres.pipe(
        Layer.provide(postgresStoreLayer({ url, migrations: UsagePostgres.migrations })),
        Layer.orDie
      )
    ),
    Context.get(UsageStore)
  )

describePostgres("usagePostgres", () => {
  it.live("two daemons' recorders flushing at once into one database add up exactly, unique emails merged", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const [one, two] = [yield* openPostgresStore(database.url), yield* openPostgresStore(database.url)]
      const deltas = Array.from({ length: 40 }, (_, i) =>
        delta(
          Array.from({ length: 50 }, (_, k) => `user${i * 25 + k}@x.edu`),
          MAY_1 + (i % 3) * DAY,
          i % 4 !== 0
        )
      )
      yield* Effect.all(
        deltas.map((each, i) =>
          i % 5 === 0
            ? (i % 2 === 0 ? one : two).applyOnce("o", `job-${i}`, 1, each)
            : (i % 2 === 0 ? one : two).apply("o", each)
        ),
        { concurrency: "unbounded" }
      )
      const memory = yield* UsageStore.use((local) =>
        Effect.andThen(
          Effect.forEach(deltas, (each) => local.apply("o", each)),
          local.get("o")
        )
      ).pipe(Effect.provide(UsageStore.layerMemory))
      const stored = yield* two.get("o")
      expect(stored?.registers).toEqual(memory?.registers)
      expect(toOfferUsage(stored)).toEqual(toOfferUsage(memory))
      expect(toOfferUsage(stored)).toMatchObject({ validations: 2000, eligible: 1500, ineligible: 500 })
      expect(toOfferUsage(stored).uniqueEmails.estimate).toBeGreaterThan(1000 * 0.97)
    }).pipe(Effect.scoped)
  )

  it.live(
    "two processes' recorders, flushing every 10 ms into one database, add up exactly",
    () =>
      Effect.gen(function* () {
        const database = yield* testDatabase
        const store = yield* openPostgresStore(database.url)
        const answers = yield* Effect.promise(() =>
          together(new URL("usageChild.ts", import.meta.url), [
            [database.url, "3000", "0"],
            [database.url, "3000", "1500"]
          ])
        )
        expect(answers).toEqual([{ recorded: 3000 }, { recorded: 3000 }])
        const stored = yield* store.get("o")
        expect(toOfferUsage(stored)).toMatchObject({ validations: 6000, eligible: 4800, ineligible: 1200 })
        // The same emails counted in one process give the same registers.
        const one = new UsageRecorder(hashKeyFromSecret("test"))
        for (let n = 0; n < 4500; n++) one.record("o", `user${n}@x.edu`, eligible(`user${n}@x.edu`), MAY_1)
        expect(stored?.registers).toEqual(one.take().get("o")!.registers)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("a checkpoint stored by two daemons at once is counted once", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const [one, two] = [yield* openPostgresStore(database.url), yield* openPostgresStore(database.url)]
      const checkpoint = delta(["a@x.edu", "b@x.edu"], MAY_1)
      yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).applyOnce("o", "job_1", 100, checkpoint)),
        { concurrency: "unbounded" }
      )
      expect(toOfferUsage(yield* one.get("o"))).toMatchObject({ validations: 2, uniqueEmails: { estimate: 2 } })
    }).pipe(Effect.scoped)
  )

  it.live("a delta the database does not answer in time fails as the store's outage, not a hang", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const store = yield* openPostgresStore(database.url)
      yield* holdingLock(database.url, "campusgate_usage_offers")
      const error = yield* Effect.flip(store.apply("o", delta(["a@x.edu"], MAY_1)))
      expect(error._tag).toBe("UsageStoreError")
      expect(isStoreOutage(error)).toBe(true)
    }).pipe(Effect.scoped)
  )
})

describeRedis("usageStoreRedis", () => {
  it.effect("keeps unique emails in a native HyperLogLog: the registers read back merged, PFCOUNT agrees", () =>
    Effect.gen(function* () {
      const store = yield* UsageStore
      const emails = Array.from({ length: 20_000 }, (_, i) => `user${i}@x.edu`)
      const first = delta(emails.slice(0, 12_000), MAY_1)
      const second = delta(emails.slice(8_000), MAY_1 + DAY)
      yield* store.apply("o", first)
      yield* store.apply("o", second)
      const memory = yield* UsageStore.use((local) =>
        Effect.andThen(Effect.all([local.apply("o", first), local.apply("o", second)]), local.get("o"))
      ).pipe(Effect.provide(UsageStore.layerMemory))
      const stored = yield* store.get("o")
      expect(stored?.registers).toEqual(memory?.registers)
      expect(toOfferUsage(stored)).toEqual(toOfferUsage(memory))
      const redis = yield* Redis
      const counted = Number(yield* redis.send("PFCOUNT", `${yield* currentPrefix}usage:o:hll`))
      expect(Math.abs(counted - estimate(stored!.registers)) / 20_000).toBeLessThan(0.02)
    }).pipe(Effect.provide(usageStoreRedis.pipe(Layer.provideMerge(testRedisLayer()))))
  )
})

describe("UsageStore.layerFile", () => {
  it.effect("keeps counts across a restart, one file per offer, ignoring temporary and other files", () =>
    Effect.gen(function* () {
      const dataDir = tempDir()
      yield* UsageStore.use((store) => store.apply("o", delta(["a@x.edu", "b@x.edu"], MAY_1))).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      hashKeyFor(dataDir, undefined)
      writeFileSync(join(dataDir, "stats", ".o.json.1234.tmp"), "{ half a fil")
      writeFileSync(join(dataDir, "stats", "README"), "not statistics")
      expect(readdirSync(join(dataDir, "stats")).sort()).toEqual([".o.json.1234.tmp", "README", "hash-key", "o.json"])
      const usage = yield* UsageStore.use((store) => store.get("o")).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      expect(toOfferUsage(usage)).toMatchObject({ validations: 2, uniqueEmails: { estimate: 2 } })
    })
  )

  it.effect("remembers the steps applied once across a restart", () =>
    Effect.gen(function* () {
      const dataDir = tempDir()
      yield* UsageStore.use((store) => store.applyOnce("o", "job_1", 10, delta(["a@x.edu"], MAY_1))).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      const usage = yield* UsageStore.use((store) =>
        Effect.andThen(store.applyOnce("o", "job_1", 10, delta(["a@x.edu"], MAY_1)), store.get("o"))
      ).pipe(Effect.provide(UsageStore.layerFiles(dataDir)))
      expect(usage?.validations).toBe(1)
    })
  )

  it.effect("keeps the hosted page's funnel across a restart; a file from before it reads as none", () =>
    Effect.gen(function* () {
      const dataDir = tempDir()
      yield* UsageStore.use((store) => store.apply("o", hostedDelta(MAY_1))).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      yield* UsageStore.use((store) => store.apply("old", delta(["a@x.edu"], MAY_1))).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      const old = join(dataDir, "stats", "old.json")
      const file = JSON.parse(readFileSync(old, "utf8"))
      delete file.usage.hostedFlow
      writeFileSync(old, JSON.stringify(file))
      const [usage, before] = yield* UsageStore.use((store) => Effect.all([store.get("o"), store.get("old")])).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      expect(toOfferUsage(usage).hostedFlow).toMatchObject({ started: 3, reachedCodeStep: 2, completed: 1 })
      expect(toOfferUsage(usage).daily[0]?.hostedFlow).toEqual({
        started: 3,
        reachedCodeStep: 2,
        completed: 1,
        ineligibleSubmissions: 1
      })
      expect(toOfferUsage(before)).toMatchObject({
        validations: 1,
        hostedFlow: { started: 0, abandonedAtEmailStep: 0 }
      })
    })
  )

  it.effect("reads a file written before `sent` was counted as none sent", () =>
    Effect.gen(function* () {
      const dataDir = tempDir()
      const recorder = new UsageRecorder(hashKeyFromSecret("test"))
      recorder.recordVerification("o", "started")
      yield* UsageStore.use((store) => store.apply("o", recorder.take().get("o")!)).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      const file = join(dataDir, "stats", "o.json")
      const stored = readFileSync(file, "utf8")
      expect(stored).toContain('"sent":0')
      writeFileSync(file, stored.replace('"sent":0,', ""))
      const usage = yield* UsageStore.use((store) => store.get("o")).pipe(
        Effect.provide(UsageStore.layerFiles(dataDir))
      )
      expect(toOfferUsage(usage).verifications).toMatchObject({ started: 1, sent: 0 })
    })
  )

  it.effect("refuses to start on a file it cannot read rather than overwrite it", () =>
    Effect.gen(function* () {
      const dataDir = tempDir()
      mkdirSync(join(dataDir, "stats"))
      writeFileSync(join(dataDir, "stats", "o.json"), "{}")
      const exit = yield* Effect.exit(
        UsageStore.use((store) => store.offerIds()).pipe(Effect.provide(UsageStore.layerFiles(dataDir)))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit)).toContain("o.json")
    })
  )
})

describe("hash key", () => {
  it("is generated once per data directory, private to its owner, or derived from the secret", () => {
    const dataDir = tempDir()
    const first = hashKeyFor(dataDir, undefined)
    expect(hashKeyFor(dataDir, undefined)).toEqual(first)
    expect(statSync(join(dataDir, "stats", "hash-key")).mode & 0o777).toBe(0o600)
    expect(hashKeyFor(tempDir(), undefined)).not.toEqual(first)
    expect(hashKeyFor(dataDir, "s3cret")).toEqual(hashKeyFromSecret("s3cret"))
  })
})
