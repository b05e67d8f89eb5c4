import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { generateApiKey } from "../../src/keys/apiKeys.ts"
import { Log, type LogSettings, type LogSink } from "../../src/observability/Log.ts"
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

/** An output whose writes finish only when the test says so, as a slow disk or a full pipe would. */
const slowSink = () => {
  const written: Array<string> = []
  const waiting: Array<{ text: string; done: () => void }> = []
  const sink: LogSink = {
    write: (text, done) => {
      waiting.push({ text, done })
    },
    writeSync: (text) => {
      written.push(text)
    }
  }
  /** Finishes the writes in flight, in order. */
  const finish = () => {
    for (const write of waiting.splice(0)) {
      written.push(write.text)
      write.done()
    }
  }
  return { sink, written, waiting, finish, text: () => written.join("") }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("request lines", () => {
  it("are written at the end of the turn in one write, before any event line that follows", async () => {
    const { log, chunks } = captureLog(info)
    log.request("r1\n")
    log.request("r2\n")
    expect(chunks).toEqual([])
    await turn()
    expect(chunks).toEqual(["r1\nr2\n"])
    log.request("r3\n")
    log.write("info", "stopping")
    expect(chunks.slice(1).join("")).toMatch(/^r3\n\{.*"msg":"stopping"\}\n$/)
  })

  it("gather for 50 ms after a write into the next one", async () => {
    const { log, chunks } = captureLog(info)
    log.request("r1\n")
    await turn()
    log.request("r2\n")
    await turn()
    log.request("r3\n")
    await turn()
    expect(chunks).toEqual(["r1\n"])
    await pause(20)
    expect(chunks).toEqual(["r1\n"])
    await pause(50)
    expect(chunks).toEqual(["r1\n", "r2\nr3\n"])
  })

  it("do not wait for a slow output: one write in flight, the rest gathered behind it in order", async () => {
    const slow = slowSink()
    // Writes 10 ms apart at most, so the pauses below outlast the interval.
    const { log } = Log.make(info, slow.sink, { writeIntervalMs: 10 })
    log.request("r1\n")
    await turn()
    expect(slow.waiting.map((write) => write.text)).toEqual(["r1\n"])
    const started = performance.now()
    for (let i = 2; i <= 1000; i++) log.request(`r${i}\n`)
    log.write("warn", "config change rejected")
    log.request("r1001\n")
    await turn()
    expect(performance.now() - started).toBeLessThan(1000)
    // The output has not finished its first write: nothing more is started.
    expect(slow.waiting).toHaveLength(1)
    slow.finish()
    await pause(20)
    expect(slow.waiting).toHaveLength(1)
    slow.finish()
    const lines = slow.text().split("\n").slice(0, -1)
    expect(lines).toHaveLength(1002)
    expect(lines.slice(0, 1000)).toEqual(Array.from({ length: 1000 }, (_, i) => `r${i + 1}`))
    expect(JSON.parse(lines[1000]!)).toMatchObject({ level: "warn", msg: "config change rejected" })
    expect(lines[1001]).toBe("r1001")
    expect(log.droppedLines()).toBe(0)
  })

  it("are dropped and counted when the queue is full, event lines never; the drop is reported once it drains", async () => {
    const slow = slowSink()
    const { log } = Log.make(info, slow.sink, { queueBytes: 100, writeIntervalMs: 10 })
    log.request("in flight\n")
    await turn()
    const line = (i: number) => `request ${String(i).padStart(3, "0")}\n`
    for (let i = 0; i < 20; i++) log.request(line(i))
    // 100 bytes hold 8 lines of 12; the other 12 are dropped.
    expect(log.droppedLines()).toBe(12)
    log.write("error", "job worker failed")
    log.request(line(99))
    expect(log.droppedLines()).toBe(13)
    for (let i = 0; i < 3; i++) {
      slow.finish()
      await pause(20)
    }
    const lines = slow.text().split("\n").slice(0, -1)
    expect(lines.slice(0, 9)).toEqual(["in flight", ...Array.from({ length: 8 }, (_, i) => line(i).trim())])
    expect(JSON.parse(lines[9]!)).toMatchObject({ level: "error", msg: "job worker failed" })
    expect(JSON.parse(lines[10]!)).toMatchObject({ level: "warn", dropped: 13, droppedTotal: 13 })
    expect(lines).toHaveLength(11)
    expect(slow.waiting).toHaveLength(0)
    // Room again: lines are taken.
    log.request(line(100))
    await pause(20)
    slow.finish()
    expect(slow.text().endsWith(line(100))).toBe(true)
    expect(log.droppedLines()).toBe(13)
  })

  it("are written out, after the write in flight, when the layer is released", () => {
    const slow = slowSink()
    // The output finishes its writes a few milliseconds after they start.
    const finishing = setInterval(slow.finish, 5)
    return Effect.gen(function* () {
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(Log.layer(info, slow.sink))
          const log = Context.get(context, Log)
          log.request("first\n")
          yield* Effect.promise(turn)
          log.request("last\n")
          log.write("info", "stopped")
        })
      )
      clearInterval(finishing)
      const lines = slow.text().split("\n")
      expect(lines[0]).toBe("first")
      expect(lines[1]).toBe("last")
      expect(JSON.parse(lines[2]!)).toMatchObject({ msg: "stopped" })
    }).pipe(Effect.runPromise)
  })

  it("are written out synchronously by flush, a write in flight left to finish", async () => {
    const slow = slowSink()
    const { log, flush } = Log.make(info, slow.sink)
    log.request("a\n")
    await turn()
    log.request("b\n")
    log.write("info", "c")
    flush()
    expect(slow.written[0]).toMatch(/^b\n\{.*"msg":"c"\}\n$/)
  })
})

describe("standard output's sink", () => {
  const script = (path: string, body: string) => `
    import { Log, fdSink } from ${JSON.stringify(new URL("../../src/observability/Log.ts", import.meta.url).pathname)}
    import { openSync } from "node:fs"
    const { log } = Log.make({ level: "info", logEmails: false }, fdSink(openSync(${JSON.stringify(path)}, "w")))
    ${body}
  `
  const run = (body: string) => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-log-"))
    const path = join(dir, "out.log")
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script(path, body)], { encoding: "utf8" })
    const text = readFileSync(path, "utf8")
    rmSync(dir, { recursive: true, force: true })
    return { text, status: child.status }
  }

  it("writes every line in order, asynchronously", () => {
    const { text, status } = run(`
      for (let i = 0; i < 5000; i++) log.request("r" + i + "\\n")
      log.write("info", "done")
      setTimeout(() => {}, 50)
    `)
    expect(status).toBe(0)
    const lines = text.split("\n").slice(0, -1)
    expect(lines.slice(0, 5000)).toEqual(Array.from({ length: 5000 }, (_, i) => `r${i}`))
    expect(JSON.parse(lines[5000]!)).toMatchObject({ msg: "done" })
  })

  it("writes out what is queued when the process crashes", () => {
    const { text, status } = run(`
      log.request("r1\\n")
      log.write("error", "about to fail")
      log.request("r2\\n")
      throw new Error("boom")
    `)
    expect(status).not.toBe(0)
    const lines = text.split("\n").slice(0, -1)
    expect(lines[0]).toBe("r1")
    expect(JSON.parse(lines[1]!)).toMatchObject({ msg: "about to fail" })
    expect(lines[2]).toBe("r2")
  })
})
