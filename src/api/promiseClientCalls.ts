/**
 * How the Promise client (`promiseClient.ts`) makes its calls: an Effect
 * client call run as a Promise, rejecting with the daemon's problem (its
 * class, also for an answer the endpoint does not declare) or a
 * `CampusgateClientError`; a body checked as the daemon would before it is
 * sent; paged lists iterated; job bodies streamed; and when a 429 or 503
 * is tried again.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Schema from "effect/Schema"
import { fieldErrorsOf } from "../domain/fieldErrors.ts"
import { type BadRequest, isProblem, type Problem, problemFromBody, validationFailed } from "./problems.ts"

/** A failure that is not one of the daemon's problems: the daemon unreachable, or an answer outside the contract. */
export class CampusgateClientError extends Error {
  override readonly name = "CampusgateClientError"
}

/** A streamed job body: NDJSON lines or CSV text, as a string, bytes, or chunks as they are produced. */
export type JobBody = string | Uint8Array | AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>

export const wait = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort)
      resolve()
    }, ms)
    const abort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener("abort", abort, { once: true })
  })

/** A problem from an answer the endpoint does not declare (e.g. 413 or 500), read from its body. */
export const undeclaredProblem = async (error: HttpClientError.HttpClientError): Promise<Problem | undefined> => {
  const response = error.response
  if (response === undefined || response.status < 400) return undefined
  const body = await Effect.runPromise(Effect.option(response.json))
  return body._tag === "Some" ? problemFromBody(response.status, body.value) : undefined
}

/** The rejection for a failed call: the daemon's problem, else a `CampusgateClientError`. */
export const rejection = async (cause: Cause.Cause<unknown>): Promise<Error> => {
  const failure = Cause.squash(cause)
  if (isProblem(failure)) return failure
  if (HttpClientError.isHttpClientError(failure)) {
    const problem = await undeclaredProblem(failure)
    if (problem !== undefined) return problem
  }
  return new CampusgateClientError(failure instanceof Error ? failure.message : String(failure), { cause: failure })
}

export type Json<A> = Exclude<A, HttpClientResponse.HttpClientResponse | ReadonlyArray<unknown>>

export const run = async <A>(effect: Effect.Effect<A, unknown>): Promise<Json<A>> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isFailure(exit)) throw await rejection(exit.cause)
  const value = exit.value
  if (typeof value === "object" && value !== null && HttpClientResponse.TypeId in value) {
    throw new CampusgateClientError("The daemon answered in another format than JSON.")
  }
  return value as Json<A>
}

/**
 * A request body as plain JSON values (the schema's encoded side: ids are
 * plain strings, defaults may be left out), checked and decoded here as
 * the daemon would: a body that is not valid rejects with the same
 * `BadRequest` (`VALIDATION_ERROR`, field errors) before anything is sent.
 */
export const checked = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, input: S["Encoded"]) =>
  Schema.decodeUnknownEffect(schema)(input, { errors: "all", onExcessProperty: "error" }).pipe(
    Effect.mapError((error) =>
      validationFailed("The request is not valid (checked before it was sent).", fieldErrorsOf(error))
    )
  ) as Effect.Effect<S["Type"], BadRequest>

/** Every item of a paged list, fetching the next page only when the last one is used up. */
export async function* pages<A, Q extends { readonly cursor?: string | undefined }>(
  fetchPage: (query: Q) => Promise<{ readonly data: ReadonlyArray<A>; readonly nextCursor: string | null }>,
  query: Q
): AsyncGenerator<A> {
  let cursor: string | undefined = query.cursor
  for (;;) {
    const page = await fetchPage(cursor === undefined ? query : { ...query, cursor })
    yield* page.data
    if (page.nextCursor === null) return
    cursor = page.nextCursor
  }
}

export const bytesOf = (chunk: string | Uint8Array): Uint8Array =>
  typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk

/** A job body as a web stream `fetch` can send while it is produced. */
export const bodyStream = (body: JobBody): ReadableStream<Uint8Array> | Uint8Array => {
  if (typeof body === "string" || body instanceof Uint8Array) return bytesOf(body)
  const iterator =
    Symbol.asyncIterator in body
      ? body[Symbol.asyncIterator]()
      : (body as Iterable<string | Uint8Array>)[Symbol.iterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done === true) controller.close()
      else controller.enqueue(bytesOf(next.value))
    },
    async cancel() {
      await iterator.return?.()
    }
  })
}

/** Calls answered 429 or 503 are tried again after their `Retry-After` (opt-in: `retry` in the options). */
export interface RetryOptions {
  /** Tries after the first (default 2). */
  readonly retries?: number | undefined
  /** The longest `Retry-After` waited for (default 30,000 ms); an answer asking for longer rejects at once. */
  readonly maxDelayMs?: number | undefined
}

/** How long to wait before trying again after `error` (the `attempt`-th failure), if at all. */
export const retryDelayMs = (error: unknown, attempt: number, retry: RetryOptions | undefined): number | undefined => {
  if (retry === undefined || attempt >= (retry.retries ?? 2)) return undefined
  if (!isProblem(error) || (error._tag !== "TooManyRequests" && error._tag !== "ServiceUnavailable")) return undefined
  const seconds = (error as { readonly retryAfterSeconds?: number }).retryAfterSeconds ?? 1
  const delay = seconds * 1000
  return delay <= (retry.maxDelayMs ?? 30_000) ? delay : undefined
}
