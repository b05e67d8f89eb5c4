/**
 * The jobs slice's service, the one transports call (`server/handlers/jobs.ts`):
 * the target a submission names, checked through the team rule; its
 * callback, checked against the outbound policy in force; the upload,
 * staged in the job store and read into it as it arrives (`jobInput.ts`,
 * decompressed by `uploadCoding.ts`) while the job threads get ready; the
 * job queued once its input is stored, with what makes a retried request
 * the same one (`Idempotency-Key`); a team's jobs listed and read; a
 * finished job's results, a page or every row; a job removed (cancelled
 * while it runs, deleted once it has finished). It runs over `JobQueue` and
 * `JobStore` and reads the snapshot in force. The errors, codings and view
 * transports map are exported here, so they import this module alone.
 */
import { createHash } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import { Snapshot } from "../app/Snapshot.ts"
import { visibleOffer, visibleTargetGroup } from "../app/visibility.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import { isFinished, type JobStatus, type JobTarget } from "../domain/Job.ts"
import { refusedTarget } from "../net/outbound.ts"
import type { CsvDelimiter } from "./csv.ts"
import type { JobsError } from "./errors.ts"
import type { Job } from "./Job.ts"
import type { Submitted } from "./JobQueue.ts"
import { JobQueue } from "./JobQueue.ts"
import { type JobBytes, JobStore, type JobStoreError, type StagedUpload } from "./JobStore.ts"
import { type JobInput, type JobInputFormat, readJobInput } from "./jobInput.ts"
import type { JobInputError } from "./jobInputError.ts"
import { type JobResultsError, type ResultsPage, readResultsPage, streamResults } from "./jobResults.ts"
import { uploadBegins } from "./releaseMemory.ts"
import { decodeUpload, type UploadCoding } from "./uploadCoding.ts"

export { toJobView } from "./Job.ts"
export { JobStoreError } from "./JobStore.ts"
export type { JobInputFormat } from "./jobInput.ts"
export { JobInputError } from "./jobInputError.ts"
export { JobResultsError } from "./jobResults.ts"
export { UPLOAD_CODINGS, uploadCodings } from "./uploadCoding.ts"
export type { JobsError }

/** What a request names as a job's target: exactly one of the two is meant. */
export interface NamedTarget {
  readonly targetGroupId?: string | undefined
  readonly offerId?: string | undefined
}

/** Why a request's target cannot be a job's: not exactly one named, or one the team cannot see. */
export type TargetRefusal =
  | { readonly refusal: "NotExactlyOne" }
  | { readonly refusal: "NotFound"; readonly kind: "target group" | "offer"; readonly id: string }

/** An upload as it arrives: its body (decompressed as it is read) and how to read it. */
export interface Upload<E, R> {
  readonly body: Stream.Stream<Uint8Array, E, R>
  readonly codings: ReadonlyArray<UploadCoding>
  readonly format: JobInputFormat | "detect"
  readonly delimiter?: CsvDelimiter | undefined
  /** Whether the body is hashed for an `Idempotency-Key`. */
  readonly hashBody: boolean
}

/** An upload stored in the job store, read: it becomes a job (`submit`) or is discarded. */
export interface Received {
  readonly upload: StagedUpload
  readonly input: JobInput
}

/** A job to queue: its stored upload, its target and callback, and the request's `Idempotency-Key`. */
export interface NewJob {
  readonly team: TeamId
  readonly target: JobTarget
  readonly received: Received
  readonly callbackUrl: string | undefined
  readonly idempotencyKey: string | undefined
}

/** A job's results: not yet (the job runs), or its rows to read. */
export type JobResults =
  | { readonly finished: false; readonly job: Job }
  | {
      readonly finished: true
      readonly job: Job
      /** Up to `limit` rows from `cursor` (the start when absent). */
      readonly page: (
        cursor: string | undefined,
        limit: number
      ) => Effect.Effect<ResultsPage, JobResultsError | JobStoreError>
      /** Every row, as NDJSON or CSV (the input's columns first); `reuse` as `streamResults` says. */
      readonly stream: (format: "ndjson" | "csv", reuse: boolean) => Stream.Stream<Uint8Array, JobResultsError>
    }

export interface JobsService {
  /** The one target `named` names that `team` can see, or why there is none. */
  targetOf(team: string, named: NamedTarget): JobTarget | TargetRefusal
  /** Why a callback may not be called (an internal address, no address), checked at submission and at every delivery. */
  refusedCallback(url: string): Effect.Effect<string | undefined>
  /**
   * Stages an upload in the job store and reads the body into it; the job
   * threads start while it is read (`JobQueue.prepare`). A failure discards it.
   */
  receive<E, R>(upload: Upload<E, R>): Effect.Effect<Received, JobInputError | JobStoreError | E, R>
  /** Drops a received upload that became no job. */
  discard(received: Received): Effect.Effect<void>
  /** Queues a received upload as a job (`created` false: the job an earlier request with its `Idempotency-Key` made). */
  submit(job: NewJob): Effect.Effect<Submitted, JobsError | JobStoreError>
  /** A page of the team's jobs, newest first (as `JobQueue.list`). */
  readonly list: JobQueue["Service"]["list"]
  readonly get: JobQueue["Service"]["get"]
  /** The job's results, once it has finished. */
  results(team: string, jobId: string): Effect.Effect<JobResults, JobsError | JobStoreError>
  /** Cancels a queued or running job (`deleted` false), else deletes the finished job and its results. */
  remove(
    team: string,
    jobId: string
  ): Effect.Effect<
    { readonly jobId: string; readonly status: JobStatus; readonly deleted: boolean },
    JobsError | JobStoreError
  >
}

/** What makes two submissions the same request: the body and the target and callback named beside it. */
export const requestHash = (bodyHash: string, target: JobTarget, callbackUrl: string | undefined): string =>
  createHash("sha256")
    .update(`${bodyHash}\n${JSON.stringify(target)}\n${callbackUrl ?? ""}`)
    .digest("hex")

/** The target named, visible to the team (`app/visibility.ts`). */
const targetOf = (snapshots: Snapshot["Service"], team: string, named: NamedTarget): JobTarget | TargetRefusal => {
  if ((named.targetGroupId === undefined) === (named.offerId === undefined)) return { refusal: "NotExactlyOne" }
  const { engine } = snapshots.current()
  if (named.targetGroupId !== undefined) {
    return visibleTargetGroup(engine, team, named.targetGroupId) === undefined
      ? { refusal: "NotFound", kind: "target group", id: named.targetGroupId }
      : ({ targetGroupId: named.targetGroupId } as JobTarget)
  }
  return visibleOffer(engine, team, named.offerId!) === undefined
    ? { refusal: "NotFound", kind: "offer", id: named.offerId! }
    : ({ offerId: named.offerId! } as JobTarget)
}

const receive = <E, R>(
  snapshots: Snapshot["Service"],
  queue: JobQueue["Service"],
  store: JobStore["Service"],
  upload: Upload<E, R>
): Effect.Effect<Received, JobInputError | JobStoreError | E, R> =>
  Effect.gen(function* () {
    const { limits } = snapshots.current().config.settings
    const staged = yield* store.stage()
    // The job threads start and build their engine while the upload is read, once the start's garbage is collected.
    uploadBegins()
    queue.prepare()
    const input = yield* readJobInput(decodeUpload(upload.body, upload.codings, limits.jobMaxBodyBytes), {
      format: upload.format,
      output: staged.bytes,
      maxEmails: limits.jobMaxEmails,
      maxBytes: limits.jobMaxBodyBytes,
      delimiter: upload.delimiter,
      hashBody: upload.hashBody
    }).pipe(Effect.onError(() => store.discard(staged)))
    return { upload: staged, input }
  })

const submit = (queue: JobQueue["Service"], job: NewJob) => {
  const { input, upload } = job.received
  const key = job.idempotencyKey
  return queue.submit({
    team: job.team,
    target: job.target,
    total: input.total,
    input: upload,
    inputColumns: input.columns,
    callbackUrl: job.callbackUrl,
    idempotency:
      key === undefined ? undefined : { key, bodyHash: requestHash(input.bodyHash!, job.target, job.callbackUrl) }
  })
}

const results = (queue: JobQueue["Service"], store: JobStore["Service"], team: string, jobId: string) =>
  Effect.map(queue.get(team, jobId), (job): JobResults => {
    if (!isFinished(job.status)) return { finished: false, job }
    // A running job's results file is still being written (and cut back on resume).
    const open: Effect.Effect<JobBytes, JobStoreError> = store.open(job.jobId, "results")
    return {
      finished: true,
      job,
      page: (cursor, limit) =>
        Effect.acquireUseRelease(
          open,
          (file) => readResultsPage(file, cursor, limit),
          (file) => Effect.sync(() => file.close())
        ),
      stream: (format, reuse) => streamResults(open, format, job.inputColumns ?? [], reuse)
    }
  })

const remove = Effect.fnUntraced(function* (queue: JobQueue["Service"], team: string, jobId: string) {
  const job = yield* queue.get(team, jobId)
  if (!isFinished(job.status)) {
    const stopped = yield* queue.cancel(team, job.jobId)
    return { jobId: job.jobId, status: stopped.status, deleted: false }
  }
  yield* queue.delete(team, job.jobId)
  return { jobId: job.jobId, status: job.status, deleted: true }
})

/** The service over the queue, its store and the snapshot in force. */
export const makeJobs = (
  snapshots: Snapshot["Service"],
  queue: JobQueue["Service"],
  store: JobStore["Service"]
): JobsService => ({
  targetOf: (team, named) => targetOf(snapshots, team, named),
  refusedCallback: (url) =>
    Effect.promise(() => refusedTarget(url, snapshots.current().config.settings.jobs.callbacks)),
  receive: (upload) => receive(snapshots, queue, store, upload),
  discard: (received) => store.discard(received.upload),
  submit: (job) => submit(queue, job),
  list: (team, options) => queue.list(team, options),
  get: (team, jobId) => queue.get(team, jobId),
  results: (team, jobId) => results(queue, store, team, jobId),
  remove: (team, jobId) => remove(queue, team, jobId)
})

export class Jobs extends Context.Service<Jobs, JobsService>()("campusgate/jobs/Jobs") {
  static readonly layer: Layer.Layer<Jobs, never, Snapshot | JobQueue | JobStore> = Layer.effect(
    Jobs,
    Effect.map(
      Effect.all([Effect.service(Snapshot), Effect.service(JobQueue), Effect.service(JobStore)]),
      ([snapshots, queue, store]) => makeJobs(snapshots, queue, store)
    )
  )
}
