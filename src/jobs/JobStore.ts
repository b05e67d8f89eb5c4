/**
 * Where jobs live: the port the queue, the runner, the upload reader and the
 * results pages use. A job has a record (replaced whole), an input (one line
 * per item, written once before the job exists) and results (appended by the
 * runner, cut back to its checkpoint on resume). Adapters, each in its own
 * module: `JobStoreMemory.layerMemory`, `JobStoreFiles.layerFiles(dataDir)`
 * (the data directory), `JobStoreRedis.layerRedis(dataDir)` and
 * `JobStorePostgres.layerPostgres(dataDir)`; one contract suite
 * (`test/jobs/JobStore.test.ts`) runs against each.
 *
 * Records go through effects, so a network store (Redis, PostgreSQL) fits.
 * The input and results are byte files read and written synchronously
 * (`JobBytes`): the
 * runner evaluates a million emails in seconds by appending encoded rows in
 * large blocks and resuming at byte offsets, which an effect per block would
 * only slow down. A shared adapter keeps them in its store as chunks and
 * works on a copy in the daemon's data directory (`jobBytesShared.ts`):
 * `flush` is what puts them in the store, so a record is written only after
 * the `flush` of the bytes it names. The memory adapter keeps them in the
 * process, for the library and tests.
 *
 * Guarantees every adapter gives: a job that `create` returned is listed and
 * readable with its whole input (after a crash too, for a durable adapter);
 * a staged upload that became no job is gone once discarded (or, after a
 * crash, at the next `list`); `remove` never leaves a half-deleted job that
 * looks alive.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { markOutage } from "../store/outage.ts"
import type { Job, JobId } from "./Job.ts"

/**
 * Random-access bytes of one job file. Reads and writes are synchronous and
 * throw on failure (a full disk, a broken volume); the runner turns a throw
 * into the job's failure, the upload reader into a `JobStoreError`.
 */
export interface JobBytes {
  size(): number
  /** Reads up to `length` bytes at `position` into `buffer[offset…]`; answers the bytes read (0 at the end). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): number
  /** Writes `buffer[offset, offset + length)` at `position`, all of it. */
  write(buffer: Uint8Array, offset: number, length: number, position: number): void
  /**
   * Writes `parts` one after another at `position`, all of them (in one
   * system call where the store can: a batch's rows are written from where
   * they were encoded, not copied together first); answers their length.
   */
  writeParts(parts: ReadonlyArray<Uint8Array>, position: number): number
  /** Cuts the bytes off at `length`. */
  truncate(length: number): void
  /** Makes what was written durable on this host (for a shared adapter, not in its store: `flush` does that). */
  sync(): void
  /** Makes what was written durable where the store keeps it, without holding the calling thread (the file adapter's fsync runs on libuv's pool, a shared adapter sends what changed); resolves once durable. */
  flush(): Promise<void>
  close(): void
}

/** The two byte files of a job: `input` (read only once the job exists) and `results` (created empty when absent). */
export type JobFile = "input" | "results"

/** An upload being written before its job exists: it becomes a job's input (`create`) or is discarded. */
export interface StagedUpload {
  readonly id: string
  readonly bytes: JobBytes
}

/** The store could not do what was asked (a full disk, a read-only or broken volume); nothing was changed. */
export class JobStoreError extends Schema.TaggedError<JobStoreError>()("JobStoreError", {
  operation: Schema.Literals(["stage", "upload", "create", "open", "read", "write", "list", "remove"]),
  jobId: Schema.optionalKey(Schema.String),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const code = (this.cause as NodeJS.ErrnoException | undefined)?.code
    return `The job store failed to ${this.operation}${this.jobId === undefined ? "" : ` ${this.jobId}`}${code === undefined ? "" : ` (${code})`}`
  }
}
markOutage(JobStoreError)

export class JobStore extends Context.Service<
  JobStore,
  {
    /** A fresh, empty upload. */
    stage(): Effect.Effect<StagedUpload, JobStoreError>
    /** Drops a staged upload that became no job. */
    discard(upload: StagedUpload): Effect.Effect<void>
    /** Makes the staged upload the job's input, durably, then stores its record; the upload is consumed. */
    create(job: Job, upload: StagedUpload): Effect.Effect<void, JobStoreError>
    /** One of the job's byte files; the caller closes it. */
    open(jobId: JobId, file: JobFile): Effect.Effect<JobBytes, JobStoreError>
    read(jobId: JobId): Effect.Effect<Job | undefined, JobStoreError>
    /** Replaces the job's record atomically. */
    write(job: Job): Effect.Effect<void, JobStoreError>
    /** Every job with a readable record; cleans up what a crash left behind. */
    list(): Effect.Effect<ReadonlyArray<Job>, JobStoreError>
    /** Deletes the job with its files, durably. */
    remove(jobId: JobId): Effect.Effect<void, JobStoreError>
  }
>()("campusgate/jobs/JobStore") {}
