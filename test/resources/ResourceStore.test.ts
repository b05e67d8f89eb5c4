import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { sourceOf } from "../../src/app/Resources.ts"
import { LiveSnapshot } from "../../src/app/Snapshot.ts"
import { directorySource, loadDirectory } from "../../src/app/sources.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import { resourcePath } from "../../src/resources/resourceFiles.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { layerRedis as resourceStoreRedis } from "../../src/resources/resourceRedis.ts"
import { offerDocument, targetGroupDocument } from "../../src/resources/resourceYaml.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { makeDirs, validConfig } from "../config/configFiles.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const tempDir = () => mkdtempSync(join(tmpdir(), "campusgate-resources-"))

/** The contract every adapter keeps. */
const contract = storeContract("ResourceStore", (makeLayer: () => Layer.Layer<ResourceStore>) => {
  it.effect("holds nothing at first", () =>
    Effect.gen(function* () {
      const store = yield* ResourceStore
      expect(yield* store.list("targetGroup")).toEqual([])
      expect(yield* store.list("offer")).toEqual([])
      expect(yield* store.read("offer", "spring")).toBeUndefined()
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("keeps each kind apart, lists in id order, reads back the text written", () =>
    Effect.gen(function* () {
      const store = yield* ResourceStore
      yield* store.write("offer", "b-offer", "id: b-offer\n")
      yield* store.write("offer", "a-offer", "id: a-offer\n")
      yield* store.write("targetGroup", "a-offer", "id: a-offer\nname: group\n")
      expect((yield* store.list("offer")).map((document) => [document.id, document.text])).toEqual([
        ["a-offer", "id: a-offer\n"],
        ["b-offer", "id: b-offer\n"]
      ])
      expect((yield* store.read("targetGroup", "a-offer"))?.text).toBe("id: a-offer\nname: group\n")
      const document = yield* store.read("offer", "b-offer")
      expect(document).toMatchObject({ kind: "offer", id: "b-offer" })
      expect(document?.location).toMatch(/b-offer/)
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("replaces a document whole and removes it; removing what is not there is no error", () =>
    Effect.gen(function* () {
      const store = yield* ResourceStore
      yield* store.write("offer", "spring", "version: 1\n")
      yield* store.write("offer", "spring", "version: 2\n")
      expect((yield* store.list("offer")).map((document) => document.text)).toEqual(["version: 2\n"])
      yield* store.remove("offer", "spring")
      yield* store.remove("offer", "spring")
      expect(yield* store.read("offer", "spring")).toBeUndefined()
      expect(yield* store.list("offer")).toEqual([])
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("writes over an expected document only: none for a new id, the text read for a change", () =>
    Effect.gen(function* () {
      const store = yield* ResourceStore
      expect(yield* store.write("offer", "spring", "version: 1\n", null)).toBe(true)
      // A second creator of the same id, or a change based on an older text, loses and changes nothing.
      expect(yield* store.write("offer", "spring", "version: other\n", null)).toBe(false)
      expect(yield* store.write("offer", "spring", "version: 2\n", "version: 0\n")).toBe(false)
      expect((yield* store.read("offer", "spring"))?.text).toBe("version: 1\n")
      expect(yield* store.write("offer", "spring", "version: 2\n", "version: 1\n")).toBe(true)
      expect((yield* store.read("offer", "spring"))?.text).toBe("version: 2\n")
    }).pipe(Effect.provide(makeLayer()))
  )

  it.effect("of writers racing over one expected document, exactly one wins", () =>
    Effect.gen(function* () {
      const store = yield* ResourceStore
      const creators = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => store.write("offer", "raced", `creator: ${i}\n`, null)),
        { concurrency: "unbounded" }
      )
      expect(creators.filter(Boolean)).toHaveLength(1)
      const created = (yield* store.read("offer", "raced"))!.text
      const changers = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => store.write("offer", "raced", `changer: ${i}\n`, created)),
        { concurrency: "unbounded" }
      )
      expect(changers.filter(Boolean)).toHaveLength(1)
      expect((yield* store.read("offer", "raced"))?.text).toBe(`changer: ${changers.indexOf(true)}\n`)
    }).pipe(Effect.provide(makeLayer()))
  )
})

contract("memory", () => ResourceStore.layerMemory)
contract("files", () => ResourceStore.layerFiles(tempDir()))
contract("redis", () => resourceStoreRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () =>
    ResourcePostgres.layerPostgres.pipe(
      Layer.provide(testPostgresLayer([...ConfigVersion.migrations, ...ResourcePostgres.migrations]))
    ),
  describePostgres
)

describe("the file store", () => {
  it("fails with ResourceStoreError, changing nothing, when the data directory cannot be written", () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, "offers"), "not a directory")
    const exit = Effect.runSyncExit(ResourceStore.makeFiles(dataDir).write("offer", "spring", "id: spring\n"))
    expect(Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail").toBe(true)
    expect(JSON.stringify(exit.toJSON())).toContain("ResourceStoreError")
    expect(readFileSync(join(dataDir, "offers"), "utf8")).toBe("not a directory")
  })
})

const load = (dirs: { configDir: string; dataDir: string }) => {
  const result = loadDirectory({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.config
}

const snapshotOf = (dirs: { configDir: string; dataDir: string }) => {
  const live = LiveSnapshot.loadSync(directorySource({ ...dirs, env: {} }))
  if (live instanceof InvalidConfiguration) throw live
  return live.current()
}

describe("API-created resources in the data directory", () => {
  it("are written in the config format and loaded back with the config; config-defined ones stay config", () => {
    const dirs = makeDirs(validConfig)
    const store = ResourceStore.makeFiles(dirs.dataDir)
    const before = load(dirs)
    const group = { ...before.targetGroups[0]!, id: "eu" as never, name: "EU students" }
    const offer = { ...before.offers[0]!, id: "summer" as never, targetGroups: ["eu" as never] }
    Effect.runSync(store.write("targetGroup", "eu", targetGroupDocument(group)))
    Effect.runSync(store.write("offer", "summer", offerDocument(offer)))
    const text = readFileSync(resourcePath(dirs.dataDir, "targetGroup", "eu"), "utf8")
    expect(text).toMatch(/^# Created through the Campusgate API/)
    const after = load(dirs)
    expect(after.targetGroups.find((g) => g.id === "eu")).toEqual(group)
    expect(after.offers.map((o) => o.id)).toEqual(["spring", "summer"])
    const snapshot = snapshotOf(dirs)
    expect(sourceOf(snapshot, "targetGroup", "eu")).toBe("api")
    expect(sourceOf(snapshot, "targetGroup", "uk")).toBe("config")
    Effect.runSync(store.remove("offer", "summer"))
    expect(load(dirs).offers.map((o) => o.id)).toEqual(["spring"])
  })

  it("report a broken document with its file and line, like a config file", () => {
    const dirs = makeDirs(validConfig)
    Effect.runSync(ResourceStore.makeFiles(dirs.dataDir).write("offer", "broken", "id: broken\nname: 3\n"))
    const result = loadDirectory({ ...dirs, env: {} })
    expect(result.ok).toBe(false)
    expect(!result.ok && result.problems.some((problem) => problem.file?.endsWith("offers/broken.yaml"))).toBe(true)
  })

  it("survive a crash mid-write: the file is one whole version, leftovers are ignored at load", async () => {
    const dirs = makeDirs(validConfig)
    const writer = spawn(process.execPath, [fileURLToPath(new URL("crashWriter.ts", import.meta.url)), dirs.dataDir])
    await new Promise<void>((resolve) => writer.stdout.once("data", () => resolve()))
    await new Promise((resolve) => setTimeout(resolve, 300))
    writer.kill("SIGKILL")
    await new Promise((resolve) => writer.once("exit", resolve))
    const directory = join(dirs.dataDir, "target-groups")
    const text = readFileSync(join(directory, "crash.yaml"), "utf8")
    expect(text).toMatch(/^name: (first|second)$/m)
    const config = load(dirs)
    const group = config.targetGroups.find((g) => g.id === "crash")!
    expect(group.description).toBe(`${group.name} ${"x".repeat(200_000)}`)
    // Whatever temporary files the kill left behind were not loaded as resources.
    expect(readdirSync(directory).filter((name) => !name.endsWith(".tmp"))).toEqual(["crash.yaml"])
  })
})
