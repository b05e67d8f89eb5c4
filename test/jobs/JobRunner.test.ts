import { describe, expect, it } from "vitest"
import type { HashKey } from "../../src/engine/email/canonicalHash.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { type Job, type JobId, newJob } from "../../src/jobs/Job.ts"
import { JobRunner } from "../../src/jobs/JobRunner.ts"
import { MemoryBytes } from "../../src/jobs/JobStoreMemory.ts"
import { type Evaluate, encodeBatch, JobFailure } from "../../src/jobs/jobBatches.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { bytesText, evaluate, inputText, parseLines, textBytes } from "./jobTesting.ts"

const resultLines = (bytes: MemoryBytes) => parseLines(bytesText(bytes))

const setUp = (items: ReadonlyArray<InputItem>, inputColumns?: ReadonlyArray<string>) => {
  const job = newJob({
    jobId: `job_${"a".repeat(32)}` as JobId,
    team: "acme" as never,
    target: { targetGroupId: "edu" as never },
    total: items.length,
    createdAt: "2026-01-01T00:00:00.000Z",
    inputColumns
  })
  const files = { input: textBytes(inputText(items)), results: new MemoryBytes() }
  return { job, files }
}

/** Evaluates and appends the next batch here, as `evaluateHere` does (its hashes under `hashKey`). */
const step = (runner: JobRunner, using: Evaluate = evaluate, hashKey?: HashKey): void => {
  const read = runner.next()
  if (read !== undefined) runner.append(read, encodeBatch(read.request, using, runner.tally, undefined, hashKey))
}

const runAll = (runner: JobRunner, hashKey?: HashKey): Job => {
  while (!runner.inputDone) step(runner, evaluate, hashKey)
  return runner.checkpoint()
}

const stepAndCheckpoint = (runner: JobRunner, hashKey?: HashKey): Job => {
  step(runner, evaluate, hashKey)
  return runner.checkpoint()
}

describe("JobRunner", () => {
  it("checkpoints each chunk: input and result bytes done, counts so far", () => {
    const { job, files } = setUp(["a@mit.edu", "b@gmail.com", "A@MIT.EDU"])
    const runner = JobRunner.resume(files, job, { chunkItems: 2 })
    const first = stepAndCheckpoint(runner)
    expect(first.checkpoint).toEqual({
      processed: 2,
      inputBytes: '"a@mit.edu"\n"b@gmail.com"\n'.length,
      resultsBytes: expect.any(Number)
    })
    expect(first.counts).toEqual({ valid: 1, invalid: 1, duplicates: 0, badInput: 0 })
    expect(first.progress).toEqual({ total: 3, processed: 2, percent: 66 })
    const last = runAll(runner)
    expect(last.counts).toEqual({ valid: 2, invalid: 1, duplicates: 1, badInput: 0 })
    expect(resultLines(files.results).map((row) => row.email)).toEqual(["a@mit.edu", "b@gmail.com", "A@MIT.EDU"])
  })

  it("resumes from a checkpoint: cuts results back, remembers earlier addresses", () => {
    const { job, files } = setUp(["a@mit.edu", "b@mit.edu", "a@mit.edu", "c@mit.edu"])
    const runner = JobRunner.resume(files, job, { chunkItems: 2 })
    const checkpointed = stepAndCheckpoint(runner)
    stepAndCheckpoint(runner) // done on disk, but its checkpoint is never written: a crash
    const resumed = runAll(JobRunner.resume(files, checkpointed, { chunkItems: 2 }))
    expect(resumed.counts.duplicates).toBe(1)
    expect(resultLines(files.results).map((row) => row.email)).toEqual([
      "a@mit.edu",
      "b@mit.edu",
      "a@mit.edu",
      "c@mit.edu"
    ])
  })

  it("resumes with the key of the batches' hashes: an address before the checkpoint is a duplicate after it", () => {
    // As in a daemon that counts usage: the hashes are made under its unique-email key (`duplicatesKey`).
    const hashKey = hashKeyFromSecret("a deployment's statistics secret")
    const { job, files } = setUp(["a@mit.edu", "B@mit.edu", "b@mit.edu", "A+x@MIT.edu"])
    const runner = JobRunner.resume(files, job, { chunkItems: 2, hashKey })
    const checkpointed = stepAndCheckpoint(runner, hashKey)
    const resumed = runAll(JobRunner.resume(files, checkpointed, { chunkItems: 2, hashKey }), hashKey)
    expect(resumed.counts.duplicates).toBe(2)
    expect(resultLines(files.results).map((row) => row.duplicateOf)).toEqual([undefined, undefined, 2, 1])
  })

  it("refuses results shorter than the checkpoint, and a wrong number of rows", () => {
    const { job, files } = setUp(["a@mit.edu", "b@mit.edu"])
    const runner = JobRunner.resume(files, job, { chunkItems: 1 })
    const checkpointed = stepAndCheckpoint(runner)
    files.results.truncate(3)
    expect(() => JobRunner.resume(files, checkpointed, { chunkItems: 1 })).toThrow(JobFailure)
    files.results.write(Buffer.from("x".repeat(500)), 0, 500, 3)
    const short = JobRunner.resume(files, job, { chunkItems: 1 })
    expect(() => step(short, () => [])).toThrow("The evaluation answered 0 rows for 1 emails.")
  })

  it("discards rows appended after the last checkpoint", () => {
    const { job, files } = setUp(["a@mit.edu", "b@mit.edu", "c@mit.edu"])
    const runner = JobRunner.resume(files, job, { chunkItems: 1 })
    const checkpointed = stepAndCheckpoint(runner)
    step(runner)
    expect(runner.uncommitted).toBe(1)
    runner.discard()
    expect(runner.job).toBe(checkpointed)
    expect(resultLines(files.results).map((row) => row.email)).toEqual(["a@mit.edu"])
  })

  it("writes each row as JSON.stringify would: duplicateOf before the input's columns, bad input as a row", () => {
    const items: ReadonlyArray<InputItem> = [
      { email: "a@mit.edu", columns: ["c1", 1] },
      { bad: "not, an email", reason: "No @.", columns: ["c2", null] },
      { email: "A@MIT.edu", columns: ["c3", { deep: "ü" }] },
      "a+tag@mit.edu"
    ]
    const { job, files } = setUp(items, ["customer", "rank"])
    const done = runAll(JobRunner.resume(files, job, { chunkItems: 10 }))
    const lines = bytesText(files.results)
      .split("\n")
      .filter((line) => line !== "")
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toEqual(rows.map((row) => JSON.stringify(row)))
    expect(rows.map((row) => [row.email, row.duplicateOf, row.columns])).toEqual([
      ["a@mit.edu", undefined, { customer: "c1", rank: 1 }],
      ["not, an email", undefined, { customer: "c2", rank: null }],
      ["A@MIT.edu", 1, { customer: "c3", rank: { deep: "ü" } }],
      ["a+tag@mit.edu", 1, undefined]
    ])
    expect(Object.keys(rows[2]!).slice(-2)).toEqual(["duplicateOf", "columns"])
    expect(done.counts).toEqual({ valid: 3, invalid: 1, duplicates: 2, badInput: 1 })
  })
})
