/**
 * Why the job queue refused a request, as one tagged error with its
 * reasons inside; the server's error table (`server/problemOf.ts`) is the
 * one place a reason becomes its HTTP status and problem. Another team's
 * job is "not found", never "forbidden". Storage failures are the store's
 * own `JobStoreError`.
 */
import * as Schema from "effect/Schema"

/** There is no such job the caller's team can see. */
export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", { jobId: Schema.String }) {
  override get message(): string {
    return `There is no job "${this.jobId}".`
  }
}

/** `maxQueued` jobs are already waiting; the upload was discarded. */
export class QueueFull extends Schema.TaggedError<QueueFull>()("QueueFull", { maxQueued: Schema.Int }) {
  override get message(): string {
    return `The job queue is full (${this.maxQueued} jobs waiting); try again shortly.`
  }
}

/** The Idempotency-Key names an earlier job made from another request. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  key: Schema.String,
  jobId: Schema.String
}) {
  override get message(): string {
    return `Idempotency-Key "${this.key}" was used for another request (job ${this.jobId}); use a new key for a new batch.`
  }
}

/** Only a finished job can be deleted; a queued or running one is cancelled first. */
export class JobNotFinished extends Schema.TaggedError<JobNotFinished>()("JobNotFinished", {
  jobId: Schema.String,
  status: Schema.String
}) {
  override get message(): string {
    return `Job "${this.jobId}" is ${this.status}; cancel it before deleting it.`
  }
}

/** A list cursor that this queue did not give (tampered with, or from elsewhere). */
export class InvalidJobCursor extends Schema.TaggedError<InvalidJobCursor>()("InvalidJobCursor", {}) {
  override get message(): string {
    return "The cursor is not valid: pass the nextCursor of a previous page as it was given."
  }
}

export class JobsError extends Schema.TaggedError<JobsError>()("JobsError", {
  reason: Schema.Union([JobNotFound, QueueFull, IdempotencyConflict, JobNotFinished, InvalidJobCursor])
}) {
  override get message(): string {
    return this.reason.message
  }
}

/** Fails with `reason` wrapped in the service's one error. */
export const jobsError = (reason: JobsError["reason"]): JobsError => new JobsError({ reason })
