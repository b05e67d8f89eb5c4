/**
 * One worker's run of one job: resume the runner at the job's checkpoint,
 * evaluate batch by batch, and once a chunk (`chunkItems`) has been appended
 * flush it, write the new checkpoint and store the usage it carries
 * (`jobUsage.ts`). It yields after every batch, so
 * other jobs and HTTP requests get their turn and a cancellation is seen
 * within milliseconds. Answers the record the job ends with — completed,
 * failed (with the reason) or cancelled, its results matching its counts —
 * without writing it; the queue does. Interrupted (shutdown), it leaves the
 * job running at its last checkpoint, to be resumed at the next start.
 */
import * as Effect from "effect/Effect"
import type { Job, JobStatus } from "./Job.ts"
import type { JobEntry } from "./JobIndex.ts"
import { type Evaluate, JobFailure, JobRunner, type RunnerOptions } from "./JobRunner.ts"
import type { JobBytes, JobStore, JobStoreError } from "./JobStore.ts"
import { type JobUsage, storeCheckpointUsage } from "./jobUsage.ts"

export type JobEnd = {
  readonly job: Job
  readonly status: Exclude<JobStatus, "queued" | "running">
  readonly error?: string
}

const failureText = (error: unknown): string => {
  if (error instanceof JobFailure) return error.message
  const cause =
    (error as Partial<JobStoreError> | undefined)?._tag === "JobStoreError" ? (error as JobStoreError).cause : error
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  return `The job's files could not be read or written${code === undefined ? "" : ` (${code})`}.`
}

type Attempt<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string }

const attempt = <A>(run: () => A): Effect.Effect<Attempt<A>> =>
  Effect.sync(() => {
    try {
      return { ok: true, value: run() }
    } catch (error) {
      return { ok: false, error: failureText(error) }
    }
  })

/** Ends the run: keeps what was done (a checkpoint), or on failure drops what the last checkpoint does not cover. */
const end = (runner: JobRunner, status: JobEnd["status"], error?: string): Effect.Effect<JobEnd> =>
  Effect.map(
    attempt(() => {
      if (error === undefined) return runner.checkpoint()
      runner.discard()
      return runner.job
    }),
    (settled): JobEnd =>
      settled.ok
        ? { job: settled.value, status, ...(error === undefined ? {} : { error }) }
        : { job: runner.job, status: "failed", error: error ?? settled.error }
  )

/** The job's input and results, open; closed when the scope ends. */
const openFiles = (store: JobStore["Service"], job: Job) =>
  Effect.gen(function* () {
    const open = (file: "input" | "results") =>
      Effect.acquireRelease(store.open(job.jobId, file), (bytes: JobBytes) => Effect.sync(() => bytes.close()))
    return { input: yield* open("input"), results: yield* open("results") }
  })

export const processJob = (
  store: JobStore["Service"],
  job: Job,
  entry: JobEntry,
  evaluate: Evaluate,
  options: RunnerOptions & { readonly usage?: JobUsage | undefined }
): Effect.Effect<JobEnd> =>
  Effect.scoped(
    Effect.gen(function* () {
      const files = yield* Effect.result(openFiles(store, job))
      if (files._tag === "Failure") return { job, status: "failed", error: failureText(files.failure) } satisfies JobEnd
      const tally = options.usage?.tally(job.target)
      const opened = yield* attempt(() => JobRunner.resume(files.success, job, evaluate, { ...options, tally }))
      if (!opened.ok) return { job, status: "failed", error: opened.error } satisfies JobEnd
      const runner = opened.value
      for (;;) {
        if (entry.cancelRequested) return yield* end(runner, "cancelled")
        const stepped = yield* attempt(() => runner.step())
        if (!stepped.ok) return yield* end(runner, "failed", stepped.error)
        if (runner.done) return yield* end(runner, "completed")
        if (runner.uncommitted >= options.chunkItems) {
          const checkpointed = yield* attempt(() => runner.checkpoint())
          if (!checkpointed.ok) return yield* end(runner, "failed", checkpointed.error)
          yield* Effect.orDie(store.write(checkpointed.value))
          if (!(yield* storeCheckpointUsage(options.usage, checkpointed.value))) runner.usageNotStored()
        }
        yield* Effect.yieldNow
      }
    })
  )
