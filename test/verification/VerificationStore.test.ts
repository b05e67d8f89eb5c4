import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { VerificationId, VerificationRecord } from "../../src/domain/Verification.ts"
import { VerificationStore } from "../../src/verification/VerificationStore.ts"
import { testRedisLayer, whenRedis } from "../redisTesting.ts"

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

const adapters: ReadonlyArray<readonly [string, () => Layer.Layer<VerificationStore, unknown>]> = [
  ["memory", () => VerificationStore.layerMemory],
  ["files", () => VerificationStore.layerFiles(dataDir())],
  ...whenRedis("VerificationStore contract", [
    ["redis", () => VerificationStore.layerRedis.pipe(Layer.provide(testRedisLayer()))] as const
  ])
]

describe.each(adapters)("VerificationStore contract (%s)", (_, layer) => {
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
