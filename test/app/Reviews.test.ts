import { cpSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { parse } from "yaml"
import { Reviews } from "../../src/app/Reviews.ts"
import { Snapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { ReviewQueue } from "../../src/reviews/ReviewQueue.ts"
import { ReviewStore } from "../../src/reviews/ReviewStore.ts"

const shippedConfig = fileURLToPath(new URL("../../config", import.meta.url))

/** The service over a copy of the shipped config, a memory store and its queue. */
const setup = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-reviews-app-"))
  const configDir = join(root, "config")
  cpSync(shippedConfig, configDir, { recursive: true })
  const dirs = { configDir, dataDir: join(root, "data") }
  const store = Effect.runSync(Effect.provide(Effect.service(ReviewStore), ReviewStore.layerMemory))
  const layer = Reviews.layer("config-or-data").pipe(
    Layer.provideMerge(Snapshot.layerFrom(directorySource(dirs, { reviews: store }))),
    Layer.provideMerge(ReviewQueue.layer({ flushIntervalMs: 60_000 })),
    Layer.provideMerge(Layer.succeed(ReviewStore, store)),
    Layer.orDie
  )
  return { dirs, layer }
}

const reviewer = { team: "acme", keyId: "key_test" }
const request = { name: "Hochschule Musterstadt", type: "university" } as const

describe("Reviews", () => {
  it.effect("approves domains not yet met, pages the approved ones, exports them and writes the dataset", () => {
    const { dirs, layer } = setup()
    return Effect.gen(function* () {
      const reviews = yield* Reviews
      for (const domain of ["a-hochschule.de", "b-hochschule.de", "c-hochschule.de"])
        yield* reviews.approve(reviewer, domain, request)
      const first = yield* reviews.list("acme", { status: "approved", sort: "recent", limit: 2 })
      expect(first.data).toHaveLength(2)
      expect(first.nextCursor).not.toBeNull()
      const second = yield* reviews.list("acme", {
        status: "approved",
        sort: "recent",
        limit: 2,
        cursor: first.nextCursor!
      })
      expect([...first.data, ...second.data].map((review) => review.domain).sort()).toEqual([
        "a-hochschule.de",
        "b-hochschule.de",
        "c-hochschule.de"
      ])
      expect(second.nextCursor).toBeNull()
      expect((yield* reviews.list("globex", { status: "approved" })).data).toEqual([])
      const written = parse(readFileSync(join(dirs.configDir, "datasets", "reviewed.yaml"), "utf8"))
      expect(written.map((entry: { domains: Array<string> }) => entry.domains[0])).toEqual([
        "a-hochschule.de",
        "b-hochschule.de",
        "c-hochschule.de"
      ])
      expect(yield* reviews.exportYaml("acme")).toContain("approvedBy: key_test")
      // The snapshot in force holds them for the team.
      const snapshot = yield* Snapshot
      expect((snapshot.current().config.reviewed ?? []).map((approval) => approval.domain).sort()).toEqual([
        "a-hochschule.de",
        "b-hochschule.de",
        "c-hochschule.de"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "refuses a listed domain (409), a bad domain and a bad cursor (400); a domain never met is not found",
    () => {
      const { layer } = setup()
      return Effect.gen(function* () {
        const reviews = yield* Reviews
        expect((yield* Effect.flip(reviews.approve(reviewer, "ox.ac.uk", request))).reason).toBe("listed")
        expect((yield* Effect.flip(reviews.approve(reviewer, "not a domain", request))).reason).toBe("invalid-domain")
        expect((yield* Effect.flip(reviews.list("acme", { cursor: "nonsense" }))).reason).toBe("invalid-cursor")
        expect((yield* Effect.flip(reviews.get("acme", "never-met-hochschule.de"))).reason).toBe("not-found")
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("a rejection ends an approval, in the store, the file and the snapshot", () => {
    const { dirs, layer } = setup()
    return Effect.gen(function* () {
      const reviews = yield* Reviews
      yield* reviews.approve(reviewer, "a-hochschule.de", request)
      const rejected = yield* reviews.reject(reviewer, "a-hochschule.de", { reason: "a shop" })
      expect(rejected).toMatchObject({ status: "rejected", rejection: { reason: "a shop", rejectedBy: "key_test" } })
      expect(rejected.approval).toBeUndefined()
      expect(readFileSync(join(dirs.configDir, "datasets", "reviewed.yaml"), "utf8")).not.toContain("a-hochschule.de")
      expect((yield* Snapshot).current().config.reviewed).toEqual([])
      expect((yield* reviews.get("acme", "a-hochschule.de")).status).toBe("rejected")
    }).pipe(Effect.provide(layer))
  })
})
