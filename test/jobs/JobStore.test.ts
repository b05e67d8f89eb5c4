import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type JobId, newJob } from "../../src/jobs/Job.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import { jobsDirectory, uploadPath } from "../../src/jobs/jobFiles.ts"
import { captureLog } from "../observability/logCapture.ts"
import { inputText, makeDataDir } from "./jobTesting.ts"

const job = (id: string) =>
  newJob({
    jobId: `job_${id.padStart(32, "0")}` as JobId,
    team: "acme" as never,
    target: { targetGroupId: "edu" as never },
    total: 2,
    createdAt: "2026-01-01T00:00:00.000Z"
  })

describe("JobStore (files)", () => {
  it.effect("creates a job from written or moved input, reads, lists and removes it", () => {
    const dataDir = makeDataDir()
    return Effect.gen(function* () {
      const store = yield* JobStore
      const written = job("1")
      yield* store.create(written, { _tag: "Write", write: (path) => writeFileSync(path, inputText(["a@x.edu", "b"])) })
      const upload = uploadPath(dataDir)
      writeFileSync(upload, inputText(["c@x.edu"]))
      const moved = job("2")
      yield* store.create(moved, { _tag: "Move", path: upload })
      expect(existsSync(upload)).toBe(false)
      expect(readFileSync(store.files(moved.jobId).input, "utf8")).toBe('"c@x.edu"\n')
      expect(yield* store.read(written.jobId)).toEqual(written)
      yield* store.write({ ...written, status: "running" })
      expect((yield* store.read(written.jobId))?.status).toBe("running")
      expect((yield* store.list()).map((j) => j.jobId).sort()).toEqual([written.jobId, moved.jobId])
      yield* store.remove(written.jobId)
      expect(yield* store.read(written.jobId)).toBeUndefined()
      expect(existsSync(store.files(written.jobId).directory)).toBe(false)
      yield* store.remove(written.jobId)
    }).pipe(Effect.provide(JobStore.layerFiles(dataDir)))
  })

  it.effect("at list, removes what a crash left: a directory without a record, uploads, half-deleted jobs", () => {
    const dataDir = makeDataDir()
    const log = captureLog()
    return Effect.gen(function* () {
      const store = yield* JobStore
      const kept = job("3")
      yield* store.create(kept, { _tag: "Write", write: (path) => writeFileSync(path, "") })
      const root = jobsDirectory(dataDir)
      const orphan = join(root, job("4").jobId)
      mkdirSync(orphan)
      writeFileSync(join(orphan, "input.ndjson"), '"a@x.edu"\n')
      writeFileSync(uploadPath(dataDir), "partial")
      mkdirSync(join(root, ".job_5.1234.deleted"))
      writeFileSync(join(store.files(kept.jobId).directory, ".job.json.abc.tmp"), "{")
      mkdirSync(join(root, "not-a-job"))
      const unreadable = job("6")
      mkdirSync(join(root, unreadable.jobId))
      writeFileSync(join(root, unreadable.jobId, "job.json"), '{"jobId": 1}')
      expect((yield* store.list()).map((j) => j.jobId)).toEqual([kept.jobId])
      expect(readdirSync(root).sort()).toEqual([kept.jobId, unreadable.jobId, "not-a-job"].sort())
      // The unreadable record is kept for a person to look at, and the log says where.
      expect(log.lines()).toEqual([
        expect.objectContaining({
          level: "warn",
          msg: "a job record cannot be read; the job is left alone",
          file: `jobs/${unreadable.jobId}/job.json`
        })
      ])
    }).pipe(Effect.provide(JobStore.layerFiles(dataDir)), Effect.provide(log.layer))
  })
})

describe("JobStore (files) when the data directory cannot take jobs", () => {
  it.effect("fails with JobStoreError, naming what it tried, and leaves nothing behind", () => {
    const dataDir = makeDataDir()
    writeFileSync(jobsDirectory(dataDir), "not a directory")
    return Effect.gen(function* () {
      const store = yield* JobStore
      expect(yield* Effect.flip(store.stage())).toMatchObject({ _tag: "JobStoreError", operation: "stage" })
      const failed = yield* Effect.flip(
        store.create(job("3"), { _tag: "Write", write: (path) => writeFileSync(path, inputText(["a@x.edu"])) })
      )
      expect(failed).toMatchObject({ _tag: "JobStoreError", operation: "create", jobId: job("3").jobId })
      expect(failed.message).toMatch(/ENOTDIR|EEXIST/)
      expect(yield* Effect.flip(store.list())).toMatchObject({ _tag: "JobStoreError", operation: "list" })
      expect(readFileSync(jobsDirectory(dataDir), "utf8")).toBe("not a directory")
    }).pipe(Effect.provide(JobStore.layerFiles(dataDir)))
  })
})
