/**
 * Asynchronous bulk validation (DESIGN.md "Bulk (async)"): submit a large
 * batch, follow the job, page or download its results, cancel or delete it.
 * The batch is sent as one JSON document, or streamed as NDJSON (a JSON
 * string or `{"email": ...}` per line) or CSV (a header row with an `email`
 * column) with the target in the query, so a million addresses never have
 * to sit in one JSON document; any of them compressed (`Content-Encoding`,
 * or a gzip file as it is). Only the team that created a job sees it.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { CallbackUrl, JobLinks, JobStatus, JobView } from "../domain/Job.ts"
import { ResultRow } from "../domain/ResultRow.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { Conflict, PayloadTooLarge, UnsupportedMediaType } from "./problems.ts"
import { RateLimitBucket } from "./rateLimits.ts"
import { PageQuery, pageQueryFields, readErrors } from "./resources.ts"

/** A gzip file uploaded as it is: its content is NDJSON, CSV or a JSON document (`format`, else detected). */
export const JOB_GZIP_TYPES = ["application/gzip", "application/x-gzip"] as const
/**
 * The media types a batch may be sent as. The first is what the typed
 * client sends its stream as: NDJSON, the form made for large batches.
 */
export const JOB_INPUT_TYPES = ["application/x-ndjson", "text/csv", "application/json", ...JOB_GZIP_TYPES] as const
/** The media types results may be downloaded as (`Accept`); JSON is paged, the others stream everything. */
export const JOB_RESULT_TYPES = ["application/json", "application/x-ndjson", "text/csv"] as const

export const RESULTS_LIMIT_DEFAULT = 100
export const RESULTS_LIMIT_MAX = 1000

const Id = Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(64)))

/** Where the batch goes when the body is NDJSON or CSV (a JSON body names it inside). */
export const BulkAsyncQuery = Schema.Struct({
  // The docs page's snippet sends the CSV example (the body's first form) with these.
  targetGroupId: Schema.optionalKey(Id.annotate({ examples: ["uk-students"] })),
  offerId: Schema.optionalKey(Id),
  /** POSTed a signed summary when the job finishes (no email addresses). */
  callbackUrl: Schema.optionalKey(CallbackUrl),
  /** For CSV: the field delimiter; detected from the header row (`,`, `;` or tab) when absent. */
  delimiter: Schema.optionalKey(Schema.Literals(["comma", "semicolon", "tab"]).annotate({ examples: ["comma"] })),
  format: Schema.optionalKey(
    Schema.Literals(["csv", "ndjson", "json"]).pipe(
      Schema.annotate({
        examples: ["csv"],
        description:
          "What an `application/gzip` body holds. Absent: a JSON document when the query names no target, else NDJSON when its first line is a JSON string or object, else CSV. With another Content-Type it must agree with it."
      })
    )
  )
})

export const BulkAsyncHeaders = Schema.Struct({
  "content-encoding": Schema.optionalKey(
    Schema.String.pipe(
      Schema.annotate({
        description:
          "`gzip`, `br` or `zstd` (any case; `identity`: none): the body is decompressed as it arrives, the size limit applying to the decompressed bytes. Another coding, or several, is a 415 whose `Accept-Encoding` names those taken."
      })
    )
  ),
  /** A repeated request with the same key answers the same job; with another body it is a 409. */
  "idempotency-key": Schema.optionalKey(
    Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255)))
  )
})

/** The JSON form of a batch (the documentation of the `application/json` body). */
export const BulkAsyncJsonBody = Schema.Struct({
  emails: Schema.Array(Schema.String),
  targetGroupId: Schema.optionalKey(Id),
  offerId: Schema.optionalKey(Id),
  callbackUrl: Schema.optionalKey(CallbackUrl)
}).pipe(
  Schema.annotate({
    examples: [
      { emails: ["jane@ox.ac.uk", "admin@ox.ac.uk", "jane@gmail.com"], targetGroupId: "uk-students" },
      {
        emails: ["kim@partner-college.org"],
        offerId: "acme-student-discount",
        callbackUrl: "https://shop.example.com/hooks/campusgate"
      }
    ]
  })
)

/**
 * The streamed body is read as bytes, so the generated document would only
 * say "binary": describe each form instead, with an example.
 */
const describeBatchForms = (operation: Record<string, unknown>): Record<string, unknown> => {
  const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content
  if (content === undefined) return operation
  const json = Schema.toJsonSchemaDocument(BulkAsyncJsonBody).schema
  // CSV first: the form a docs page shows first, and the one a file most often comes in.
  const forms = { ...content }
  for (const type of Object.keys(content)) delete content[type]
  content["text/csv"] = forms["text/csv"]
  Object.assign(content, forms)
  content["application/json"] = { schema: json }
  content["application/x-ndjson"] = {
    schema: {
      type: "string",
      description:
        "One JSON string, or an object with an `email` string, per line; an object's other fields come back with each result."
    },
    example: '"jane@ox.ac.uk"\n{"email":"kim@partner-college.org","customerId":"c-42"}\n'
  }
  content["text/csv"] = {
    schema: {
      type: "string",
      description:
        "RFC 4180 CSV with a header row that has an `email` column; fields separated by `,`, `;` or tab (detected from the header row, or `delimiter`); a BOM is dropped. The other columns come back with each result."
    },
    example: "customerId,email\nc-41,jane@ox.ac.uk\nc-42,kim@partner-college.org\n"
  }
  for (const type of JOB_GZIP_TYPES) {
    content[type] = {
      schema: {
        type: "string",
        format: "binary",
        description:
          "A gzip file of NDJSON, CSV or a JSON document, sent as it is: `format` names which; absent, a JSON document when the query names no target, else NDJSON when its first line is a JSON string or object, else CSV."
      }
    }
  }
  return operation
}

export const JobAccepted = Schema.Struct({ jobId: Schema.String, status: JobStatus, links: JobLinks }).annotate({
  identifier: "JobAccepted"
})
export type JobAccepted = typeof JobAccepted.Type

/** A job's id; the example is of the form the daemon makes (the docs page's snippets use the job just submitted). */
export const JobParams = Schema.Struct({ jobId: Id.annotate({ examples: ["job_bd12483c4fbdaf09133602058b4ea8ee"] }) })

export const ResultsQuery = Schema.Struct({
  ...pageQueryFields(RESULTS_LIMIT_MAX),
  /** `csv` or `ndjson`: every result as a download (a link needs no `Accept`); wins over `Accept`. */
  format: Schema.optionalKey(Schema.Literals(["json", "ndjson", "csv"]))
})

export const ResultsPage = Schema.Struct({
  data: Schema.Array(ResultRow),
  /** Pass it as `cursor` for the next page; null on the last page (of a finished job). */
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "JobResultsPage" })

export const ListJobsQuery = {
  ...PageQuery,
  /** Only jobs in this state. */
  status: Schema.optionalKey(JobStatus)
}

export const JobsPage = Schema.Struct({
  data: Schema.Array(JobView),
  /** Pass it as `cursor` for the next page; null on the last page. */
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "JobPage" })

export const JobDeleted = Schema.Struct({
  jobId: Schema.String,
  status: JobStatus,
  /** true: the finished job and its results are gone; false: the job was cancelled and is kept until it expires. */
  deleted: Schema.Boolean
}).annotate({ identifier: "JobDeleted" })

const readScopes = ["jobs:read", "validate:bulk"] as const

export class JobsApi extends HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("submit", "/validate/bulk-async", {
      query: BulkAsyncQuery,
      headers: BulkAsyncHeaders,
      payload: HttpApiSchema.StreamUint8Array({ contentType: [...JOB_INPUT_TYPES] }),
      success: JobAccepted.pipe(HttpApiSchema.status(202)),
      error: [...readErrors, Conflict, PayloadTooLarge, UnsupportedMediaType]
    })
      .annotate(RequiredScope, "validate:bulk")
      .annotate(RateLimitBucket, "jobs")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Start validating a large batch of emails as a job",
          description:
            "Send `application/json` (`{emails, targetGroupId | offerId, callbackUrl?}`), or stream `application/x-ndjson` (one JSON string or `{\"email\": ...}` per line) or `text/csv` (a header row with an `email` column; `,`, `;` or tab, detected or named by `delimiter`) with `targetGroupId` or `offerId` (and `callbackUrl`) in the query. Any of them may be compressed: `Content-Encoding: gzip`, `br` or `zstd`, or a gzip file sent as `application/gzip` (`format` names what it holds, else it is detected); the size limit applies to the decompressed bytes, and a body that inflates more than 100 times is refused (413). Other columns (CSV cells, NDJSON fields; at most 100) come back with every result. Answers 202 with the job's `Location`; the batch is stored before the answer. `Idempotency-Key` makes a retry safe. Submissions draw on the key's `jobs` rate limit, apart from synchronous bulk calls. 503 with `Retry-After` when the job queue is full.",
          transform: describeBatchForms
        })
      ),
    HttpApiEndpoint.get("list", "/jobs", { query: ListJobsQuery, success: JobsPage, error: readErrors })
      .annotate(RequiredScope, readScopes)
      .annotateMerge(
        OpenApi.annotations({
          summary: "List the caller's team's jobs, newest first",
          description:
            "Every job of the key's team that has not expired, newest first, `limit` at a time (default 50, at most 100); pass `nextCursor` as `cursor` for the next page. `status` keeps only jobs in that state (e.g. `running`, or `failed` to find what needs attention)."
        })
      ),
    HttpApiEndpoint.get("get", "/jobs/:jobId", { params: JobParams, success: JobView, error: readErrors })
      .annotate(RequiredScope, readScopes)
      .annotateMerge(
        OpenApi.annotations({
          summary: "A job's state, progress and counts",
          description:
            "`status` (`queued`, `running`, `completed`, `failed`, `cancelled`), `progress {total, processed, percent}`, `counts {valid, invalid, duplicates, badInput}`, the times and, with a callback, its delivery attempts. Poll it until the job has finished; only the team that created a job sees it."
        })
      ),
    HttpApiEndpoint.get("results", "/jobs/:jobId/results", {
      params: JobParams,
      query: ResultsQuery,
      success: ResultsPage,
      // 409 while the job is still running.
      error: [...readErrors, Conflict]
    })
      .annotate(RequiredScope, readScopes)
      .annotateMerge(
        OpenApi.annotations({
          summary: "A job's results, in input order",
          description:
            "Pages of result rows (the input email as given plus its verdict) with `Accept: application/json`; `Accept: application/x-ndjson` or `text/csv` streams every result at once, compressed when `Accept-Encoding` allows (br, gzip). `format=csv` or `format=ndjson` in the query does the same whatever `Accept` says, as a download (`Content-Disposition: attachment`), so a plain link fetches the file. A row repeating an earlier address names it (`duplicateOf`, 1-based) and carries the input's other columns (`columns` by name; in CSV after the verdict columns, in the job's `inputColumns` order). 409 while the job runs."
        })
      ),
    HttpApiEndpoint.delete("delete", "/jobs/:jobId", {
      params: JobParams,
      success: JobDeleted,
      error: [...readErrors, Conflict]
    })
      .annotate(RequiredScope, "validate:bulk")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Cancel a queued or running job, or delete a finished one with its results",
          description:
            "A queued or running job is cancelled (`deleted: false`): it stops within milliseconds and keeps the results so far until it expires. A finished job is deleted with its input and results (`deleted: true`)."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "Asynchronous bulk validation: submit up to a million emails (JSON, NDJSON or CSV, compressed or not), follow the job, read or download its results in input order."
    })
  )
  .middleware(Authorization) {}
