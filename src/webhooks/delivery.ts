/**
 * Signed webhook delivery, shared by every sender (a finished job's
 * callback, verification events): a small JSON notice — never an email
 * address — is POSTed to the receiver's URL, signed with
 * `Campusgate-Signature` (`signature.ts`). Each attempt has a timeout; network errors, time-
 * outs and non-2xx answers are retried with exponential backoff (1 s, 2 s,
 * 4 s, ... six attempts by default). Every attempt is reported through
 * `onAttempt`, so the job record can show them. Redirects are followed only
 * within the same origin (307/308, which keep method and body); a redirect to
 * another host is a failed attempt, so a callback URL cannot bounce the
 * signed notice elsewhere.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { CallbackAttempt } from "../domain/Job.ts"
import { SIGNATURE_HEADER, signCallback } from "./signature.ts"

export { WEBHOOK_SECRET_FILE, webhookSecretFor } from "./secret.ts"
export { SIGNATURE_HEADER, signCallback, type VerifyOptions, verifyCallback } from "./signature.ts"

/** The body of a notice: a JSON object that holds no email address. */
export type CallbackPayload = Readonly<Record<string, unknown>>

/** One delivery attempt as the job record shows it: when, and the HTTP status or the error. */
export const DeliveryAttempt = CallbackAttempt
export type DeliveryAttempt = CallbackAttempt

export class CallbackDeliveryError extends Schema.TaggedError<CallbackDeliveryError>()("CallbackDeliveryError", {
  attempts: Schema.Number,
  lastError: Schema.String
}) {
  override get message(): string {
    return `The callback was not delivered after ${this.attempts} attempts: ${this.lastError}`
  }
}

export interface DeliveryOptions {
  /** Attempts in all, the first included (default 6). */
  readonly attempts?: number
  /** The wait before the first retry, doubled for each further one (default 1 second). */
  readonly backoff?: Duration.Input
  /** How long one attempt may take (default 10 seconds). */
  readonly timeout?: Duration.Input
  readonly onAttempt?: (attempt: DeliveryAttempt) => Effect.Effect<void>
}

const MAX_REDIRECTS = 3

const describe = (error: unknown): string => {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
  if (typeof cause?.code === "string") return cause.code
  if (typeof cause?.message === "string") return cause.message
  return error instanceof Error ? error.message : String(error)
}

/** POSTs once, following same-origin 307/308 redirects; answers the final status. */
const post = (url: string, body: string, signature: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      let target = new URL(url)
      for (let redirects = 0; ; redirects++) {
        const response = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signature },
          body,
          redirect: "manual",
          signal
        })
        await response.body?.cancel()
        const location = response.headers.get("location")
        if ((response.status !== 307 && response.status !== 308) || location === null) return response.status
        const next = new URL(location, target)
        if (next.origin !== target.origin) throw new Error(`redirect to another origin (${next.origin}) not followed`)
        if (redirects === MAX_REDIRECTS) throw new Error("too many redirects")
        target = next
      }
    },
    catch: describe
  })

/** Delivers `payload` to `url`, signed with `secret`, retrying as the module header says. */
export const deliverCallback = Effect.fn("deliverCallback")(function* (
  url: string,
  payload: CallbackPayload,
  secret: string,
  options: DeliveryOptions = {}
): Effect.fn.Return<void, CallbackDeliveryError> {
  const body = JSON.stringify(payload)
  const timeout = options.timeout ?? Duration.seconds(10)
  const attempts = Math.max(1, options.attempts ?? 6)
  let made = 0
  const attempt = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    made++
    const outcome = yield* post(url, body, signCallback(secret, Math.floor(now / 1000), body)).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(`timed out after ${Duration.format(Duration.fromInputUnsafe(timeout))}`)
      }),
      Effect.result
    )
    const at = new Date(now).toISOString()
    const report: DeliveryAttempt = Result.isSuccess(outcome)
      ? { at, status: outcome.success }
      : { at, error: outcome.failure }
    if (options.onAttempt !== undefined) yield* options.onAttempt(report)
    if (report.status !== undefined && report.status >= 200 && report.status < 300) return
    return yield* new CallbackDeliveryError({
      attempts: made,
      lastError: report.error ?? `HTTP ${report.status}`
    })
  })
  return yield* Effect.retry(attempt, {
    schedule: Schedule.exponential(options.backoff ?? Duration.seconds(1)),
    times: attempts - 1
  })
})
