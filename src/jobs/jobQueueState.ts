/**
 * The state of the job queue that daemons share (`jobQueueShared.ts`),
 * as a port: each operation is one atomic step on the shared store, so
 * `maxQueued`, idempotency, leases and fenced writes hold across daemons.
 * Adapters: Redis (`JobQueueRedis.ts`, a Lua script per step) and
 * PostgreSQL (`JobQueuePostgres.ts`, a statement or a short transaction per
 * step). Times that fence work (lease deadlines) are the store's own clock;
 * times of retention and callbacks are the caller's (epoch ms).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Job, JobId } from "./Job.ts"
import { type JobStore, JobStoreError } from "./JobStore.ts"
import type { SharedBytes } from "./jobBytesShared.ts"

/** A job's Idempotency-Key as the shared state keeps it: its team and the key. */
/** A step of a shared store's operation on a job's files, its error a `JobStoreError` naming the operation (and job). */
export const fileStep = <A>(operation: JobStoreError["operation"], jobId: string | undefined, run: () => A) =>
  Effect.try({
    try: run,
    catch: (cause) => new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause })
  })

/** The jobs of stored records (id, record as stored), decoded; one that cannot be read is left alone, with a warning. */
export const readableJobs = (
  records: Iterable<readonly [jobId: string, stored: unknown]>,
  decode: (stored: unknown) => Job
): Effect.Effect<ReadonlyArray<Job>> =>
  Effect.map(
    Effect.forEach(records, ([jobId, stored]) =>
      Effect.try(() => decode(stored)).pipe(
        Effect.map((job): ReadonlyArray<Job> => [job]),
        Effect.catch((error) =>
          Effect.as(
            Effect.logWarning("a job record cannot be read; the job is left alone", { jobId, error: String(error) }),
            []
          )
        )
      )
    ),
    (jobs) => jobs.flat()
  )

export const idempotencyField = (team: string, key: string): string => `${team}\n${key}`

/** What a submit did: stored the job, found `maxQueued` waiting, or found its Idempotency-Key held by `holder`. */
export type SubmitOutcome =
  | { readonly outcome: "created" }
  | { readonly outcome: "full" }
  | { readonly outcome: "existing"; readonly holder: string }

/** What a cancel did: ended a waiting job, asked its lease holder, or found it finished. */
export type CancelOutcome = "ended" | "asked" | "finished"

export interface SharedQueueState {
  /**
   * Stores a new job (its record and its place among the waiting) and its
   * Idempotency-Key (`field`, '' for none), unless the key is held or
   * `maxQueued` jobs wait; wakes idle workers on every daemon.
   */
  submit(job: Job, maxQueued: number, field: string): Effect.Effect<SubmitOutcome, JobStoreError>
  /** Frees an Idempotency-Key whose job is gone. */
  freeKey(field: string): Effect.Effect<void, JobStoreError>
  /** Ends a waiting job with `final` (callback due at `callbackDue`, '' for none), or asks its lease holder to cancel it. */
  cancel(final: Job, callbackDue: string): Effect.Effect<CancelOutcome, JobStoreError>
  /** Takes up to 64 jobs whose retention ended at or before `now` (each is then dropped by the taker). */
  takeExpired(now: number): Effect.Effect<ReadonlyArray<string>, JobStoreError>
  /** Forgets a finished job's record, expiry, callback and Idempotency-Key (the files are the store's). */
  drop(job: Job, field: string): Effect.Effect<void, JobStoreError>
  /**
   * Takes the next job under a lease of `leaseMs` held with `token` (jobs
   * whose lease lapsed first, then the waiting in order of submission);
   * answers its id ('' when none waits) and how many wait.
   */
  claim(
    token: string,
    leaseMs: number
  ): Effect.Effect<{ readonly jobId: string; readonly waiting: number }, JobStoreError>
  /** Extends the lease held with `token`: "lost" when it is held no more, else whether a cancellation was asked. */
  renew(jobId: string, token: string, leaseMs: number): Effect.Effect<"lost" | "cancelAsked" | "renewed", JobStoreError>
  /** Writes the record only while `token` holds the lease; answers whether it did. */
  fencedWrite(jobId: string, token: string, record: Job): Effect.Effect<boolean, JobStoreError>
  /**
   * Ends the job held with `token`: out of the running, its `final` record
   * stored (undefined: the job is gone), kept until `expiresAt`, its
   * callback due at `callbackDue` ('' for none); answers whether it held.
   */
  finish(
    jobId: string,
    token: string,
    final: Job | undefined,
    expiresAt: number,
    callbackDue: string
  ): Effect.Effect<boolean, JobStoreError>
  /** Writes a finished job's record (its callback state) unless the job is gone. */
  updateFinished(record: Job): Effect.Effect<void, JobStoreError>
  /** Takes up to 64 jobs whose callback was due at or before `now`, putting each off until `next`. */
  takeDueCallbacks(now: number, next: number): Effect.Effect<ReadonlyArray<string>, JobStoreError>
  /** The job's callback settled: no daemon tries it again. */
  settleCallback(jobId: JobId): Effect.Effect<void, JobStoreError>
  /**
   * Calls `wake` whenever a job is submitted on any daemon, until the scope
   * closes; never fails (while the store cannot tell, workers poll).
   */
  wakeOnSubmit(wake: () => void): Effect.Effect<void, never, Scope.Scope>
}

/** A shared store of jobs: the records (`JobStore`), the queue's state, and the job bytes in the store (`jobBytesShared.ts`). */
export interface SharedJobStore {
  readonly store: JobStore["Service"]
  readonly state: SharedQueueState
  readonly bytes: SharedBytes
}
