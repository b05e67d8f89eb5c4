import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import type { JobsError } from "../../src/jobs/errors.ts"
import { type Job, toJobView } from "../../src/jobs/Job.ts"
import { JobQueue } from "../../src/jobs/JobQueue.ts"
import { JobStore, JobStoreError } from "../../src/jobs/JobStore.ts"
import * as JobStoreMemory from "../../src/jobs/JobStoreMemory.ts"
import { type BatchEvaluator, type EncodedBatch, evaluateHere } from "../../src/jobs/jobBatches.ts"
import type { JobUsage } from "../../src/jobs/jobUsage.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { captureLog } from "../observability/logCapture.ts"
import { evaluate, queueAdapters, queueLayer, request, resultLines } from "./jobTesting.ts"

const items = [
  "ada@mit.edu",
  "bob@gmail.com",
  "ADA@MIT.EDU",
  { bad: "[1,2]", reason: "Not a string." },
  "carl@ox.ac.uk",
  "x@@y",
  "ada+news@mit.edu",
  "dora@newcollege.edu"
]

/** The reason a queue call failed with: the `JobsError` reason's tag, or the store error's tag. */
const reasonOf = (error: JobsError | JobStoreError): string =>
  error._tag === "JobsError" ? error.reason._tag : error._tag

/** Yields until the job's record says `check`; the worker moves on between yields. */
const until = (team: string, jobId: string, check: (processed: number, status: string) => boolean) =>
  Effect.gen(function* () {
    const queue = yield* JobQueue
    for (;;) {
      const job = yield* queue.get(team, jobId)
      if (check(job.progress.processed, job.status)) return job
      yield* Effect.yieldNow
    }
  })

/** Submits acme's job of `items` and waits until it has finished. */
const finishedJob = (queue: JobQueue["Service"]) =>
  Effect.gen(function* () {
    const { job } = yield* queue.submit(yield* request(items))
    yield* queue.awaitFinished("acme", job.jobId)
    return job
  })

describe.each(queueAdapters)("JobQueue over the %s store", (_, queueOver) => {
  it.effect("runs a job queued → running → completed, with counts and results in input order", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job, created } = yield* queue.submit(yield* request(items))
      expect(created).toBe(true)
      expect(job).toMatchObject({ status: "queued", progress: { total: 8, processed: 0, percent: 0 }, startedAt: null })
      const done = yield* queue.awaitFinished("acme", job.jobId)
      expect(done).toMatchObject({
        status: "completed",
        progress: { total: 8, processed: 8, percent: 100 },
        counts: { valid: 5, invalid: 3, duplicates: 2, badInput: 1 }
      })
      expect(done.startedAt).not.toBeNull()
      expect(Date.parse(done.expiresAt!) - Date.parse(done.finishedAt!)).toBe(24 * 3600 * 1000)
      const view = toJobView(done, { self: "/self", results: "/results" })
      expect(Object.keys(view)).not.toContain("checkpoint")
      expect(Object.keys(view)).not.toContain("team")
      expect(Object.keys(view)).not.toContain("idempotency")
      const rows = yield* resultLines(job.jobId)
      expect(rows.map((row) => row.email)).toEqual(items.map((item) => (typeof item === "string" ? item : item.bad)))
      expect(rows[3]).toEqual({
        email: "[1,2]",
        isValid: false,
        reasonCode: "INVALID_EMAIL_FORMAT",
        reason: "Not a string."
      })
      expect(rows.map((row) => row.isValid)).toEqual([true, false, true, false, true, false, true, true])
    }).pipe(Effect.provide(queueOver()))
  })

  it.effect(
    "lists a team's jobs newest first, a page at a time, with a status filter, and refuses a made-up cursor",
    () => {
      return Effect.gen(function* () {
        const queue = yield* JobQueue
        const first = (yield* queue.submit(yield* request(items))).job
        yield* TestClock.adjust("1 second")
        const second = (yield* queue.submit(yield* request(items))).job
        yield* queue.submit(yield* request(items, { team: "globex" as never }))
        yield* queue.awaitFinished("acme", first.jobId)
        yield* queue.awaitFinished("acme", second.jobId)
        const page = yield* queue.list("acme", { limit: 1 })
        expect(page.jobs.map((job) => job.jobId)).toEqual([second.jobId])
        const next = yield* queue.list("acme", { limit: 1, after: page.next })
        expect(next.jobs.map((job) => job.jobId)).toEqual([first.jobId])
        expect(next.next).toBeUndefined()
        expect((yield* queue.list("acme", { limit: 10, status: "completed" })).jobs).toHaveLength(2)
        expect((yield* queue.list("acme", { limit: 10, status: "failed" })).jobs).toHaveLength(0)
        expect(reasonOf(yield* Effect.flip(queue.list("acme", { limit: 1, after: "made-up" })))).toBe(
          "InvalidJobCursor"
        )
      }).pipe(Effect.provide(queueOver()))
    }
  )

  it.effect("fails a job whose target is gone, with the reason", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(items, { target: { targetGroupId: "removed" as never } }))
      const done = yield* queue.awaitFinished("acme", job.jobId)
      expect(done).toMatchObject({ status: "failed", error: 'There is no target group "removed".' })
      expect(done.progress.processed).toBe(0)
    }).pipe(Effect.provide(queueOver()))
  })

  it.effect("fails mid-job when evaluation throws, keeping results that match its counts", () => {
    const many = Array.from({ length: 40 }, (_, i) => (i === 25 ? "boom@mit.edu" : `user${i}@mit.edu`))
    const failing: typeof evaluate = (target, emails, tally) => {
      if (emails.includes("boom@mit.edu")) throw new Error("The target group was removed.")
      return evaluate(target, emails, tally)
    }
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(many))
      const done = yield* queue.awaitFinished("acme", job.jobId)
      expect(done).toMatchObject({ status: "failed", error: "The target group was removed." })
      expect(done.progress.processed).toBe(24)
      expect(yield* resultLines(job.jobId)).toHaveLength(24)
    }).pipe(Effect.provide(queueOver({ evaluator: evaluateHere(failing), chunkItems: 8 })))
  })

  it.effect("gets its evaluator ready when an upload begins, before any job is submitted", () => {
    let prepared = 0
    const evaluator = { ...evaluateHere(evaluate), prepare: () => void prepared++ }
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      queue.prepare()
      expect(prepared).toBe(1)
      const { job } = yield* queue.submit(yield* request(items))
      expect((yield* queue.awaitFinished("acme", job.jobId)).status).toBe("completed")
      expect(prepared).toBe(1)
    }).pipe(Effect.provide(queueOver({ evaluator })))
  })

  it.effect("logs a job started and finished, and a failed one with its reason, never an address", () => {
    const log = captureLog()
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const job = yield* finishedJob(queue)
      const gone = (yield* queue.submit(yield* request(items, { target: { targetGroupId: "removed" as never } }))).job
      yield* queue.awaitFinished("acme", gone.jobId)
      const lines = log.lines()
      expect(lines.map((line) => [line.level, line.msg, line.jobId])).toEqual([
        ["info", "job started", job.jobId],
        ["info", "job finished", job.jobId],
        ["info", "job started", gone.jobId],
        ["warn", "job failed", gone.jobId]
      ])
      expect(lines[0]).toMatchObject({ team: "acme", targetGroupId: "edu", total: 8, processed: 0 })
      expect(lines[1]).toMatchObject({
        status: "completed",
        processed: 8,
        counts: { valid: 5, invalid: 3, duplicates: 2, badInput: 1 },
        durationMs: expect.any(Number)
      })
      expect(lines[3]).toMatchObject({ status: "failed", error: 'There is no target group "removed".' })
      expect(log.chunks.join("")).not.toContain("@")
    }).pipe(Effect.provide(queueOver().pipe(Layer.provide(log.layer))))
  })

  it.effect("validates against an offer", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(["ada@mit.edu"], { target: { offerId: "deal" as never } }))
      const done = yield* queue.awaitFinished("acme", job.jobId)
      expect(done.counts).toEqual({ valid: 1, invalid: 0, duplicates: 0, badInput: 0 })
      expect((yield* resultLines(job.jobId))[0]).toMatchObject({
        matchedTargetGroups: ["edu"]
      })
    }).pipe(Effect.provide(queueOver()))
  })

  it.live("counts an offer job in the usage statistics once per checkpoint, even when storing fails for a while", () =>
    Effect.gen(function* () {
      const statistics = yield* UsageStatistics
      let failures = 5 // every try of the first checkpoint fails: its counts go with the next one
      const usage: JobUsage = {
        tally: (target) => ("offerId" in target ? statistics.tally(target.offerId) : undefined),
        store: (job) =>
          Effect.suspend(() =>
            failures-- > 0
              ? Effect.fail(new Error("the statistics store is down"))
              : statistics.applyOnce("deal", job.jobId, job.checkpoint.processed, job.checkpoint.usage!)
          ),
        forget: (job) => statistics.forget("deal", job.jobId)
      }
      const emails = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? `u${i}@gmail.com` : `u${i}@mit.edu`))
      const done = yield* Effect.gen(function* () {
        const queue = yield* JobQueue
        const { job } = yield* queue.submit(yield* request(emails, { target: { offerId: "deal" as never } }))
        return yield* queue.awaitFinished("acme", job.jobId)
      }).pipe(Effect.provide(queueOver({ usage, chunkItems: 4 })))
      expect(done.status).toBe("completed")
      const counted = yield* statistics.usage("deal")
      expect(counted).toMatchObject({ validations: 30, eligible: done.counts.valid, ineligible: done.counts.invalid })
    }).pipe(Effect.provide(UsageStatistics.layerMemory()))
  )

  it.effect("runs jobs in the order they were submitted, also when submitted within one millisecond", () => {
    const ended: Array<string> = []
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      // The test clock stands still: every job is created at the same millisecond.
      const submitted: Array<string> = []
      for (let i = 0; i < 6; i++) submitted.push((yield* queue.submit(yield* request(items))).job.jobId)
      for (const jobId of submitted) yield* queue.awaitFinished("acme", jobId)
      expect(ended).toEqual(submitted)
    }).pipe(Effect.provide(queueOver({ onEnded: (job) => ended.push(job.jobId) })))
  })

  it.effect("cancels a running job between chunks, and a queued one before it starts", () => {
    const many = Array.from({ length: 2000 }, (_, i) => `user${i}@mit.edu`)
    // The first job's third batch waits until the queued one is cancelled, so the first cannot end (and the second
    // run) before that; after, each batch takes 10 ms, so the first is still running when its cancel comes.
    let queuedWasCancelled!: () => void
    const queuedCancelled = new Promise<void>((resolve) => {
      queuedWasCancelled = resolve
    })
    const here = evaluateHere(evaluate)
    let batches = 0
    const evaluator: BatchEvaluator = {
      ...here,
      evaluate: (batch, tally) => {
        const answer = here.evaluate(batch, tally) as EncodedBatch
        if (++batches <= 2) return answer
        return queuedCancelled.then(() => new Promise((resolve) => setTimeout(() => resolve(answer), 10)))
      }
    }
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const first = (yield* queue.submit(yield* request(many))).job
      const second = (yield* queue.submit(yield* request(many))).job
      yield* until("acme", first.jobId, (processed) => processed > 0)
      // The second waits while the one worker runs the first.
      const queued = yield* queue.cancel("acme", second.jobId)
      expect(queued).toMatchObject({ status: "cancelled", startedAt: null, progress: { processed: 0 } })
      expect((yield* queue.awaitFinished("acme", second.jobId)).status).toBe("cancelled")
      queuedWasCancelled()
      const cancelled = yield* queue.cancel("acme", first.jobId)
      expect(cancelled.status).toBe("cancelled")
      expect(cancelled.progress.processed).toBeGreaterThan(0)
      expect(cancelled.progress.processed).toBeLessThan(many.length)
      expect(yield* resultLines(first.jobId)).toHaveLength(cancelled.progress.processed)
      expect((yield* queue.cancel("acme", first.jobId)).status).toBe("cancelled")
    }).pipe(Effect.provide(queueOver({ chunkItems: 10, evaluator })))
  })

  it.effect("refuses new jobs while maxQueued jobs wait, and removes an unused upload", () => {
    const many = Array.from({ length: 5000 }, (_, i) => `user${i}@mit.edu`)
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const running = yield* queue.submit(yield* request(many))
      yield* until("acme", running.job.jobId, (_, status) => status === "running")
      yield* queue.submit(yield* request(many))
      const third = yield* request(["a@mit.edu"])
      const full = yield* Effect.flip(queue.submit(third))
      expect(full).toMatchObject({ _tag: "JobsError", reason: { _tag: "QueueFull", maxQueued: 1 } })
      expect(() => third.input.bytes.size()).toThrow()
    }).pipe(Effect.provide(queueOver({ maxQueued: 1 })))
  })

  it.effect("answers a repeated Idempotency-Key with the first job, and a different body with a conflict", () => {
    const idempotency = { key: "k-1", bodyHash: "aaa" }
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const first = yield* queue.submit(yield* request(items, { idempotency }))
      const again = yield* queue.submit(yield* request(items, { idempotency }))
      expect(again).toEqual({ job: expect.objectContaining({ jobId: first.job.jobId }), created: false })
      const conflict = yield* Effect.flip(
        queue.submit(yield* request(items, { idempotency: { key: "k-1", bodyHash: "bbb" } }))
      )
      expect(conflict).toMatchObject({ reason: { _tag: "IdempotencyConflict", jobId: first.job.jobId } })
      const otherTeam = yield* queue.submit(yield* request(items, { team: "globex" as never, idempotency }))
      expect(otherTeam.created).toBe(true)
      yield* queue.awaitFinished("acme", first.job.jobId)
      yield* TestClock.adjust("25 hours")
      const afterExpiry = yield* queue.submit(yield* request(items, { idempotency: { key: "k-1", bodyHash: "bbb" } }))
      expect(afterExpiry.created).toBe(true)
    }).pipe(Effect.provide(queueOver()))
  })

  it.effect("keeps teams apart: another team's job is not found", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const job = yield* finishedJob(queue)
      expect(reasonOf(yield* Effect.flip(queue.get("globex", job.jobId)))).toBe("JobNotFound")
      expect(reasonOf(yield* Effect.flip(queue.cancel("globex", job.jobId)))).toBe("JobNotFound")
      expect(reasonOf(yield* Effect.flip(queue.delete("globex", job.jobId)))).toBe("JobNotFound")
      expect(reasonOf(yield* Effect.flip(queue.get("acme", "../../etc")))).toBe("JobNotFound")
      yield* queue.delete("acme", job.jobId)
      expect(reasonOf(yield* Effect.flip(queue.get("acme", job.jobId)))).toBe("JobNotFound")
      expect(yield* (yield* JobStore).read(job.jobId)).toBeUndefined()
      expect((yield* Effect.flip((yield* JobStore).open(job.jobId, "input")))._tag).toBe("JobStoreError")
    }).pipe(Effect.provide(queueOver()))
  })

  it.effect("refuses to delete a job that has not finished", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(items))
      const refused = yield* Effect.flip(queue.delete("acme", job.jobId))
      expect(refused).toMatchObject({ reason: { _tag: "JobNotFinished", status: "queued" } })
    }).pipe(Effect.provide(queueOver()))
  })

  it.effect("deletes finished jobs once their retention has passed", () => {
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const job = yield* finishedJob(queue)
      yield* TestClock.adjust("23 hours")
      assert.strictEqual((yield* queue.get("acme", job.jobId)).status, "completed")
      yield* TestClock.adjust("2 hours")
      expect(reasonOf(yield* Effect.flip(queue.get("acme", job.jobId)))).toBe("JobNotFound")
      expect(yield* (yield* JobStore).read(job.jobId)).toBeUndefined()
    }).pipe(Effect.provide(queueOver({ sweepInterval: "1 hour" })))
  })
})

/** The memory store, but writing a record of `status` fails (a full disk, say); `tried` is done at the first try. */
const failingWrites = (status: Job["status"], tried: Deferred.Deferred<void>) =>
  Layer.effect(
    JobStore,
    Effect.map(Effect.service(JobStore), (store) => ({
      ...store,
      write: (job: Job) =>
        job.status === status
          ? Effect.andThen(
              Deferred.succeed(tried, undefined),
              Effect.fail(new JobStoreError({ operation: "write", jobId: job.jobId, cause: new Error("ENOSPC") }))
            )
          : store.write(job)
    }))
  ).pipe(Layer.provide(JobStoreMemory.layerMemory))

describe("JobQueue's running count", () => {
  it.effect("counts no job running when the record that would say so cannot be written", () => {
    const tried = Deferred.makeUnsafe<void>()
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      yield* queue.submit(yield* request(items))
      yield* Deferred.await(tried)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      expect(queue.occupancy()).toEqual({ waiting: 0, running: 0 })
    }).pipe(Effect.provide(queueLayer(failingWrites("running", tried)).pipe(Layer.provide(captureLog().layer))))
  })
})

describe("JobQueue's ended jobs", () => {
  it.effect("counts a job still running when its final record cannot be written", () => {
    const tried = Deferred.makeUnsafe<void>()
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(items))
      yield* Deferred.await(tried)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      expect((yield* queue.get("acme", job.jobId)).status).toBe("running")
      expect(queue.occupancy()).toEqual({ waiting: 0, running: 1 })
    }).pipe(Effect.provide(queueLayer(failingWrites("completed", tried)).pipe(Layer.provide(captureLog().layer))))
  })

  it.effect("counts a job ended, and no longer running, before its final record can be read", () => {
    const ended: Array<string> = []
    /** The memory store, but a finished record's write returns a moment after it is stored. */
    const slowFinish = Layer.effect(
      JobStore,
      Effect.map(Effect.service(JobStore), (store) => ({
        ...store,
        write: (job: Job) =>
          job.status === "completed" ? Effect.andThen(store.write(job), Effect.sleep("20 millis")) : store.write(job)
      }))
    ).pipe(Layer.provide(JobStoreMemory.layerMemory))
    return Effect.gen(function* () {
      const queue = yield* JobQueue
      const { job } = yield* queue.submit(yield* request(items))
      for (let read = yield* queue.get("acme", job.jobId); read.status !== "completed"; ) {
        yield* Effect.sleep("1 millis")
        read = yield* queue.get("acme", job.jobId)
      }
      // Whoever reads the job finished sees it in the metrics and not running.
      expect(ended).toEqual(["completed"])
      expect(queue.occupancy()).toEqual({ waiting: 0, running: 0 })
    }).pipe(
      Effect.provide(
        queueLayer(slowFinish, { onEnded: (final) => ended.push(final.status) }).pipe(Layer.provide(captureLog().layer))
      ),
      TestClock.withLive
    )
  })
})
