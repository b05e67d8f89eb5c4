/**
 * One worker's run of one job: resume the runner at the job's checkpoint,
 * then chunk by chunk append results and write the new checkpoint, yielding
 * between chunks so other jobs and HTTP requests get their turn and a
 * cancellation is seen within one chunk. Answers the record the job ends
 * with — completed, failed (with the reason) or cancelled — without writing
 * it; the queue does. Interrupted (shutdown), it leaves the job running at
 * its last checkpoint, to be resumed at the next start.
 */
import * as Effect from "effect/Effect"
import type { Job, JobStatus } from "./Job.ts"
import type { JobEntry } from "./JobIndex.ts"
import { type Evaluate, JobFailure, JobRunner, type RunnerOptions } from "./JobRunner.ts"
import type { JobStore } from "./JobStore.ts"

export type JobEnd = {
  readonly job: Job
  readonly status: Exclude<JobStatus, "queued" | "running">
  readonly error?: string
}

const failureText = (error: unknown): string => {
  if (error instanceof JobFailure) return error.message
  const code = (error as NodeJS.ErrnoException | undefined)?.code
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

export const processJob = (
  store: JobStore["Service"],
  job: Job,
  entry: JobEntry,
  evaluate: Evaluate,
  options: RunnerOptions
): Effect.Effect<JobEnd> =>
  Effect.acquireUseRelease(
    attempt(() => JobRunner.resume(store.files(job.jobId), job, evaluate, options)),
    (opened) =>
      Effect.gen(function* () {
        if (!opened.ok) return { job, status: "failed", error: opened.error } satisfies JobEnd
        const runner = opened.value
        for (;;) {
          if (entry.cancelRequested) return { job: runner.job, status: "cancelled" } satisfies JobEnd
          const stepped = yield* attempt(() => runner.step())
          if (!stepped.ok) return { job: runner.job, status: "failed", error: stepped.error } satisfies JobEnd
          if (runner.done) return { job: runner.job, status: "completed" } satisfies JobEnd
          yield* store.write(stepped.value)
          yield* Effect.yieldNow
        }
      }),
    (opened) => Effect.sync(() => (opened.ok ? opened.value.close() : undefined))
  )
