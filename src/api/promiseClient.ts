/**
 * The Promise client (`createCampusgateClient` in `campusgate/client`): the
 * typed client for any TypeScript or JavaScript app, no Effect needed. It
 * calls the daemon through the same contract as the Effect client
 * (`client.ts`), so requests and answers have the contract's types and are
 * decoded at run time; every problem the daemon answers rejects as the
 * contract's problem class (`NotFound`, `BadRequest`, `Conflict`, ... with
 * `code`, `detail`, `requestId`), whether or not the endpoint declares it;
 * a network failure or an answer that is not the contract's rejects as
 * `CampusgateClientError`.
 *
 * Beyond one method per endpoint: `all(...)` iterates every item of a paged
 * list (`for await`), `jobs.results(id)` every result row of a job, and
 * `jobs.waitForJob(id)` polls with backoff until a job has finished,
 * reporting progress; with `retry`, a call answered 429 or 503 is tried
 * again after its `Retry-After`. Reads of a resource answer its `etag`; writes take it
 * back as `ifMatch`, so a change to a resource someone else changed since
 * is refused (`PreconditionFailed`).
 */
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { API_PREFIX } from "./Api.ts"
import { type CampusgateClient, type CampusgateClientOptions, makeCampusgateClient } from "./client.ts"
import { ApproveRequest, RejectRequest } from "./institutionReviews.ts"
import { JobAccepted } from "./jobs.ts"
import { CreateKeyRequest } from "./keys.ts"
import { CreateOfferRequest, UpdateOfferRequest } from "./offers.ts"
import { problemFromBody } from "./problems.ts"
import {
  bodyStream,
  CampusgateClientError,
  checked,
  type JobBody,
  pages,
  type RetryOptions,
  retryDelayMs,
  run,
  wait
} from "./promiseClientCalls.ts"
import { CreateTargetGroupRequest, UpdateTargetGroupRequest } from "./targetGroups.ts"
import { BulkRequest, ValidateOfferRequest, ValidateTargetGroupRequest } from "./validation.ts"
import { ResetLimitRequest, StartVerificationRequest } from "./verifications.ts"

export { CampusgateClientError, type JobBody, type RetryOptions }

type Client = CampusgateClient
/**
 * What an endpoint of the Effect client succeeds with, as JSON: its types
 * also cover answers this client never asks for (the raw response of a
 * streamed download, `[value, response]` with `withResponse`).
 */
type Out<F> = F extends (...args: Array<never>) => Effect.Effect<infer A, infer _E, infer _R>
  ? Exclude<A, HttpClientResponse.HttpClientResponse | ReadonlyArray<unknown>>
  : never
/** The request an endpoint of the Effect client takes. */
type In<F> = F extends (request: infer R, ...rest: Array<never>) => unknown ? R : never
type Query<F> = In<F> extends { readonly query?: infer Q } ? Q : never
type WithHeadersBody<A> = A extends { readonly body: infer B } ? B : A

/** A resource with its version (`ETag`), to send back as `ifMatch`. */
export interface Versioned<A> {
  readonly resource: A
  readonly etag: string
}

/**
 * A create or a send made safe to retry: with the same `idempotencyKey` and
 * the same request, the daemon answers the first answer again (for 24
 * hours) instead of creating or sending twice.
 */
export interface SendOptions {
  readonly idempotencyKey?: string | undefined
}

const idempotent = (send: SendOptions | undefined) =>
  send?.idempotencyKey === undefined ? {} : { "idempotency-key": send.idempotencyKey }

/** A write's precondition: the `etag` of the version it is based on (optional; `*` for any). */
export interface WriteOptions {
  readonly ifMatch?: string | undefined
}

export interface WaitForJobOptions {
  /** Called after every poll with the job as it is. */
  readonly onProgress?: ((job: JobView) => void) | undefined
  /** The first wait between polls (default 250 ms); each next one is 1.5 times longer, up to `maxDelayMs`. */
  readonly initialDelayMs?: number | undefined
  /** The longest wait between polls (default 5000 ms). */
  readonly maxDelayMs?: number | undefined
  /** Stops waiting (rejects with the signal's reason). */
  readonly signal?: AbortSignal | undefined
}

export type JobView = Out<Client["jobs"]["get"]>
/** A page of a job's results (the endpoint also streams NDJSON and CSV, which this client does not ask for). */
export type ResultsPage = Out<Client["jobs"]["results"]>
export type ResultRow = ResultsPage["data"][number]
export type OfferResource = WithHeadersBody<Out<Client["offers"]["get"]>>
export type TargetGroupResource = WithHeadersBody<Out<Client["targetGroups"]["get"]>>

export interface StreamedJob {
  readonly format: "ndjson" | "csv"
  readonly body: JobBody
  readonly targetGroupId?: string | undefined
  readonly offerId?: string | undefined
  readonly callbackUrl?: string | undefined
  /** CSV only: detected from the header row when absent. */
  readonly delimiter?: "comma" | "semicolon" | "tab" | undefined
  readonly idempotencyKey?: string | undefined
}

const versioned = <A>(answer: { readonly body: A; readonly headers: { readonly etag: string } }): Versioned<A> => ({
  resource: answer.body,
  etag: answer.headers.etag
})

export interface PromiseClientOptions extends CampusgateClientOptions {
  /**
   * Tries a call again when the daemon answers 429 (a rate limit) or 503
   * (it cannot take the work for now: nothing was done) after the
   * `Retry-After` it names; `true` for the defaults. Off by default: the
   * problem rejects at once. Streamed job uploads are never retried (their
   * body is read once).
   */
  readonly retry?: boolean | RetryOptions | undefined
}

/** Makes a Promise client for one daemon and API key. */
export const createCampusgateClient = (options: PromiseClientOptions) => {
  let made: Promise<Client> | undefined
  const client = () => {
    made ??= Effect.runPromise(makeCampusgateClient(options))
    return made
  }
  const retry = options.retry === true ? {} : options.retry === false ? undefined : options.retry
  const call = async <A>(use: (client: Client) => Effect.Effect<A, unknown>): Promise<A> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run(use(await client()))
      } catch (error) {
        const delay = retryDelayMs(error, attempt, retry)
        if (delay === undefined) throw error
        await wait(delay, undefined)
      }
    }
  }
  const apiKey = typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey)
  const url = (path: string) => new URL(`${API_PREFIX}${path}`, options.baseUrl)
  const decodeAccepted = Schema.decodeUnknownSync(JobAccepted)
  /** Checks `input` against the contract before anything is sent, then calls with the checked payload. */
  const callChecked = <S extends Schema.Top & { readonly DecodingServices: never }, A>(
    schema: S,
    input: S["Encoded"],
    use: (client: Client, payload: S["Type"]) => Effect.Effect<A, unknown>
  ): Promise<A> => call((c) => Effect.flatMap(checked(schema, input), (payload) => use(c, payload)))
  const ifMatch = (write: WriteOptions | undefined) =>
    write?.ifMatch === undefined ? {} : { "if-match": write.ifMatch }

  type ListOffers = NonNullable<Query<Client["offers"]["list"]>>
  type ListGroups = NonNullable<Query<Client["targetGroups"]["list"]>>
  type ListJobs = NonNullable<Query<Client["jobs"]["list"]>>
  type SearchQuery = NonNullable<Query<Client["institutions"]["search"]>>
  type ListKeys = NonNullable<Query<Client["keys"]["list"]>>

  const offersList = (query: ListOffers = {}) => call((c) => c.offers.list({ query }))
  const groupsList = (query: ListGroups = {}) => call((c) => c.targetGroups.list({ query }))
  const jobsList = (query: ListJobs = {}) => call((c) => c.jobs.list({ query }))
  const keysList = (query: ListKeys = {}) => call((c) => c.keys.list({ query }))
  const jobsGet = (jobId: string) => call((c) => c.jobs.get({ params: { jobId } }))
  const resultsPage = async (
    jobId: string,
    query: { readonly limit?: number; readonly cursor?: string } = {}
  ): Promise<ResultsPage> => call((c) => c.jobs.results({ params: { jobId }, query }))

  return {
    validation: {
      targetGroup: (request: typeof ValidateTargetGroupRequest.Encoded) =>
        callChecked(ValidateTargetGroupRequest, request, (c, payload) => c.validation.targetGroup({ payload })),
      offer: (request: typeof ValidateOfferRequest.Encoded) =>
        callChecked(ValidateOfferRequest, request, (c, payload) => c.validation.offer({ payload })),
      bulk: (request: typeof BulkRequest.Encoded) =>
        callChecked(BulkRequest, request, (c, payload) => c.validation.bulk({ payload }))
    },
    offers: {
      /** A page of the team's offers; `status` filters on the effective status (`scheduled` and `expired` from the window). */
      list: offersList,
      /** Every offer of the list, page after page; `status` filters on the effective status, as `list` does. */
      all: (query: Omit<ListOffers, "cursor"> = {}) => pages(offersList, query as ListOffers),
      get: async (id: string) => versioned(await call((c) => c.offers.get({ params: { id } }))),
      /** The offer's status and usage; `days`: `usage.daily` as the last that many days, every day present. */
      status: (id: string, query: { readonly days?: number } = {}) =>
        call((c) => c.offers.status({ params: { id }, query })),
      create: async (offer: typeof CreateOfferRequest.Encoded, send?: SendOptions) =>
        versioned(
          await callChecked(CreateOfferRequest, offer, (c, payload) =>
            c.offers.create({ headers: idempotent(send), payload })
          )
        ),
      /** Changes the offer with a JSON merge patch: the fields given replace its own, `null` removes one. */
      update: async (id: string, patch: typeof UpdateOfferRequest.Encoded, write?: WriteOptions) =>
        versioned(
          await callChecked(UpdateOfferRequest, patch, (c, payload) =>
            c.offers.update({ params: { id }, headers: ifMatch(write), payload })
          )
        ),
      delete: (id: string, write?: WriteOptions) =>
        call((c) => c.offers.delete({ params: { id }, headers: ifMatch(write) })).then(() => undefined),
      bulkProcess: (
        request: { readonly requests: ReadonlyArray<{ readonly offerId: string; readonly email: string }> },
        send?: SendOptions
      ) => call((c) => c.offers.bulkProcess({ headers: idempotent(send), payload: request }))
    },
    targetGroups: {
      list: groupsList,
      /** Every target group of the list, page after page. */
      all: (query: Omit<ListGroups, "cursor"> = {}) => pages(groupsList, query as ListGroups),
      get: async (id: string) => versioned(await call((c) => c.targetGroups.get({ params: { id } }))),
      create: async (group: typeof CreateTargetGroupRequest.Encoded, send?: SendOptions) =>
        versioned(
          await callChecked(CreateTargetGroupRequest, group, (c, payload) =>
            c.targetGroups.create({ headers: idempotent(send), payload })
          )
        ),
      /** Changes the group with a JSON merge patch: objects such as `criteria` are merged member by member. */
      update: async (id: string, patch: typeof UpdateTargetGroupRequest.Encoded, write?: WriteOptions) =>
        versioned(
          await callChecked(UpdateTargetGroupRequest, patch, (c, payload) =>
            c.targetGroups.update({ params: { id }, headers: ifMatch(write), payload })
          )
        ),
      delete: (id: string, write?: WriteOptions) =>
        call((c) => c.targetGroups.delete({ params: { id }, headers: ifMatch(write) })).then(() => undefined)
    },
    jobs: {
      /** Submits a batch as one JSON document (`{emails, targetGroupId | offerId, callbackUrl?}`). */
      submit: (
        batch: {
          readonly emails: ReadonlyArray<string>
          readonly targetGroupId?: string
          readonly offerId?: string
          readonly callbackUrl?: string
        },
        submitOptions: { readonly idempotencyKey?: string } = {}
      ) => submitBody(JSON.stringify(batch), "application/json", new URLSearchParams(), submitOptions.idempotencyKey),
      /** Streams a batch as NDJSON or CSV while it is produced (an async iterable of lines works), in constant memory. */
      submitStream: (job: StreamedJob) => {
        const query = new URLSearchParams()
        for (const key of ["targetGroupId", "offerId", "callbackUrl", "delimiter"] as const) {
          const value = job[key]
          if (value !== undefined) query.set(key, value)
        }
        return submitBody(
          bodyStream(job.body),
          job.format === "csv" ? "text/csv" : "application/x-ndjson",
          query,
          job.idempotencyKey
        )
      },
      get: jobsGet,
      list: jobsList,
      /** Every job of the team, newest first, page after page. */
      all: (query: Omit<ListJobs, "cursor"> = {}) => pages(jobsList, query as ListJobs),
      /** Cancels a queued or running job, or deletes a finished one. */
      delete: (jobId: string) => call((c) => c.jobs.delete({ params: { jobId } })),
      resultsPage,
      /** Every result row of a finished job, in input order, a page (`pageSize`, default 1000) at a time. */
      results: (jobId: string, resultsOptions: { readonly pageSize?: number } = {}) =>
        pages(
          (query: { cursor?: string }) => resultsPage(jobId, { ...query, limit: resultsOptions.pageSize ?? 1000 }),
          {}
        ),
      /** Polls the job, with backoff, until it has finished; answers its final state. */
      waitForJob: async (jobId: string, waitOptions: WaitForJobOptions = {}): Promise<JobView> => {
        let delay = waitOptions.initialDelayMs ?? 250
        for (;;) {
          const job = await jobsGet(jobId)
          waitOptions.onProgress?.(job)
          if (job.status !== "queued" && job.status !== "running") return job
          await wait(delay, waitOptions.signal)
          delay = Math.min(delay * 1.5, waitOptions.maxDelayMs ?? 5000)
        }
      }
    },
    verifications: {
      start: (request: typeof StartVerificationRequest.Encoded, send?: SendOptions) =>
        callChecked(StartVerificationRequest, request, (c, payload) =>
          c.verifications.start({ headers: idempotent(send), payload })
        ),
      confirm: (id: string, code: string) =>
        call((c) => c.verifications.confirm({ params: { id }, payload: { code } })),
      get: (id: string) => call((c) => c.verifications.get({ params: { id } })),
      resend: (id: string, send?: SendOptions) =>
        call((c) => c.verifications.resend({ params: { id }, headers: idempotent(send) })),
      cancel: (id: string) => call((c) => c.verifications.cancel({ params: { id } })),
      lookup: (query: Query<Client["verifications"]["lookup"]>) => call((c) => c.verifications.lookup({ query })),
      resetLimit: (request: typeof ResetLimitRequest.Encoded) =>
        callChecked(ResetLimitRequest, request, (c, payload) => c.verifications.resetLimit({ payload }))
    },
    institutions: {
      /** Institutions by name, acronym or domain, country and type, best matches first (the daemon checks `country`). */
      search: (query: Omit<SearchQuery, "country"> & { readonly country?: string } = {}) =>
        call((c) => c.institutions.search({ query: query as SearchQuery })),
      /** The institution a domain or an address's host belongs to, with the match and its evidence. */
      get: (domain: string) => call((c) => c.institutions.get({ params: { domain } }))
    },
    institutionReviews: {
      /** The team's unknown domains met by its validations (`status`, `sort`, `limit`, `cursor`). */
      list: (query: Query<Client["institutionReviews"]["list"]> = {}) =>
        call((c) => c.institutionReviews.list({ query })),
      get: (domain: string) => call((c) => c.institutionReviews.get({ params: { domain } })),
      /** Approves a domain as an institution of the team's: it serves within a second and is written for git. */
      approve: (domain: string, request: typeof ApproveRequest.Encoded) =>
        callChecked(ApproveRequest, request, (c, payload) =>
          c.institutionReviews.approve({ params: { domain }, payload })
        ),
      reject: (domain: string, request: typeof RejectRequest.Encoded) =>
        callChecked(RejectRequest, request, (c, payload) =>
          c.institutionReviews.reject({ params: { domain }, payload })
        )
    },
    status: () => call((c) => c.status.get()),
    keys: {
      /** A page of the team's keys, ordered by id: records and statuses, never a key or its hash. */
      list: keysList,
      /** Every key of the team, page after page. */
      all: (query: Omit<ListKeys, "cursor"> = {}) => pages(keysList, query as ListKeys),
      /**
       * Makes a key for the team with scopes the calling key holds; the answer's `key` is the only copy.
       * It takes no idempotency key (the answer is not kept): after a lost answer, a retry makes a second key.
       */
      create: (request: typeof CreateKeyRequest.Encoded) =>
        callChecked(CreateKeyRequest, request, (c, payload) => c.keys.create({ payload })),
      /** Revokes a key of the team (the calling key too: that answer is its last); answers the revoked record. */
      revoke: (id: string) => call((c) => c.keys.revoke({ params: { id } }))
    }
  }

  /** A job submission with `fetch` itself, so a body can stream (the Effect client sends NDJSON only). */
  async function submitBody(
    body: string | Uint8Array | ReadableStream<Uint8Array>,
    contentType: string,
    query: URLSearchParams,
    idempotencyKey: string | undefined
  ) {
    const target = url("/validate/bulk-async")
    target.search = query.toString()
    let response: Response
    try {
      response = await fetch(target, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": contentType,
          ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
        },
        body,
        ...(body instanceof ReadableStream ? { duplex: "half" } : {})
      } as RequestInit)
    } catch (error) {
      throw new CampusgateClientError(`The daemon could not be reached: ${(error as Error).message}`, { cause: error })
    }
    const answer: unknown = await response.json().catch(() => undefined)
    if (response.status === 202) return decodeAccepted(answer)
    throw problemFromBody(response.status, answer) ?? new CampusgateClientError(`Unexpected answer ${response.status}`)
  }
}

/** The Promise client: one method per endpoint, grouped as the contract groups them. */
export type CampusgatePromiseClient = ReturnType<typeof createCampusgateClient>
