import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { JobQueue } from "../../src/jobs/JobQueue.ts"
import * as JobStoreMemory from "../../src/jobs/JobStoreMemory.ts"
import { type BatchEvaluator, type EncodedBatch, encodeBatch, evaluateHere } from "../../src/jobs/jobBatches.ts"
import type { JobUsage } from "../../src/jobs/jobUsage.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { usageTally } from "../../src/stats/UsageRecorder.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { evaluate, fileText, queueLayer, request } from "./jobTesting.ts"

const secret = "pipeline test"

/**
 * Batches evaluated "elsewhere": several in flight, each answered after a
 * random delay (so they come back out of order), offer usage counted per
 * batch and answered with it, as job threads do.
 */
const elsewhere = (fail?: (emails: string) => boolean): BatchEvaluator => ({
  parallelism: 4,
  evaluate: (batch, tally) =>
    new Promise<EncodedBatch>((resolve, reject) => {
      setTimeout(
        () => {
          const text = Buffer.from(batch.lines).toString("utf8")
          if (fail?.(text)) return reject(new Error("The target group was removed."))
          const counted =
            tally !== undefined && "offerId" in batch.target
              ? usageTally(hashKeyFromSecret(secret), batch.target.offerId)
              : undefined
          const encoded = encodeBatch(batch, evaluate, counted)
          const usage = counted?.take()
          resolve(usage === undefined ? encoded : { ...encoded, usage })
        },
        Math.floor(Math.random() * 6)
      )
    })
})

const emails = Array.from({ length: 300 }, (_, i) =>
  i % 7 === 0 ? `User${i % 50}@MIT.edu` : i % 5 === 0 ? `u${i}@gmail.com` : `u${i % 120}@mit.edu`
)
const items = emails.map((email, i) => (i % 31 === 0 ? { bad: `row ${i}`, reason: "Not a string." } : email))

/** Runs `items` to the end on a queue with `evaluator`; answers the final record and the results file. */
const run = (evaluator: BatchEvaluator, options: { readonly offer?: boolean; readonly usage?: JobUsage } = {}) =>
  Effect.gen(function* () {
    const queue = yield* JobQueue
    const target = options.offer === true ? { offerId: "deal" as never } : { targetGroupId: "edu" as never }
    const { job } = yield* queue.submit(yield* request(items, { target }))
    const done = yield* queue.awaitFinished("acme", job.jobId)
    return { done, results: yield* fileText(job.jobId, "results") }
  }).pipe(Effect.provide(queueLayer(JobStoreMemory.layer, { evaluator, chunkItems: 16, usage: options.usage })))

describe("a job with batches in flight, answered out of order", () => {
  it.live("appends them in input order: the same results, duplicates and counts as one batch at a time", () =>
    Effect.gen(function* () {
      const one = yield* run(evaluateHere(evaluate))
      const many = yield* run(elsewhere())
      expect(many.results).toBe(one.results)
      expect(many.done.counts).toEqual(one.done.counts)
      expect(many.done.counts.duplicates).toBeGreaterThan(50)
      expect(many.done.checkpoint).toEqual(one.done.checkpoint)
    })
  )

  it.live("fails at the batch that fails, keeping the rows before it and nothing after", () =>
    Effect.gen(function* () {
      const { done, results } = yield* run(elsewhere((text) => text.includes('"u200@gmail.com"')))
      expect(done).toMatchObject({ status: "failed", error: "The target group was removed." })
      // Batches are at most a chunk (16 items): everything before the failing batch's chunk is kept.
      expect(done.progress.processed).toBe(192)
      expect(results.split("\n").filter((line) => line !== "")).toHaveLength(192)
    })
  )

  it.live("counts an offer job's usage once, each batch's with the checkpoint that covers its rows", () =>
    Effect.gen(function* () {
      const statistics = yield* UsageStatistics
      const usage: JobUsage = {
        tally: (target) => ("offerId" in target ? statistics.tally(target.offerId) : undefined),
        store: (job) => statistics.applyOnce("deal", job.jobId, job.checkpoint.processed, job.checkpoint.usage!),
        forget: (job) => statistics.forget("deal", job.jobId)
      }
      const { done } = yield* run(elsewhere(), { offer: true, usage })
      expect(done.status).toBe("completed")
      const validated = items.filter((item) => typeof item === "string").length
      expect(yield* statistics.usage("deal")).toMatchObject({
        validations: validated,
        eligible: done.counts.valid,
        ineligible: validated - done.counts.valid
      })
    }).pipe(Effect.provide(UsageStatistics.layerMemory({ secret })))
  )

  it.live("stores the last rows' usage before the job reads as finished, however slow the usage store", () =>
    Effect.gen(function* () {
      const statistics = yield* UsageStatistics
      const usage: JobUsage = {
        tally: (target) => ("offerId" in target ? statistics.tally(target.offerId) : undefined),
        store: (job) =>
          Effect.andThen(
            Effect.sleep("30 millis"),
            statistics.applyOnce("deal", job.jobId, job.checkpoint.processed, job.checkpoint.usage!)
          ),
        forget: (job) => statistics.forget("deal", job.jobId)
      }
      const validated = items.filter((item) => typeof item === "string").length
      const seen = yield* Effect.gen(function* () {
        const queue = yield* JobQueue
        const { job } = yield* queue.submit(yield* request(items, { target: { offerId: "deal" as never } }))
        // A reader polling the job as a client does: the first time it reads finished, it reads the usage.
        for (;;) {
          const read = yield* queue.get("acme", job.jobId)
          if (read.status === "completed") return (yield* statistics.usage("deal")).validations
          yield* Effect.sleep("1 millis")
        }
      }).pipe(Effect.provide(queueLayer(JobStoreMemory.layer, { evaluator: elsewhere(), chunkItems: 16, usage })))
      expect(seen).toBe(validated)
    }).pipe(Effect.provide(UsageStatistics.layerMemory({ secret })))
  )
})
