/**
 * What the job queue tells its callers, as tagged errors the HTTP layer maps
 * to answers: not found (404, also for another team's job), queue full (503
 * with Retry-After), an idempotency key reused with another body (409), and
 * deleting a job that has not finished (409).
 */
import * as Schema from "effect/Schema"

export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  jobId: Schema.String
}) {
  override get message(): string {
    return `There is no job "${this.jobId}".`
  }
}

export class QueueFull extends Schema.TaggedError<QueueFull>()("QueueFull", {
  maxQueued: Schema.Int
}) {
  override get message(): string {
    return `${this.maxQueued} jobs are already waiting; try again later.`
  }
}

export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  key: Schema.String,
  jobId: Schema.String
}) {
  override get message(): string {
    return `The Idempotency-Key "${this.key}" was used for job "${this.jobId}" with a different request body.`
  }
}

export class JobNotFinished extends Schema.TaggedError<JobNotFinished>()("JobNotFinished", {
  jobId: Schema.String,
  status: Schema.String
}) {
  override get message(): string {
    return `Job "${this.jobId}" is ${this.status}; cancel it before deleting it.`
  }
}
