import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { canonicalHash } from "../../src/jobs/duplicates.ts"
import { JobQueue } from "../../src/jobs/JobQueue.ts"
import * as JobStoreMemory from "../../src/jobs/JobStoreMemory.ts"
import { type BatchEvaluator, type EncodedBatch, encodeBatch, evaluateHere } from "../../src/jobs/jobBatches.ts"
import type { JobUsage } from "../../src/jobs/jobUsage.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { usageTally } from "../../src/stats/UsageRecorder.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { evaluate, fileText, inputText, queueLayer, request } from "./jobTesting.ts"

const secret = "pipeline test"
const usageKey = hashKeyFromSecret(secret)

/**
 * Batches evaluated "elsewhere": several in flight, each answered after a
 * random delay (so they come back out of order), offer usage counted per
 * batch and answered with it, as job threads do. The lines are copied at
 * once (they are the reader's until it reads again). `answered` and
 * `released` collect the batches answered and those the runner released.
 */
const elsewhere = (
  fail?: (emails: string) => boolean
): BatchEvaluator & { readonly answered: Set<EncodedBatch>; readonly released: Set<EncodedBatch> } => ({
  parallelism: 4,
  // As job threads of a daemon that counts usage: the duplicate hashes under its unique-email key, its tallies' too.
  hashKey: usageKey,
  answered: new Set(),
  released: new Set(),
  release(batch) {
    expect(this.answered.has(batch)).toBe(true)
    this.released.add(batch)
  },
  evaluate(request, tally) {
    const batch = { ...request, lines: Buffer.from(request.lines) }
    return new Promise<EncodedBatch>((resolve, reject) => {
      setTimeout(
        () => {
          const text = batch.lines.toString("utf8")
          if (fail?.(text)) return reject(new Error("The target group was removed."))
          const counted =
            tally !== undefined && "offerId" in batch.target ? usageTally(usageKey, batch.target.offerId) : undefined
          const encoded = encodeBatch(batch, evaluate, counted, undefined, usageKey)
          const usage = counted?.takeCounts()
          const answer = usage === undefined ? encoded : { ...encoded, usage: [usage] }
          this.answered.add(answer)
          resolve(answer)
        },
        Math.floor(Math.random() * 6)
      )
    })
  }
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
  }).pipe(Effect.provide(queueLayer(JobStoreMemory.layerMemory, { evaluator, chunkItems: 16, usage: options.usage })))

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
      const evaluator = elsewhere((text) => text.includes('"u200@gmail.com"'))
      const { done, results } = yield* run(evaluator)
      expect(done).toMatchObject({ status: "failed", error: "The target group was removed." })
      // Batches are at most a chunk (16 items): everything before the failing batch's chunk is kept.
      expect(done.progress.processed).toBe(192)
      expect(results.split("\n").filter((line) => line !== "")).toHaveLength(192)
      // Batches still in flight when it failed are released once answered: their memory is reused.
      yield* Effect.sleep("30 millis")
      expect(evaluator.answered.size).toBeGreaterThan(12)
      expect(evaluator.released).toEqual(evaluator.answered)
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
      }).pipe(Effect.provide(queueLayer(JobStoreMemory.layerMemory, { evaluator: elsewhere(), chunkItems: 16, usage })))
      expect(seen).toBe(validated)
    }).pipe(Effect.provide(UsageStatistics.layerMemory({ secret })))
  )
})

describe("a batch encoded into given memory", () => {
  const batch = (lines: Array<string>) => {
    const bytes = Buffer.from(inputText(lines))
    return { target: { targetGroupId: "edu" as never }, lines: bytes, count: lines.length, columns: [] }
  }
  const memory = (textBytes: number) => ({
    text: Buffer.alloc(textBytes),
    splices: new Uint32Array(64),
    hashes: new Float64Array(64)
  })

  it("has the rows of a batch encoded on its own, the text in the memory while it fits and in its own buffer after", () => {
    const request = batch(emails.slice(0, 40))
    const own = encodeBatch(request, evaluate, undefined)
    for (const room of [64 * 1024, 100]) {
      const given = memory(room)
      const encoded = encodeBatch(request, evaluate, undefined, given)
      expect(Buffer.from(encoded.text).toString()).toBe(Buffer.from(own.text).toString())
      expect(encoded.text.buffer === given.text.buffer).toBe(room > own.text.length)
      expect(encoded.splices.buffer).toBe(given.splices.buffer)
      expect(encoded.hashes.buffer).toBe(given.hashes.buffer)
      expect([...encoded.splices]).toEqual([...own.splices])
      expect([...encoded.hashes]).toEqual([...own.hashes])
    }
  })

  it("has each row name its email exactly as given, whatever it holds, and hash it as its canonical address", () => {
    const given = [
      "Jane.Doe+x@MIT.edu",
      "a@mit.edu",
      '"q\\"t"@mit.edu',
      "ünï@mit.edu",
      "tab\there@mit.edu",
      "x@-bad-.edu"
    ]
    const encoded = encodeBatch(batch(given), evaluate, undefined)
    const rows = Buffer.from(encoded.text).toString().trimEnd().split("\n")
    expect(rows.map((row) => (JSON.parse(row) as { email: string }).email)).toEqual(given)
    expect(encoded.hashes[0]).toBe(canonicalHash("jane.doe@mit.edu"))
    expect(encoded.hashes[1]).toBe(canonicalHash("a@mit.edu"))
  })

  it("refuses a batch of more items than the memory has room for", () => {
    expect(() => encodeBatch(batch(emails.slice(0, 65)), evaluate, undefined, memory(1024))).toThrow(
      "A batch of 65 items does not fit memory for 64."
    )
  })
})
