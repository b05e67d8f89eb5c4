import { spawn } from "node:child_process"
import { appendFileSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { canonicalAddress } from "../../src/engine/email/canonical.ts"
import { parseEmail } from "../../src/engine/email/parseEmail.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { JobQueue, type JobQueueOptions } from "../../src/jobs/JobQueue.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import { jobFilePath } from "../../src/jobs/JobStoreFiles.ts"
import { captureLog } from "../observability/logCapture.ts"
import { crashInput, makeDataDir, queueLayer, request, resultLines } from "./jobTesting.ts"

const expectedDuplicates = (emails: ReadonlyArray<string>): number => {
  const seen = new Set<string>()
  let duplicates = 0
  for (const email of emails) {
    const parsed = parseEmail(email)
    if (!parsed.ok) continue
    const canonical = canonicalAddress(parsed.email)
    if (seen.has(canonical)) duplicates++
    else seen.add(canonical)
  }
  return duplicates
}

/** Runs the child until it reports progress, then kills it with SIGKILL; answers the job id. */
const crashMidJob = (dataDir: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("crashJobWorker.ts", import.meta.url)), dataDir])
    let output = ""
    child.stderr.on("data", (data) => {
      output += String(data)
    })
    child.stdout.on("data", (data) => {
      output += String(data)
      const jobId = /job (\S+)\n/.exec(output)?.[1]
      if (jobId !== undefined && output.includes("progress\n")) {
        child.kill("SIGKILL")
        child.once("exit", () => resolve(jobId))
      }
    })
    child.once("exit", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`the child exited early (${code}): ${output}`))
    })
  })

/** A fresh queue over the crashed data directory: it resumes the job; check what it leaves. */
const resumeAndCheck = (dataDir: string, jobId: string, input: ReadonlyArray<InputItem>) =>
  Effect.gen(function* () {
    const store = yield* JobStore
    const killed = (yield* store.read(jobId as never))!
    expect(killed.status).toBe("running")
    expect(killed.checkpoint.processed).toBeGreaterThan(0)
    expect(killed.checkpoint.processed).toBeLessThan(input.length)
    // What an interrupted append may leave past the checkpoint is cut off at resume.
    appendFileSync(jobFilePath(dataDir, killed.jobId, "results"), '{"email":"torn')
    const done = yield* (yield* JobQueue).awaitFinished("acme", jobId)
    expect(done.status).toBe("completed")
    const rows = yield* resultLines(done.jobId)
    expect(rows.length).toBe(input.length)
    let mismatches = 0
    for (let i = 0; i < input.length; i++) {
      const item = input[i]!
      if (rows[i]!.email !== (typeof item === "string" ? item : "bad" in item ? item.bad : item.email)) mismatches++
    }
    expect(mismatches).toBe(0)
    const emails = input.filter((item): item is string => typeof item === "string")
    expect(done.counts).toEqual({
      valid: rows.filter((row) => row.isValid).length,
      invalid: rows.filter((row) => !row.isValid).length,
      duplicates: expectedDuplicates(emails),
      badInput: input.length - emails.length
    })
  })

describe("job resume", () => {
  it.live(
    "after SIGKILL mid-job: the next queue finishes it with each input exactly once, in order",
    () => {
      const dataDir = makeDataDir()
      return Effect.gen(function* () {
        const jobId = yield* Effect.promise(() => crashMidJob(dataDir))
        const log = captureLog()
        yield* resumeAndCheck(dataDir, jobId, crashInput()).pipe(
          Effect.provide(queueLayer(dataDir, { chunkItems: 20_000 }).pipe(Layer.provide(log.layer)))
        )
        const [resumed, started] = log.lines()
        expect(resumed).toMatchObject({ msg: "job resumed", jobId, processed: expect.any(Number) })
        expect(resumed!.processed).toBeGreaterThan(0)
        expect(started).toMatchObject({ msg: "job started", jobId, processed: resumed!.processed })
      })
    },
    60_000
  )

  it.effect("re-enqueues queued jobs and re-delivers undelivered callbacks at start", () => {
    const dataDir = makeDataDir()
    const delivered: Array<string> = []
    const onFinished: JobQueueOptions["onFinished"] = (job, record) =>
      Effect.gen(function* () {
        delivered.push(job.jobId)
        yield* record({
          url: job.callback!.url,
          delivered: true,
          attempts: [{ at: "2026-01-01T00:00:00Z", delivered: true }]
        })
      })
    const firstRun = Effect.gen(function* () {
      const queue = yield* JobQueue
      return (yield* queue.submit(yield* request(["a@mit.edu"], { callbackUrl: "https://hooks.samples/x" }))).job
    }).pipe(Effect.provide(queueLayer(dataDir, { concurrency: 0 })))
    const secondRun = (jobId: string) =>
      Effect.gen(function* () {
        const queue = yield* JobQueue
        const done = yield* queue.awaitFinished("acme", jobId)
        expect(done.status).toBe("completed")
        // The delivery state is written as the hook records it (the store's write completes off this thread).
        while (!(yield* queue.get("acme", jobId)).callback?.delivered) yield* Effect.yieldNow
        expect(delivered).toEqual([jobId])
        expect((yield* queue.get("acme", jobId)).callback).toMatchObject({ delivered: true })
        expect(readFileSync(jobFilePath(dataDir, jobId, "record"), "utf8")).toContain('"delivered":true')
      }).pipe(Effect.provide(queueLayer(dataDir, { onFinished })))
    return Effect.gen(function* () {
      const queued = yield* firstRun
      expect(queued.status).toBe("queued")
      yield* secondRun(queued.jobId)
    })
  })
})
