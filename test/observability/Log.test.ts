import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { generateApiKey } from "../../src/keys/apiKeys.ts"
import { Log, type LogSettings } from "../../src/observability/Log.ts"
import { RequestLogger } from "../../src/server/RequestLogger.ts"
import { captureLog } from "./logCapture.ts"

const info: LogSettings = { level: "info", logEmails: false }

describe("the log's level", () => {
  it("drops lines below the minimum and keeps the rest", () => {
    const { log, lines } = captureLog(info)
    log.write("debug", "details")
    log.write("info", "listening")
    log.write("warn", "config change rejected")
    log.write("error", "job worker failed")
    expect(lines().map((line) => [line.level, line.msg])).toEqual([
      ["info", "listening"],
      ["warn", "config change rejected"],
      ["error", "job worker failed"]
    ])
    expect(log.enabled("debug")).toBe(false)
    expect(log.enabled("info")).toBe(true)
  })

  it.effect(
    "applies to Effect's logging once the layer installs the log, and follows a reconfiguration at once",
    () => {
      const { chunks, lines, layer } = captureLog(info)
      return Effect.gen(function* () {
        const log = yield* Log
        yield* Effect.logDebug("dropped at info")
        yield* Effect.logInfo("kept at info")
        yield* Effect.logWarning("kept at info too")
        log.configure({ level: "debug", logEmails: false })
        yield* Effect.logDebug("kept at debug")
        log.configure({ level: "error", logEmails: false })
        yield* Effect.logWarning("dropped at error")
        expect(lines().map((line) => [line.level, line.msg])).toEqual([
          ["info", "kept at info"],
          ["warn", "kept at info too"],
          ["debug", "kept at debug"]
        ])
        expect(chunks.join("")).not.toContain("dropped")
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("drops request lines below info", () => {
    const settings = { level: "warn", logEmails: false } as const
    const { chunks, layer } = captureLog(settings)
    return Effect.gen(function* () {
      const requests = yield* RequestLogger
      const log = yield* Log
      const entry = { method: "GET", path: "/healthz", status: 200, durationMs: 1, requestId: "r1" }
      requests.log(entry)
      log.configure({ level: "info", logEmails: false })
      requests.log({ ...entry, requestId: "r2" })
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(chunks.join("")).not.toContain('"r1"')
      expect(chunks.join("")).toContain('"requestId":"r2"')
    }).pipe(Effect.provide(RequestLogger.layer.pipe(Layer.provideMerge(layer))))
  })
})

describe("an Effect log line", () => {
  it.effect(
    "has the message as msg, plain objects and annotations as fields, other values as details, a cause as cause",
    () => {
      const { lines, layer } = captureLog(info)
      return Effect.gen(function* () {
        yield* Effect.logInfo("job started", { jobId: "job_1", total: 3 }).pipe(Effect.annotateLogs({ worker: 2 }))
        yield* Effect.logError("job run failed unexpectedly", { jobId: "job_2" }, Cause.die(new Error("boom")))
        yield* Effect.logWarning("odd", 42)
        const [started, failed, odd] = lines()
        expect(started).toEqual({
          time: expect.any(String),
          level: "info",
          msg: "job started",
          worker: 2,
          jobId: "job_1",
          total: 3
        })
        expect(failed).toMatchObject({ level: "error", msg: "job run failed unexpectedly", jobId: "job_2" })
        expect(String(failed!.cause)).toContain("boom")
        expect(odd).toMatchObject({ level: "warn", msg: "odd", details: 42 })
      }).pipe(Effect.provide(layer))
    }
  )
})

describe("what a line may hold", () => {
  const { key } = generateApiKey()

  it("shows an address as its domain unless logEmails, and never an API key", () => {
    const off = captureLog(info)
    const on = captureLog({ level: "info", logEmails: true })
    for (const { log } of [off, on]) {
      log.write("warn", "config change rejected; the last good config keeps serving", {
        problems: ["target-groups/uk.yaml:7:5 examples.valid[0]: jane.doe@ox.ac.uk is refused"],
        header: `Bearer ${key}`
      })
    }
    expect(off.lines()[0]).toMatchObject({
      problems: ["target-groups/uk.yaml:7:5 examples.valid[0]: ***@ox.ac.uk is refused"],
      header: "Bearer cgk_***"
    })
    expect(on.lines()[0]).toMatchObject({
      problems: ["target-groups/uk.yaml:7:5 examples.valid[0]: jane.doe@ox.ac.uk is refused"],
      header: "Bearer cgk_***"
    })
  })

  it.effect("masks Effect log lines the same way, messages and causes included", () => {
    const { chunks, layer } = captureLog(info)
    return Effect.gen(function* () {
      yield* Effect.logWarning(
        "refused jane.doe@ox.ac.uk",
        { nested: { list: [`${key}`] } },
        Cause.fail(new Error("kim@mit.edu"))
      )
      const text = chunks.join("")
      expect(text).not.toContain("jane.doe")
      expect(text).not.toContain("kim@")
      expect(text).not.toContain(key)
      expect(text).toContain("***@ox.ac.uk")
    }).pipe(Effect.provide(layer))
  })

  it("shows the bootstrap key, once, whatever the level, still masking addresses", () => {
    const { log, lines } = captureLog({ level: "error", logEmails: false })
    log.writeSecret("created the first API key; it is shown only this once", { key, storedIn: "/data/jane@ox.ac.uk" })
    expect(lines()).toEqual([expect.objectContaining({ level: "info", key, storedIn: "/data/***@ox.ac.uk" })])
  })
})

describe("batched request lines", () => {
  it("are written at the end of the turn in one write, before any event line that follows", async () => {
    const { log, chunks } = captureLog(info)
    log.batch("r1\n")
    log.batch("r2\n")
    expect(chunks).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(chunks).toEqual(["r1\nr2\n"])
    log.batch("r3\n")
    log.write("info", "stopping")
    expect(chunks.slice(1, 2)).toEqual(["r3\n"])
    expect(chunks[2]).toContain('"msg":"stopping"')
  })

  it.effect("are written when the layer is released", () => {
    const { chunks, layer } = captureLog(info)
    return Effect.gen(function* () {
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(layer)
          const log = Context.get(context, Log)
          log.batch("last\n")
          expect(chunks).toEqual([])
        })
      )
      expect(chunks).toEqual(["last\n"])
    })
  })
})
