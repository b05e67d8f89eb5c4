/**
 * Signed webhook delivery, shared by every sender (a finished job's
 * callback, verification events): a small JSON notice — never an email
 * address — is POSTed to the receiver's URL, signed with
 * `Campusgate-Signature` (`signature.ts`). Each attempt has a timeout; a
 * notice not delivered is retried with exponential backoff (1 s, 2 s, 4 s,
 * ... six attempts by default), and every attempt is reported through
 * `onAttempt` as delivered or a reason class, so the record can show them,
 * and to `observe` (the daemon's metrics) with the notice given up.
 * The request itself is `net/outbound.ts`'s: only to public addresses
 * unless the operator allows more, pinned to the addresses checked,
 * redirects only within the same origin.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { CallbackAttempt } from "../domain/Job.ts"
import { defaultOutboundPolicy, type OutboundPolicy, postJson, type Resolver } from "../net/outbound.ts"
import { SIGNATURE_HEADER, signCallback } from "./signature.ts"

export { WEBHOOK_SECRET_FILE, webhookSecretFor } from "./secret.ts"
export { SIGNATURE_HEADER, signCallback, type VerifyOptions, verifyCallback } from "./signature.ts"

/** The body of a notice: a JSON object that holds no email address. */
export type CallbackPayload = Readonly<Record<string, unknown>>

/** One delivery attempt as the job record shows it: when, and delivered or why not. */
export const DeliveryAttempt = CallbackAttempt
export type DeliveryAttempt = CallbackAttempt

export class CallbackDeliveryError extends Schema.TaggedError<CallbackDeliveryError>()("CallbackDeliveryError", {
  attempts: Schema.Number,
  lastReason: Schema.String
}) {
  override get message(): string {
    return `The callback was not delivered after ${this.attempts} attempts (last: ${this.lastReason}).`
  }
}

/** Told of every attempt's outcome and of a notice given up after its last attempt (the daemon counts them). */
export interface DeliveryObserver {
  attempted(delivered: boolean): void
  gaveUp(): void
}

export interface DeliveryOptions {
  /** Attempts in all, the first included (default 6). */
  readonly attempts?: number
  /** The wait before the first retry, doubled for each further one (default 1 second). */
  readonly backoff?: Duration.Input
  /** How long one attempt may take (default 10 seconds). */
  readonly timeout?: Duration.Input
  /** Which hosts may be reached (default: public addresses only). */
  readonly policy?: OutboundPolicy
  /** The host-name resolver (default: the system's). */
  readonly resolve?: Resolver
  readonly onAttempt?: (attempt: DeliveryAttempt) => Effect.Effect<void>
  readonly observe?: DeliveryObserver | undefined
}

/** Delivers `payload` to `url`, signed with `secret`, retrying as the module header says. */
export const deliverCallback = Effect.fn("deliverCallback")(function* (
  url: string,
  payload: CallbackPayload,
  secret: string,
  options: DeliveryOptions = {}
): Effect.fn.Return<void, CallbackDeliveryError> {
  const body = JSON.stringify(payload)
  const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(10))
  const attempts = Math.max(1, options.attempts ?? 6)
  const policy = options.policy ?? defaultOutboundPolicy
  let made = 0
  const attempt = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    made++
    const headers = { [SIGNATURE_HEADER]: signCallback(secret, Math.floor(now / 1000), body) }
    const outcome = yield* Effect.promise((signal) => {
      const limit = AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(timeout))])
      return postJson(url, body, headers, policy, limit, options.resolve)
    })
    const at = new Date(now).toISOString()
    const report: DeliveryAttempt = outcome.delivered
      ? { at, delivered: true }
      : { at, delivered: false, reason: outcome.reason }
    options.observe?.attempted(report.delivered)
    if (options.onAttempt !== undefined) yield* options.onAttempt(report)
    if (report.delivered) return
    return yield* new CallbackDeliveryError({ attempts: made, lastReason: report.reason ?? "unknown" })
  })
  return yield* Effect.retry(attempt, {
    schedule: Schedule.exponential(options.backoff ?? Duration.seconds(1)),
    times: attempts - 1
  }).pipe(Effect.tapError(() => Effect.sync(() => options.observe?.gaveUp())))
})
