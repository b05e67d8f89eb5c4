/**
 * Handlers of the job endpoints, one named function each, over the jobs
 * service (`jobs/Jobs.ts`). A submission names its target (in the JSON
 * document, or in the query for NDJSON and CSV, checked before the body is
 * read); a compressed body (`Content-Encoding`, a gzip file) is
 * decompressed as it arrives (a coding not taken is refused before the
 * body is read); the upload is written to the job store while it arrives
 * and the job is acknowledged (202) only once it is stored, so an accepted
 * job survives any crash. A job is visible to the team that created it
 * only. Results are read once the job has finished.
 */
import { createBrotliCompress, createGzip, constants as zlibConstants } from "node:zlib"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as Stream from "effect/Stream"
import { API_PREFIX, CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import {
  type BulkAsyncHeaders,
  type BulkAsyncQuery,
  JOB_GZIP_TYPES,
  RESULTS_LIMIT_DEFAULT,
  type ResultsQuery
} from "../../api/jobs.ts"
import {
  type BadRequest,
  conflict,
  type FieldError,
  type PayloadTooLarge,
  type UnsupportedMediaType,
  uploadsBusy,
  validationFailed
} from "../../api/problems.ts"
import { REPLAYED_HEADER } from "../../api/rateLimits.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import type { TeamId } from "../../domain/Identifiers.ts"
import type { JobStatus, JobTarget } from "../../domain/Job.ts"
import {
  JobInputError,
  type JobInputFormat,
  JobResultsError,
  JobStoreError,
  Jobs,
  type JobsError,
  type JobsService,
  type NamedTarget,
  type TargetRefusal,
  toJobView,
  UPLOAD_CODINGS,
  uploadCodings
} from "../../jobs/Jobs.ts"
import { answerJobStoreError, answerJobsError, jobInputProblem } from "../problemOf.ts"
import { answerWith } from "../problemResponse.ts"
import { negotiateCoding } from "../staticAsset.ts"
import { notFound } from "./shared.ts"

/**
 * A download compressed as it streams, in constant memory, at the fastest
 * settings (brotli quality 1, gzip level 1): about 570 MB/s each on result
 * rows, against 245 MB/s at brotli 4 and 157 MB/s at gzip 6 for 10-25% fewer
 * bytes; the results reader produces 75-110 MB/s (`npm run bench:jobs`), so
 * anything slower makes the download CPU-bound.
 */
const compressed = <E, R>(rows: Stream.Stream<Uint8Array, E, R>, coding: "br" | "gzip") =>
  NodeStream.pipeThroughDuplex(rows, {
    evaluate: () =>
      coding === "br"
        ? createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } })
        : createGzip({ level: 1 }),
    onError: (error) => new JobResultsError({ reason: "Unreadable", detail: String(error) })
  })

/** Uploads in progress per API key, so one key cannot hold every file handle and core. */
class UploadSlots {
  private readonly inProgress = new Map<string, number>()
  tryTake(keyId: string, limit: number): boolean {
    const taken = this.inProgress.get(keyId) ?? 0
    if (taken >= limit) return false
    this.inProgress.set(keyId, taken + 1)
    return true
  }
  give(keyId: string): void {
    const taken = (this.inProgress.get(keyId) ?? 1) - 1
    if (taken <= 0) this.inProgress.delete(keyId)
    else this.inProgress.set(keyId, taken)
  }
}

const formats: Record<string, JobInputFormat> = {
  "application/json": "json",
  "application/x-ndjson": "ndjson",
  "text/csv": "csv"
}

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

const isGzipFile = (type: string): boolean => (JOB_GZIP_TYPES as ReadonlyArray<string>).includes(type)

/**
 * What a body sent as `contentType` holds: its media type says, but for a
 * gzip file, whose content `format` names, else is detected (NDJSON or CSV
 * when the query names the target, as only a JSON document names its own).
 * A `format` that another media type contradicts is a problem.
 */
const inputFormatOf = (contentType: string, query: NamedTarget & { readonly format?: JobInputFormat | undefined }) => {
  if (isGzipFile(contentType)) {
    return query.format ?? (query.targetGroupId !== undefined || query.offerId !== undefined ? "detect" : "json")
  }
  const format = formats[contentType] ?? "json"
  return query.format === undefined || query.format === format
    ? format
    : invalid([
        {
          field: "/query/format",
          code: "CONFLICTS_WITH_CONTENT_TYPE",
          message: `the body is sent as ${contentType}, which is ${format}; format names what an application/gzip file holds`
        }
      ])
}

/** The download format `Accept` asks for: NDJSON or CSV stream everything; anything else is JSON pages. */
const downloadFormat = (accept: string | undefined): "ndjson" | "csv" | "json" => {
  const types = (accept ?? "").split(",").map(mediaType)
  for (const type of types) {
    if (type === "application/x-ndjson") return "ndjson"
    if (type === "text/csv") return "csv"
    if (type === "application/json" || type === "*/*") return "json"
  }
  return "json"
}

export const jobLinks = (jobId: string) => ({
  self: `${API_PREFIX}/jobs/${jobId}`,
  results: `${API_PREFIX}/jobs/${jobId}/results`
})

const invalid = (errors: ReadonlyArray<FieldError>) => validationFailed("The job request is not valid.", errors)

/** The problem with the target a request names (`where`: the query, or the body's own fields). */
const targetProblem = (refusal: TargetRefusal, where: string) =>
  refusal.refusal === "NotExactlyOne"
    ? invalid([
        {
          field: `${where}/targetGroupId`,
          code: "EXACTLY_ONE",
          message: "give exactly one of targetGroupId and offerId"
        }
      ])
    : notFound(refusal.kind, refusal.id)

const isTarget = (value: JobTarget | TargetRefusal): value is JobTarget => !("refusal" in value)

/**
 * The problem with a callback URL that may not be called (its host is or
 * resolves to an internal address, or does not resolve), checked when the
 * job is submitted and again at every delivery.
 */
const callbackProblem = (jobs: JobsService, url: string | undefined, where: string) =>
  url === undefined
    ? Effect.succeed(undefined)
    : Effect.map(jobs.refusedCallback(url), (reason) =>
        reason === undefined
          ? undefined
          : invalid([{ field: `${where}/callbackUrl`, code: "CALLBACK_NOT_ALLOWED", message: reason }])
      )

/** Why an upload cannot become a job, as the problem to answer. */
const uploadProblem = (error: JobInputError | unknown) =>
  error instanceof JobInputError
    ? jobInputProblem(error)
    : invalid([{ field: "/body", code: "UNREADABLE", message: "the body could not be read" }])

/** What the job handlers share: the jobs service, the snapshot in force, the uploads in progress per key. */
interface JobsHandlerContext {
  readonly jobs: JobsService
  readonly snapshots: Snapshot["Service"]
  readonly uploads: UploadSlots
}

/** `POST /validate/bulk-async`: checks what it can before the body is read, stores the upload, then queues the job. */
const submitJob = <E>(
  { jobs, snapshots, uploads }: JobsHandlerContext,
  query: typeof BulkAsyncQuery.Type,
  headers: typeof BulkAsyncHeaders.Type,
  payload: Stream.Stream<Uint8Array, E>
) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    const request = yield* HttpServerRequest.HttpServerRequest
    const contentType = mediaType(request.headers["content-type"])
    const codings = uploadCodings(headers["content-encoding"], isGzipFile(contentType))
    if (codings instanceof JobInputError) {
      // RFC 9110 15.5.16: a 415 for a content coding names those accepted.
      return yield* Effect.map(
        answerWith(uploadProblem(codings)),
        HttpServerResponse.setHeader("accept-encoding", UPLOAD_CODINGS.join(", "))
      )
    }
    const format = inputFormatOf(contentType, query)
    if (typeof format !== "string") return yield* format
    const { limits } = snapshots.current().config.settings
    let target: JobTarget | undefined
    if (format !== "json") {
      const named = jobs.targetOf(caller.team, query)
      if (!isTarget(named)) return yield* targetProblem(named, "/query")
      target = named
    }
    const queryCallback = yield* callbackProblem(jobs, query.callbackUrl, "/query")
    if (queryCallback !== undefined) return yield* queryCallback
    if (format === "json" && (query.targetGroupId !== undefined || query.offerId !== undefined)) {
      return yield* invalid([
        { field: "/query", code: "TARGET_IN_BODY", message: "a JSON body names targetGroupId or offerId itself" }
      ])
    }
    if (!uploads.tryTake(caller.keyId, limits.jobUploadsPerKey)) {
      return yield* answerWith(
        uploadsBusy(
          `This API key already sends ${limits.jobUploadsPerKey} job uploads; send the next when one has finished.`
        )
      )
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => uploads.give(caller.keyId)))
    const key = headers["idempotency-key"]
    const received = yield* jobs
      .receive({ body: payload, codings, format, delimiter: query.delimiter, hashBody: key !== undefined })
      .pipe(
        Effect.catch(
          (error): Effect.Effect<never, JobStoreError | BadRequest | PayloadTooLarge | UnsupportedMediaType> =>
            error instanceof JobStoreError ? Effect.fail(error) : Effect.fail(uploadProblem(error))
        )
      )
    const { fields } = received.input
    if (target === undefined) {
      const named = jobs.targetOf(caller.team, fields)
      if (!isTarget(named)) {
        yield* jobs.discard(received)
        return yield* targetProblem(named, "")
      }
      target = named
    }
    const bodyCallback = yield* callbackProblem(jobs, fields.callbackUrl, "")
    if (bodyCallback !== undefined) {
      yield* jobs.discard(received)
      return yield* bodyCallback
    }
    const callbackUrl = query.callbackUrl ?? fields.callbackUrl
    const { job, created } = yield* jobs.submit({
      team: caller.team as TeamId,
      target,
      received,
      callbackUrl,
      idempotencyKey: key
    })
    const links = jobLinks(job.jobId)
    return HttpServerResponse.jsonUnsafe(
      { jobId: job.jobId, status: job.status, links },
      { status: 202, headers: { location: links.self, ...(created ? {} : { [REPLAYED_HEADER]: "true" }) } }
    )
  }).pipe(Effect.scoped, Effect.catchTags({ JobsError: answerJobsError, JobStoreError: answerJobStoreError }))

/** A read's failure answered: reading can only find the job or refuse a cursor, any other reason is a defect. */
const answerReadError = {
  JobsError: (error: JobsError) => answerJobsError(error).pipe(Effect.catchTag("Conflict", () => Effect.die(error))),
  JobStoreError: answerJobStoreError
}

/** `GET /jobs`: a page of the caller's team's jobs, newest first. */
const listJobs = (
  jobs: JobsService,
  query: {
    readonly status?: JobStatus | undefined
    readonly cursor?: string | undefined
    readonly limit?: number | undefined
  }
) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    const page = yield* jobs.list(caller.team, {
      status: query.status,
      after: query.cursor,
      limit: query.limit ?? PAGE_LIMIT_DEFAULT
    })
    return {
      data: page.jobs.map((job) => toJobView(job, jobLinks(job.jobId))),
      nextCursor: page.next ?? null
    }
  }).pipe(Effect.catchTags(answerReadError))

/** `GET /jobs/{jobId}`. */
const getJob = (jobs: JobsService, jobId: string) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    const job = yield* jobs.get(caller.team, jobId)
    return toJobView(job, jobLinks(job.jobId))
  }).pipe(Effect.catchTags(answerReadError))

/** `GET /jobs/{jobId}/results`: a JSON page, or every row as NDJSON or CSV (compressed as `Accept-Encoding` asks). */
const jobResults = (jobs: JobsService, jobId: string, query: typeof ResultsQuery.Type) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    const request = yield* HttpServerRequest.HttpServerRequest
    const results = yield* jobs.results(caller.team, jobId)
    const { job } = results
    if (!results.finished) {
      return yield* conflict(`Job ${job.jobId} is ${job.status}; its results can be read once it has finished.`)
    }
    const format = query.format ?? downloadFormat(request.headers.accept)
    if (format !== "json") {
      const coding = negotiateCoding(request.headers["accept-encoding"], ["br", "gzip"])
      const rows = results.stream(format, coding === "identity")
      // Asked for by the query: a file to save, named after the job.
      const download =
        query.format === undefined
          ? {}
          : { "content-disposition": `attachment; filename="${job.jobId}-results.${format}"` }
      return HttpServerResponse.stream(coding === "identity" ? rows : compressed(rows, coding), {
        contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson",
        headers:
          coding === "identity"
            ? { vary: "accept-encoding", ...download }
            : { vary: "accept-encoding", "content-encoding": coding, ...download }
      })
    }
    return yield* results
      .page(query.cursor, query.limit ?? RESULTS_LIMIT_DEFAULT)
      .pipe(
        Effect.catchTag("JobResultsError", (error) =>
          error.reason === "InvalidCursor"
            ? Effect.fail(invalid([{ field: "/query/cursor", code: "INVALID_VALUE", message: error.detail }]))
            : Effect.die(error)
        )
      )
  }).pipe(Effect.catchTags({ JobsError: answerJobsError, JobStoreError: answerJobStoreError }))

/** `DELETE /jobs/{jobId}`: cancels a queued or running job, deletes a finished one. */
const deleteJob = (jobs: JobsService, jobId: string) =>
  Effect.flatMap(Caller, (caller) => jobs.remove(caller.team, jobId)).pipe(
    Effect.catchTags({ JobsError: answerJobsError, JobStoreError: answerJobStoreError })
  )

export const JobsHandlers = HttpApiBuilder.group(CampusgateApi, "jobs", (handlers) =>
  Effect.map(Effect.all([Effect.service(Jobs), Effect.service(Snapshot)]), ([jobs, snapshots]) => {
    const context: JobsHandlerContext = { jobs, snapshots, uploads: new UploadSlots() }
    return handlers
      .handle("submit", ({ query, headers, payload }) => submitJob(context, query, headers, payload))
      .handle("list", ({ query }) => listJobs(jobs, query))
      .handle("get", ({ params }) => getJob(jobs, params.jobId))
      .handle("results", ({ params, query }) => jobResults(jobs, params.jobId, query))
      .handle("delete", ({ params }) => deleteJob(jobs, params.jobId))
  })
)
