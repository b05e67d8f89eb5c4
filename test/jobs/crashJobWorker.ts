/**
 * Child process of the job crash test: submits a job over `crashInput()`
 * with small chunks (many checkpoints), prints `job <id>` and, once the job
 * has made progress, `progress`; it keeps working until it is killed.
 */
import * as Effect from "effect/Effect"
import { JobQueue } from "../../src/jobs/JobQueue.ts"
import { crashInput, queueLayer, request } from "./jobTesting.ts"

const dataDir = process.argv[2]!

const program = Effect.gen(function* () {
  const queue = yield* JobQueue
  const { job } = yield* queue.submit(yield* request(crashInput()))
  process.stdout.write(`job ${job.jobId}\n`)
  for (;;) {
    const current = yield* queue.get("acme", job.jobId)
    if (current.progress.processed >= 20_000) break
    yield* Effect.sleep("2 millis")
  }
  process.stdout.write("progress\n")
  yield* Effect.never
})

Effect.runFork(program.pipe(Effect.provide(queueLayer(dataDir, { chunkItems: 2000 }))))
