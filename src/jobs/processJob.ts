/**
 * One worker's run of one job: resume the runner at the job's checkpoint,
 * hand its batches to the evaluator — up to its `parallelism` at once,
 * appended in input order as they come back — and once a chunk
 * (`chunkItems`) has been appended flush it, write the new checkpoint and
 * store the usage it carries (`jobUsage.ts`). Between batches it yields, so
 * other jobs and HTTP requests get their turn and a cancellation is seen
 * within milliseconds. Answers the record the job ends with — completed,
 * failed (with the reason) or cancelled, its results matching its counts —
 * without writing it; the queue does. A shared store that cannot take the
 * results (down, or the lease gone) stops the run as an interruption does:
 * the job is never failed for that. Batches still in flight when the run
 * ends are dropped unappended (their rows and usage with them). Interrupted
 * (shutdown), it leaves the job running at its last checkpoint, to be
 * resumed at the next start. Around the run, the request thread's young
 * generation is given back (`releaseMemory.ts`).
 */
import * as Effect from "effect/Effect"
import { isStoreOutage } from "../store/outage.ts"
import type { Job, JobStatus } from "./Job.ts"
import type { JobEntry } from "./JobIndex.ts"
import { JobRunner, type PendingBatch, type RunnerOptions } from "./JobRunner.ts"
import type { JobBytes, JobStore, JobStoreError } from "./JobStore.ts"
import { type BatchEvaluator, type EncodedBatch, JobFailure } from "./jobBatches.ts"
import { type JobUsage, storeCheckpointUsage } from "./jobUsage.ts"
import { runEnded, runStarted } from "./releaseMemory.ts"

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

const settle = <A>(run: () => A): Attempt<A> => {
  try {
    return { ok: true, value: run() }
  } catch (error) {
    return { ok: false, error: failureText(error) }
  }
}

const attempt = <A>(run: () => A): Effect.Effect<Attempt<A>> => Effect.sync(() => settle(run))

/** A promise's outcome as an `Attempt`: it never rejects, so none goes unhandled. */
const settled = <A>(promise: Promise<A>, text: (error: unknown) => string): Promise<Attempt<A>> =>
  promise.then(
    (value): Attempt<A> => ({ ok: true, value }),
    (error: unknown): Attempt<A> => ({ ok: false, error: text(error) })
  )

/** Whatever an evaluation elsewhere fails with, the job fails with its message. */
const evaluationFailure = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Flushes the runner's results. A shared store that does not take them
 * (down, or the run's lease gone: a store outage) stops the run where it
 * is, the job left at its last checkpoint for a run that can store them
 * (the lease lapses, another daemon resumes it); any other failure (a
 * broken disk of the file store) is answered, for the job to fail with.
 */
const flushOrStop = (runner: JobRunner, jobId: string): Effect.Effect<string | undefined> =>
  Effect.flatMap(
    Effect.promise(() =>
      runner.flush().then(
        () => undefined,
        (error: unknown) => ({ error })
      )
    ),
    (failed) => {
      if (failed === undefined) return Effect.succeed(undefined)
      if (!isStoreOutage(failed.error)) return Effect.succeed(failureText(failed.error))
      return Effect.andThen(
        Effect.logWarning("the job's results could not be stored; the run stops at its last checkpoint", {
          jobId,
          error: String(failed.error)
        }),
        Effect.interrupt
      )
    }
  )

/**
 * Ends the run: keeps what was done (flushed, then a checkpoint), or on
 * failure drops what the last checkpoint does not cover (the cut flushed
 * too), so the store's results are what the final record names.
 */
const end = (runner: JobRunner, status: JobEnd["status"], error?: string): Effect.Effect<JobEnd> =>
  Effect.gen(function* () {
    if (error !== undefined) {
      const discarded = yield* attempt(() => runner.discard())
      // A cut the store did not take is harmless: the next run cuts back to the same checkpoint.
      if (discarded.ok) yield* Effect.promise(() => settled(runner.flush(), failureText))
      return { job: runner.job, status: "failed", error } satisfies JobEnd
    }
    const flushFailure = yield* flushOrStop(runner, runner.job.jobId)
    const checkpointed =
      flushFailure === undefined
        ? yield* attempt(() => runner.checkpoint())
        : ({ ok: false, error: flushFailure } as const)
    if (checkpointed.ok) return { job: checkpointed.value, status } satisfies JobEnd
    yield* attempt(() => runner.discard())
    return { job: runner.job, status: "failed", error: checkpointed.error } satisfies JobEnd
  })

/** The job's input and results, open; closed when the scope ends. */
const openFiles = (store: JobStore["Service"], job: Job) =>
  Effect.gen(function* () {
    const open = (file: "input" | "results") =>
      Effect.acquireRelease(store.open(job.jobId, file), (bytes: JobBytes) => Effect.sync(() => bytes.close()))
    return { input: yield* open("input"), results: yield* open("results") }
  })

/** A batch handed to the evaluator: its answer now, or later. */
interface InFlight {
  readonly read: PendingBatch
  readonly answer: Attempt<EncodedBatch> | Promise<Attempt<EncodedBatch>>
}

const send = (evaluator: BatchEvaluator, runner: JobRunner, read: PendingBatch): InFlight => {
  const answer = settle(() => evaluator.evaluate(read.request, runner.tally))
  if (!answer.ok || !(answer.value instanceof Promise)) return { read, answer: answer as Attempt<EncodedBatch> }
  return { read, answer: settled(answer.value, evaluationFailure) }
}

/** Batches in flight while a checkpoint is written, as a multiple of the evaluator's `parallelism`. */
const CHECKPOINT_DEPTH = 2

/** Batches a run left in flight (it failed or was cancelled) are released once answered: their memory is reused. */
const releaseLeft = (evaluator: BatchEvaluator, inFlight: ReadonlyArray<InFlight>): void => {
  const release = evaluator.release?.bind(evaluator)
  if (release === undefined) return
  for (const { answer } of inFlight) {
    if (answer instanceof Promise) void answer.then((settled) => settled.ok && release(settled.value))
    else if (answer.ok) release(answer.value)
  }
}

/** Runs the job until it ends, is cancelled or is interrupted; counted among the runs in progress meanwhile. */
export const processJob = (
  store: JobStore["Service"],
  job: Job,
  entry: JobEntry,
  evaluator: BatchEvaluator,
  options: RunnerOptions & { readonly usage?: JobUsage | undefined }
): Effect.Effect<JobEnd> =>
  Effect.acquireUseRelease(
    Effect.sync(runStarted),
    () => {
      // Made when the run starts, so each run of this effect has its own.
      const inFlight: Array<InFlight> = []
      return Effect.scoped(
        Effect.gen(function* () {
          const files = yield* Effect.result(openFiles(store, job))
          if (files._tag === "Failure") {
            // A shared store that cannot give the files now: the run stops, the job waits for a run that can.
            if (isStoreOutage(files.failure.cause)) {
              yield* Effect.logWarning("the job's files cannot be read from its store; the run stops", {
                jobId: job.jobId,
                error: String(files.failure.cause)
              })
              return yield* Effect.interrupt
            }
            return { job, status: "failed", error: failureText(files.failure) } satisfies JobEnd
          }
          const tally = options.usage?.tally(job.target)
          const opened = yield* attempt(() =>
            JobRunner.resume(files.success, job, { ...options, tally, hashKey: evaluator.hashKey })
          )
          if (!opened.ok) return { job, status: "failed", error: opened.error } satisfies JobEnd
          const runner = opened.value
          const dispatch = (upTo: number) => {
            while (inFlight.length < upTo) {
              const next = runner.next()
              if (next === undefined) break
              inFlight.push(send(evaluator, runner, next))
            }
          }
          for (;;) {
            if (entry.cancelRequested) return yield* end(runner, "cancelled")
            const read = yield* attempt(() => dispatch(evaluator.parallelism))
            if (!read.ok) return yield* end(runner, "failed", read.error)
            const head = inFlight.shift()
            if (head === undefined) return yield* end(runner, "completed")
            const answered = head.answer instanceof Promise ? head.answer : undefined
            const answer =
              answered === undefined ? (head.answer as Attempt<EncodedBatch>) : yield* Effect.promise(() => answered)
            if (!answer.ok) return yield* end(runner, "failed", answer.error)
            const appended = yield* attempt(() => runner.append(head.read, answer.value))
            evaluator.release?.(answer.value)
            if (!appended.ok) return yield* end(runner, "failed", appended.error)
            if (runner.uncommitted >= options.chunkItems) {
              // Evaluators elsewhere get more batches first, to go on with while the chunk is made durable here
              // (an offer job on two threads otherwise waited at each of its 40 checkpoints).
              if (evaluator.parallelism > 1) {
                const more = yield* attempt(() => dispatch(evaluator.parallelism * CHECKPOINT_DEPTH))
                if (!more.ok) return yield* end(runner, "failed", more.error)
              }
              // The fsync (or the store's write) runs off this thread: requests go on being answered meanwhile.
              const flushFailure = yield* flushOrStop(runner, job.jobId)
              if (flushFailure !== undefined) return yield* end(runner, "failed", flushFailure)
              const checkpointed = yield* attempt(() => runner.checkpoint())
              if (!checkpointed.ok) return yield* end(runner, "failed", checkpointed.error)
              yield* Effect.orDie(store.write(checkpointed.value))
              if (!(yield* storeCheckpointUsage(options.usage, checkpointed.value))) runner.usageNotStored()
            }
            // An answer from elsewhere arrived through the event loop; one made here yields to it now.
            if (answered === undefined) yield* Effect.yieldNow
          }
        })
      ).pipe(Effect.ensuring(Effect.sync(() => releaseLeft(evaluator, inFlight))))
    },
    () => Effect.sync(runEnded)
  )
