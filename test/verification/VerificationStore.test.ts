import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { VerificationId, VerificationRecord } from "../../src/domain/Verification.ts"
import { messageBudgetKey, redemptionKey } from "../../src/domain/verificationLimits.ts"
import { isStoreOutage } from "../../src/store/outage.ts"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import { Redis, redisStoreLayer } from "../../src/store/redis.ts"
import { LimitExceeded, VerificationStore } from "../../src/verification/VerificationStore.ts"
import * as VerificationPostgres from "../../src/verification/verificationPostgres.ts"
import { layerRedis as verificationStoreRedis } from "../../src/verification/verificationRedis.ts"
import { holdingLock } from "../postgresLocks.ts"
import { describePostgres, testDatabase, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const record = (n: number, addressHash = "a".repeat(64)): VerificationRecord => ({
  id: `ver_${String(n).padStart(26, "0")}` as VerificationId,
  version: 0,
  team: "acme",
  offerId: "spring",
  targetGroupId: "uk",
  method: "code",
  locale: "en",
  status: "pending",
  domain: "ox.ac.uk",
  addressHash,
  sealedAddress: "sealed",
  secretHash: "b".repeat(64),
  institution: { name: "University of Oxford", country: "GB", type: "university" },
  createdAt: 1_000,
  expiresAt: 601_000,
  attempts: 0,
  maxAttempts: 5,
  sentAt: [],
  resendAvailableAt: 31_000,
  delivery: { state: "queued", attempts: 0 },
  notices: []
})

const dataDir = () => mkdtempSync(join(tmpdir(), "campusgate-verifications-"))

const contract = storeContract("VerificationStore", (layer: () => Layer.Layer<VerificationStore, unknown>) => {
  it.effect("inserts, reads, replaces over the version read, finds by address, lists and removes", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      yield* store.insert(record(1))
      yield* store.insert(record(2, "c".repeat(64)))
      expect(yield* store.get(record(1).id)).toEqual(record(1))
      expect(yield* store.replace({ ...record(1), version: 1, attempts: 1 })).toBe(true)
      // A change computed on the version before is refused and changes nothing.
      expect(yield* store.replace({ ...record(1), version: 1, attempts: 3 })).toBe(false)
      expect((yield* store.get(record(1).id))?.attempts).toBe(1)
      expect(yield* store.replace({ ...record(9), version: 1 })).toBe(false)
      expect((yield* store.byAddress("a".repeat(64))).map((r) => r.id)).toEqual([record(1).id])
      expect((yield* store.list()).map((r) => r.id).sort()).toEqual([record(1).id, record(2).id])
      yield* store.remove(record(1).id)
      yield* store.remove(record(1).id)
      expect(yield* store.get(record(1).id)).toBeUndefined()
      expect(yield* store.byAddress("a".repeat(64))).toEqual([])
    }).pipe(Effect.provide(layer()))
  )

  it.effect("inserts many at once, as they are, leaving a record already held as it is; their limits count", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      yield* store.insert({ ...record(3), attempts: 2 })
      const many = Array.from({ length: 40 }, (_, n) => ({ ...record(n), messagesAt: [5_000 + n] }))
      expect(yield* store.insertAll(many)).toBe(39)
      expect(yield* store.insertAll([])).toBe(0)
      expect((yield* store.get(record(3).id))?.attempts).toBe(2)
      expect(yield* store.get(many[7]!.id)).toEqual(many[7])
      expect(yield* store.byAddress("a".repeat(64))).toHaveLength(40)
      // The units the records carry count toward a later write's limit.
      const key = `mailbox:${"a".repeat(64)}`
      const refused = yield* Effect.flip(
        store.insert({ ...record(99), messagesAt: [9_000] }, [{ key, max: 39, since: 0 }])
      )
      expect(refused).toMatchObject({ _tag: "LimitExceeded" })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("hands every record once, a page of at most the size asked at a time", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      const stored = Array.from({ length: 300 }, (_, n) => record(1_000 + n, n.toString(16).padStart(64, "0")))
      yield* Effect.forEach(stored, (one) => store.insert(one), { discard: true, concurrency: 16 })
      const pages: Array<ReadonlyArray<VerificationRecord>> = []
      yield* store.eachPage(64, (page) => Effect.sync(() => void pages.push(page)))
      expect(pages.every((page) => page.length <= 64)).toBe(true)
      expect(pages.length).toBeGreaterThanOrEqual(5)
      const handed = pages.flat()
      expect(handed.map((one) => one.id).sort()).toEqual(stored.map((one) => one.id))
      expect(handed.find((one) => one.id === stored[7]!.id)).toEqual(stored[7])
    }).pipe(Effect.provide(layer()))
  )

  it.effect("decides a limit with the write: of 50 inserts at once of one address, exactly the limit is stored", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      const asked = (n: number) => ({ ...record(100 + n), messagesAt: [1_000 + n] })
      const limits = [{ key: messageBudgetKey(asked(0)), max: 5, since: 0 }]
      const outcomes = yield* Effect.all(
        Array.from({ length: 50 }, (_, n) =>
          Effect.match(store.insert(asked(n), limits), { onSuccess: () => "stored", onFailure: (error) => error })
        ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "stored")).toHaveLength(5)
      const refusals = outcomes.filter((outcome) => outcome instanceof LimitExceeded)
      expect(refusals).toHaveLength(45)
      // The oldest unit in the window as the refused write would have left it: when the limit lets one more
      // through. Which five are stored is the order the store took them in (one after another in memory).
      const stored = yield* store.byAddress("a".repeat(64))
      expect(stored).toHaveLength(5)
      const storedOldest = Math.min(...stored.map((r) => r.messagesAt![0]!))
      outcomes.forEach((outcome, n) => {
        if (outcome instanceof LimitExceeded) expect(outcome.oldest).toBe(Math.min(storedOldest, 1_000 + n))
      })
      // Units before `since` do not count.
      yield* store.insert(asked(60), [{ ...limits[0]!, since: 2_000 }])
    }).pipe(Effect.provide(layer()))
  )

  it.effect("of 50 replacements at once that each verify a record of one person, exactly the limit passes", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      const pending = Array.from({ length: 50 }, (_, n) => record(200 + n))
      for (const one of pending) yield* store.insert(one)
      const verified = (one: VerificationRecord): VerificationRecord => ({
        ...one,
        version: 1,
        status: "verified",
        finishedAt: 5_000
      })
      const limits = [{ key: redemptionKey("acme", "spring", "a".repeat(64)), max: 1, since: 0 }]
      const outcomes = yield* Effect.all(
        pending.map((one) =>
          Effect.match(store.replace(verified(one), limits), { onSuccess: String, onFailure: (error) => error._tag })
        ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "true")).toHaveLength(1)
      expect(outcomes.filter((outcome) => outcome === "LimitExceeded")).toHaveLength(49)
      // A unit given up (an operator's reset) frees the limit; so does a record removed.
      const winner = (yield* store.byAddress("a".repeat(64))).find((one) => one.status === "verified")!
      const other = pending.find((one) => one.id !== winner.id)!
      expect(yield* Effect.flip(store.replace(verified(other), limits))).toBeInstanceOf(LimitExceeded)
      expect(yield* store.replace({ ...winner, version: 2, limitReset: true })).toBe(true)
      expect(yield* store.replace(verified(other), limits)).toBe(true)
      yield* store.remove(other.id)
      expect(
        yield* store.replace(verified(pending.find((one) => ![winner.id, other.id].includes(one.id))!), limits)
      ).toBe(true)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("orders concurrent changes to one record: exactly one of two replacements of a version wins", () =>
    Effect.gen(function* () {
      const store = yield* VerificationStore
      yield* store.insert(record(3))
      const outcomes = yield* Effect.all(
        [
          store.replace({ ...record(3), version: 1, attempts: 1 }),
          store.replace({ ...record(3), version: 1, attempts: 2 })
        ],
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter(Boolean)).toHaveLength(1)
    }).pipe(Effect.provide(layer()))
  )
})

contract("memory", () => VerificationStore.layerMemory)
contract("files", () => VerificationStore.layerFiles(dataDir()))
contract("redis", () => verificationStoreRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () => VerificationPostgres.layerPostgres.pipe(Layer.provide(testPostgresLayer(VerificationPostgres.migrations))),
  describePostgres
)

describe("the file adapter", () => {
  const reopen = (dir: string) =>
    Effect.gen(function* () {
      return yield* (yield* VerificationStore).list()
    }).pipe(Effect.provide(VerificationStore.layerFiles(dir)))

  it.effect("keeps every change across a restart, cuts a torn last line, and compacts the journal", () =>
    Effect.gen(function* () {
      const dir = dataDir()
      yield* Effect.gen(function* () {
        const store = yield* VerificationStore
        yield* store.insert(record(1))
        for (let version = 1; version <= 20; version++)
          yield* store.replace({ ...record(1), version, attempts: version })
        yield* store.insert(record(2))
        yield* store.remove(record(2).id)
      }).pipe(Effect.provide(VerificationStore.layerFiles(dir)))
      const journal = join(dir, "verifications", "journal.ndjson")
      appendFileSync(journal, '{"r":{"id":"ver_torn')
      const records = yield* reopen(dir)
      expect(records.map((r) => [r.id, r.attempts])).toEqual([[record(1).id, 20]])
      // Compacted at start: one line per live record.
      expect(readFileSync(journal, "utf8").trim().split("\n")).toHaveLength(1)
    })
  )

  it.effect("refuses to start on a damaged line before the last, naming it", () =>
    Effect.gen(function* () {
      const dir = dataDir()
      yield* Effect.gen(function* () {
        yield* (yield* VerificationStore).insert(record(1))
      }).pipe(Effect.provide(VerificationStore.layerFiles(dir)))
      const journal = join(dir, "verifications", "journal.ndjson")
      writeFileSync(journal, `not json\n${readFileSync(journal, "utf8")}`)
      const error = yield* Effect.flip(reopen(dir))
      expect(error.message).toContain("load")
      expect(String((error.cause as Error).message)).toContain("journal.ndjson:1")
    })
  )
})

/** Opens the store as a daemon on Redis under `prefix` does (each call another daemon's), in the test's scope. */
const openRedisStore = (prefix: string) =>
  Effect.map(
    Layer.build(verificationStoreRedis.pipe(Layer.provide(testRedisLayer(prefix)))),
    Context.get(VerificationStore)
  )

describeRedis("the Redis adapter across daemons", () => {
  it.effect("two daemons' stores on one Redis decide a limit together: exactly the limit of 50 inserts at once", () =>
    Effect.gen(function* () {
      const prefix = testPrefix()
      const open = openRedisStore(prefix)
      const [one, two] = [yield* open, yield* open]
      const asked = (n: number) => ({ ...record(300 + n), messagesAt: [1_000 + n] })
      const limits = [{ key: messageBudgetKey(asked(0)), max: 5, since: 0 }]
      const outcomes = yield* Effect.all(
        Array.from({ length: 50 }, (_, n) =>
          Effect.match((n % 2 === 0 ? one : two).insert(asked(n), limits), {
            onSuccess: () => "stored",
            onFailure: (error) => error._tag
          })
        ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "stored")).toHaveLength(5)
      expect(outcomes.filter((outcome) => outcome === "LimitExceeded")).toHaveLength(45)
    }).pipe(Effect.scoped)
  )

  it.effect("lists the units of records stored before units were kept, when a daemon starts", () =>
    Effect.gen(function* () {
      const prefix = testPrefix()
      const open = openRedisStore(prefix)
      const first = yield* open
      const asked = (n: number) => ({ ...record(400 + n), messagesAt: [1_000 + n] })
      for (let n = 0; n < 3; n++) yield* first.insert(asked(n))
      // As an older daemon left them: records without units.
      yield* Effect.gen(function* () {
        const redis = yield* Redis
        for (const key of yield* redis.send<Array<string>>("KEYS", `${prefix}verifications:units*`))
          yield* redis.send("DEL", key)
      }).pipe(Effect.provide(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })), Effect.scoped)
      const limits = [{ key: messageBudgetKey(asked(0)), max: 3, since: 0 }]
      yield* first.insert(asked(3), limits)
      const restarted = yield* open
      expect(yield* Effect.flip(restarted.insert(asked(4), limits))).toBeInstanceOf(LimitExceeded)
    }).pipe(Effect.scoped)
  )
})

/** Opens the store as a daemon on PostgreSQL at `url` does (each call another daemon's pool), in the test's scope. */
const openPostgresStore = (url: string) =>
  Effect.map(
    Layer.build(
      VerificationPostgres.layerPostgres.pipe(
        Layer.provide(postgresStoreLayer({ url, migrations: VerificationPostgres.migrations })),
        Layer.orDie
      )
    ),
    Context.get(VerificationStore)
  )

describePostgres("the PostgreSQL adapter across daemons", () => {
  it.live("two daemons' stores on one database decide a limit together: exactly the limit of 50 inserts at once", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const [one, two] = [yield* openPostgresStore(database.url), yield* openPostgresStore(database.url)]
      const asked = (n: number) => ({ ...record(300 + n), messagesAt: [1_000 + n] })
      const limits = [{ key: messageBudgetKey(asked(0)), max: 5, since: 0 }]
      const outcomes = yield* Effect.all(
        Array.from({ length: 50 }, (_, n) =>
          Effect.match((n % 2 === 0 ? one : two).insert(asked(n), limits), {
            onSuccess: () => "stored",
            onFailure: (error) => error._tag
          })
        ),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "stored")).toHaveLength(5)
      expect(outcomes.filter((outcome) => outcome === "LimitExceeded")).toHaveLength(45)
      expect(yield* two.byAddress("a".repeat(64))).toHaveLength(5)
    }).pipe(Effect.scoped)
  )

  it.live("a record replaced and removed at once, by two daemons, ends removed without a deadlock", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const [one, two] = [yield* openPostgresStore(database.url), yield* openPostgresStore(database.url)]
      const records = Array.from({ length: 30 }, (_, n) => ({ ...record(500 + n), messagesAt: [1_000 + n] }))
      for (const stored of records) yield* one.insert(stored)
      const limits = [{ key: messageBudgetKey(records[0]!), max: 100, since: 0 }]
      yield* Effect.all(
        records.flatMap((stored) => [
          Effect.ignore(one.replace({ ...stored, version: 1, attempts: 1 }, limits)),
          two.remove(stored.id)
        ]),
        { concurrency: "unbounded" }
      )
      expect(yield* two.list()).toEqual([])
    }).pipe(Effect.scoped)
  )

  it.live("a write the database does not answer in time fails as the store's outage, not a hang", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const store = yield* openPostgresStore(database.url)
      yield* holdingLock(database.url, "campusgate_verification_records")
      const error = yield* Effect.flip(store.insert(record(1)))
      expect(error._tag).toBe("VerificationStoreError")
      expect(isStoreOutage(error)).toBe(true)
    }).pipe(Effect.scoped)
  )
})
