/**
 * The `Idempotency` middleware (`api/idempotency.ts`): a request with an
 * `Idempotency-Key` claims the key in the idempotency store while it runs;
 * its accepted answer (2xx, a body of bytes) is kept and replayed to a
 * retry of the same request, marked `Idempotent-Replayed: true`; a refused
 * one gives the claim up. The request is the method, the path and the
 * body's bytes, hashed; the key is the caller's team's. A claim's end the
 * store cannot record when the request ends (the store away) is recorded
 * in the background once it is back, as is giving up a claim whose taking
 * failed (it may be stored all the same): a retry is then refused as still
 * running only while the store is away, not for the claim's five minutes
 * (at most 1,000 such ends wait at once; beyond, a claim lapses by itself).
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { canonicalUrl } from "../api/Api.ts"
import { Caller } from "../api/Authorization.ts"
import { IDEMPOTENCY_RETENTION_HOURS, Idempotency } from "../api/idempotency.ts"
import { conflict, storeUnavailable } from "../api/problems.ts"
import { REPLAYED_HEADER } from "../api/rateLimits.ts"
import { IdempotencyStore, idempotencyRecordKey, type StoredAnswer } from "../idempotency/IdempotencyStore.ts"

/** How long a running request holds its key: longer than a request may take (server.requestTimeoutSeconds). */
const CLAIM_MS = 5 * 60_000

/** The header fields of an answer that are the answer's own, kept to replay it (not the request's id or limits). */
const KEPT_HEADERS = ["location", "etag", "content-type", "content-encoding"]

const fingerprintOf = (method: string, url: string, body: ArrayBuffer): string =>
  createHash("sha256")
    .update(`${method} ${canonicalUrl(url)}\n`)
    .update(new Uint8Array(body))
    .digest("hex")

/** The answer as kept, when it can be (a body of bytes); undefined for one that streams. */
const storedAnswer = (response: HttpServerResponse.HttpServerResponse): StoredAnswer | undefined => {
  if (response.body._tag !== "Uint8Array" && response.body._tag !== "Empty") return undefined
  const headers: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = response.headers[name]
    if (value !== undefined) headers[name] = value
  }
  if (response.body._tag === "Uint8Array") headers["content-type"] ??= response.body.contentType
  const bytes = response.body._tag === "Uint8Array" ? response.body.body : new Uint8Array()
  return { status: response.status, headers, body: Buffer.from(bytes).toString("base64") }
}

const replay = (answer: StoredAnswer): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(Buffer.from(answer.body, "base64"), {
    status: answer.status,
    headers: { ...answer.headers, [REPLAYED_HEADER]: "true" }
  })

const reused = conflict(
  "This Idempotency-Key was sent with another request (method, path or body); a new request needs a new key."
)

const unavailable = storeUnavailable(
  "Requests with an Idempotency-Key cannot be taken right now (the store is unavailable); retry shortly."
)

const stillRunning = conflict("A request with this Idempotency-Key is still running; retry once it has been answered.")

/** How often a claim's end the store could not record is asked again. */
const SETTLE_RETRY = "1 second"
/** Claims' ends waiting for the store at most (a long outage under heavy traffic); beyond, a claim lapses by itself. */
const MAX_WAITING_SETTLES = 1000

export const IdempotencyLive = Layer.effect(
  Idempotency,
  Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const scope = yield* Effect.scope
    /** `settle` (a claim's end) asked again in the background while the claim it ends would hold. */
    let waiting = 0
    const settleLater = (settle: Effect.Effect<void, unknown>, until: number) =>
      Effect.suspend(() => {
        if (waiting >= MAX_WAITING_SETTLES) return Effect.void
        waiting++
        return settle.pipe(
          Effect.retry({ schedule: Schedule.spaced(SETTLE_RETRY), while: () => Date.now() < until }),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => waiting--)),
          Effect.forkIn(scope),
          Effect.asVoid
        )
      })
    return Idempotency.of((httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const key = request.headers["idempotency-key"]
        if (key === undefined) return yield* httpEffect
        const caller = yield* Caller
        // The body the handler decodes next: read once, kept by the request.
        const body = yield* Effect.orElseSucceed(request.arrayBuffer, () => new ArrayBuffer(0))
        const fingerprint = fingerprintOf(request.method, request.url, body)
        const recordKey = idempotencyRecordKey(caller.team, key)
        const now = Date.now()
        const until = now + CLAIM_MS
        const claimed = yield* Effect.result(store.claim(recordKey, fingerprint, now, until))
        if (claimed._tag === "Failure") {
          // The claim may be stored though its answer was lost: given up once the store answers.
          yield* settleLater(store.release(recordKey, fingerprint, until), until)
          yield* HttpEffect.appendPreResponseHandler((_request, response) =>
            Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(unavailable.retryAfterSeconds)))
          )
          return yield* unavailable
        }
        const held = claimed.success
        if (held !== undefined) {
          if (held.fingerprint !== fingerprint) return yield* reused
          if (held.state === "running") return yield* stillRunning
          return replay(held.answer)
        }
        const exit = yield* Effect.exit(httpEffect)
        const answer = Exit.isSuccess(exit) && exit.value.status < 300 ? storedAnswer(exit.value) : undefined
        // The work is done: a store that cannot keep its answer now costs a replay, not the answer.
        const settle =
          answer === undefined
            ? store.release(recordKey, fingerprint, until)
            : store.answer(recordKey, fingerprint, answer, Date.now() + IDEMPOTENCY_RETENTION_HOURS * 3_600_000)
        yield* settle.pipe(
          Effect.catchCause((cause) =>
            Effect.andThen(
              Effect.logWarning(
                "the answer to a request with an Idempotency-Key could not be kept; kept once the store answers",
                {
                  cause
                }
              ),
              settleLater(settle, until)
            )
          )
        )
        return yield* exit
      })
    )
  })
)
