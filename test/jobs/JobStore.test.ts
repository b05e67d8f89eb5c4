import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type JobId, newJob } from "../../src/jobs/Job.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../../src/jobs/JobStoreFiles.ts"
import { captureLog } from "../observability/logCapture.ts"
import { bytesText, fileText, inputText, makeDataDir, staged, storeAdapters } from "./jobTesting.ts"

const job = (id: string) =>
  newJob({
    jobId: `job_${id.padStart(32, "0")}` as JobId,
    team: "acme" as never,
    target: { targetGroupId: "edu" as never },
    total: 2,
    createdAt: "2026-01-01T00:00:00.000Z"
  })

/** Creates job `id` in `jobs` with one email as its input; answers the job. */
const createdWithOneEmail = (jobs: JobStore["Service"], id: string) =>
  Effect.gen(function* () {
    const created = job(id)
    yield* jobs.create(created, yield* staged(inputText(["a@x.edu"])))
    return created
  })

describe.each(storeAdapters)("JobStore contract (%s)", (_, store) => {
  it.effect("creates a job from a staged upload, reads, rewrites, lists and removes it", () =>
    Effect.gen(function* () {
      const jobs = yield* JobStore
      const first = job("1")
      const upload = yield* staged(inputText(["a@x.edu", "b"]))
      yield* jobs.create(first, upload)
      expect(() => upload.bytes.size()).toThrow() // consumed
      expect(yield* fileText(first.jobId, "input")).toBe('"a@x.edu"\n"b"\n')
      expect(yield* jobs.read(first.jobId)).toEqual(first)
      yield* jobs.write({ ...first, status: "running" })
      expect((yield* jobs.read(first.jobId))?.status).toBe("running")
      const second = job("2")
      yield* jobs.create(second, yield* staged(inputText(["c@x.edu"])))
      expect((yield* jobs.list()).map((j) => j.jobId).sort()).toEqual([first.jobId, second.jobId])
      yield* jobs.remove(first.jobId)
      expect(yield* jobs.read(first.jobId)).toBeUndefined()
      expect((yield* Effect.flip(jobs.open(first.jobId, "input"))).operation).toBe("open")
      expect((yield* jobs.list()).map((j) => j.jobId)).toEqual([second.jobId])
      yield* jobs.remove(first.jobId) // removing twice is no error
      expect(yield* jobs.read(job("9").jobId)).toBeUndefined()
    }).pipe(Effect.provide(store()))
  )

  it.effect("keeps results apart from input: created empty, appended, cut back, seen by every handle", () =>
    Effect.gen(function* () {
      const jobs = yield* JobStore
      const created = yield* createdWithOneEmail(jobs, "3")
      expect(yield* fileText(created.jobId, "results")).toBe("")
      const writer = yield* jobs.open(created.jobId, "results")
      const rows = Buffer.from('{"email":"a"}\n{"email":"b"}\n')
      writer.write(rows, 0, rows.length, 0)
      yield* Effect.promise(() => writer.flush())
      expect(yield* fileText(created.jobId, "results")).toBe(rows.toString())
      writer.truncate(14)
      const reader = yield* jobs.open(created.jobId, "results")
      expect(bytesText(reader)).toBe('{"email":"a"}\n')
      expect(reader.read(Buffer.alloc(10), 0, 10, 14)).toBe(0) // past the end
      writer.close()
      reader.close()
      expect(() => writer.size()).toThrow()
      expect(yield* fileText(created.jobId, "input")).toBe('"a@x.edu"\n')
    }).pipe(Effect.provide(store()))
  )

  it.effect("writes parts one after another at a position, views into larger buffers included", () =>
    Effect.gen(function* () {
      const jobs = yield* JobStore
      const created = yield* createdWithOneEmail(jobs, "4")
      const writer = yield* jobs.open(created.jobId, "results")
      const encoded = Buffer.from('xx{"email":"a"}\n{"email":"b"}\nyy')
      expect(writer.writeParts([], 0)).toBe(0)
      expect(
        writer.writeParts([encoded.subarray(2, 14), Buffer.from(',"duplicateOf":1'), encoded.subarray(14, 16)], 0)
      ).toBe(30)
      expect(writer.writeParts([encoded.subarray(16, 30), new Uint8Array(0)], 30)).toBe(14)
      yield* Effect.promise(() => writer.flush())
      expect(yield* fileText(created.jobId, "results")).toBe('{"email":"a","duplicateOf":1}\n{"email":"b"}\n')
      writer.close()
    }).pipe(Effect.provide(store()))
  )

  it.effect("discards a staged upload that became no job", () =>
    Effect.gen(function* () {
      const jobs = yield* JobStore
      const upload = yield* staged("partial")
      yield* jobs.discard(upload)
      expect(() => upload.bytes.size()).toThrow()
      yield* jobs.discard(upload) // twice is no error
      expect(yield* jobs.list()).toEqual([])
    }).pipe(Effect.provide(store()))
  )

  it.effect("a record is replaced whole and read back as written", () =>
    Effect.gen(function* () {
      const jobs = yield* JobStore
      const created = job("4")
      yield* jobs.create(created, yield* staged(""))
      const finished = {
        ...created,
        status: "completed" as const,
        finishedAt: "2026-01-01T00:01:00.000Z",
        expiresAt: "2026-01-02T00:01:00.000Z",
        callback: { url: "https://hooks.samples/x", delivered: true, attempts: [] }
      }
      yield* jobs.write(finished)
      expect(yield* jobs.read(created.jobId)).toEqual(finished)
    }).pipe(Effect.provide(store()))
  )
})

describe("JobStore files: the data directory's layout and what a crash leaves", () => {
  it.effect("keeps a job in jobs/<id>/ with input.ndjson, results.ndjson and job.json; removal leaves nothing", () => {
    const dataDir = makeDataDir()
    return Effect.gen(function* () {
      const jobs = yield* JobStore
      const created = job("1")
      const upload = yield* staged(inputText(["a@x.edu"]))
      yield* jobs.create(created, upload)
      expect(readdirSync(JobStoreFiles.jobsDirectory(dataDir))).toEqual([created.jobId])
      expect(readFileSync(JobStoreFiles.jobFilePath(dataDir, created.jobId, "input"), "utf8")).toBe('"a@x.edu"\n')
      expect(
        JSON.parse(readFileSync(JobStoreFiles.jobFilePath(dataDir, created.jobId, "record"), "utf8"))
      ).toMatchObject({
        jobId: created.jobId
      })
      yield* jobs.remove(created.jobId)
      expect(readdirSync(JobStoreFiles.jobsDirectory(dataDir))).toEqual([])
      const discarded = yield* staged("partial")
      yield* jobs.discard(discarded)
      expect(readdirSync(JobStoreFiles.jobsDirectory(dataDir))).toEqual([])
    }).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))
  })

  it.effect("at list, removes what a crash left: a directory without a record, uploads, half-deleted jobs", () => {
    const dataDir = makeDataDir()
    const log = captureLog()
    return Effect.gen(function* () {
      const jobs = yield* JobStore
      const kept = job("3")
      yield* jobs.create(kept, yield* staged(""))
      const root = JobStoreFiles.jobsDirectory(dataDir)
      const orphan = join(root, job("4").jobId)
      mkdirSync(orphan)
      writeFileSync(join(orphan, "input.ndjson"), '"a@x.edu"\n')
      const abandoned = yield* staged("partial") // an upload a crash interrupted
      mkdirSync(join(root, ".job_5.1234.deleted"))
      writeFileSync(join(root, kept.jobId, ".job.json.abc.tmp"), "{")
      mkdirSync(join(root, "not-a-job"))
      const unreadable = job("6")
      mkdirSync(join(root, unreadable.jobId))
      writeFileSync(join(root, unreadable.jobId, "job.json"), '{"jobId": 1}')
      expect((yield* jobs.list()).map((j) => j.jobId)).toEqual([kept.jobId])
      expect(readdirSync(root).sort()).toEqual([kept.jobId, unreadable.jobId, "not-a-job"].sort())
      abandoned.bytes.close()
      // The unreadable record is kept for a person to look at, and the log says where.
      expect(log.lines()).toEqual([
        expect.objectContaining({
          level: "warn",
          msg: "a job record cannot be read; the job is left alone",
          file: `jobs/${unreadable.jobId}/job.json`
        })
      ])
    }).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)), Effect.provide(log.layer))
  })

  it.effect("fails with JobStoreError, naming what it tried, and leaves nothing behind", () => {
    const dataDir = makeDataDir()
    writeFileSync(JobStoreFiles.jobsDirectory(dataDir), "not a directory")
    return Effect.gen(function* () {
      const jobs = yield* JobStore
      const failed = yield* Effect.flip(jobs.stage())
      expect(failed).toMatchObject({ _tag: "JobStoreError", operation: "stage" })
      expect(failed.message).toMatch(/ENOTDIR|EEXIST/)
      expect(yield* Effect.flip(jobs.list())).toMatchObject({ _tag: "JobStoreError", operation: "list" })
      expect(yield* Effect.flip(jobs.open(job("3").jobId, "results"))).toMatchObject({ operation: "open" })
      expect(readFileSync(JobStoreFiles.jobsDirectory(dataDir), "utf8")).toBe("not a directory")
    }).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))
  })

  it.effect("a create that fails removes its upload", () => {
    const dataDir = makeDataDir()
    return Effect.gen(function* () {
      const jobs = yield* JobStore
      const created = job("7")
      const upload = yield* staged(inputText(["a@x.edu"]))
      // The job's directory cannot be made: a file is in its way.
      writeFileSync(join(JobStoreFiles.jobsDirectory(dataDir), created.jobId), "in the way")
      const failed = yield* Effect.flip(jobs.create(created, upload))
      expect(failed).toMatchObject({ _tag: "JobStoreError", operation: "create", jobId: created.jobId })
      expect(readdirSync(JobStoreFiles.jobsDirectory(dataDir))).toEqual([created.jobId])
      expect(existsSync(join(JobStoreFiles.jobsDirectory(dataDir), created.jobId, "job.json"))).toBe(false)
    }).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))
  })
})
