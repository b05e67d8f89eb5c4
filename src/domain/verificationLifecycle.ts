/**
 * How a verification record changes, as pure functions of the record and
 * the time: the one place the lifecycle rules are written. A pending
 * verification ends once — verified, failed, expired or cancelled — and
 * ending it drops what only a pending one needs (the sealed address, and
 * a code's hash; a link's stays, so opening it again is answered), owes the event's
 * webhook notice, and gives up a message not yet sent. Every change
 * increments `version`, which the store checks.
 */
import type { Delivery, FailureReason, Notice, VerificationEvent, VerificationRecord } from "./Verification.ts"
import { messageTimes } from "./verificationLimits.ts"

const changed = (record: VerificationRecord, fields: Partial<VerificationRecord>): VerificationRecord => ({
  ...record,
  ...fields,
  version: record.version + 1
})

const notice = (event: VerificationEvent, at: number): Notice => ({ event, at, delivered: false, attempts: 0 })

const ended = (
  record: VerificationRecord,
  fields: Partial<VerificationRecord>,
  event: VerificationEvent | undefined,
  at: number
): VerificationRecord => {
  const { sealedAddress: _sealed, secretHash, ...rest } = record
  // A link keeps its secret's hash, so whoever holds it is shown what became of it (and nobody else is).
  const keepSecret = record.method === "link" && secretHash !== undefined
  return changed(rest as VerificationRecord, {
    ...fields,
    ...(keepSecret ? { secretHash } : {}),
    finishedAt: at,
    delivery: record.delivery.state === "queued" ? { ...record.delivery, state: "abandoned" } : record.delivery,
    notices: event === undefined ? record.notices : [...record.notices, notice(event, at)]
  })
}

/** Whether a pending verification is past its lifetime at `now`. */
export const isDue = (record: VerificationRecord, now: number): boolean =>
  record.status === "pending" && now >= record.expiresAt

/*
 * `notify`: whether the verification has a webhook to tell (its offer's
 * `webhookUrl` or the deployment's); without one no notice is owed.
 */

/** The expired verification (at its expiry instant). */
export const expire = (record: VerificationRecord, notify: boolean): VerificationRecord =>
  ended(record, { status: "expired" }, notify ? "verification.expired" : undefined, record.expiresAt)

export const cancel = (record: VerificationRecord, now: number): VerificationRecord =>
  ended(record, { status: "cancelled" }, undefined, now)

export const fail = (
  record: VerificationRecord,
  reason: FailureReason,
  now: number,
  notify: boolean
): VerificationRecord =>
  ended(record, { status: "failed", failureReason: reason }, notify ? "verification.failed" : undefined, now)

/** A wrong code: one attempt more, and the verification fails at the last one. */
export const wrongCode = (record: VerificationRecord, now: number, notify: boolean): VerificationRecord => {
  const next = { ...record, attempts: record.attempts + 1 }
  return next.attempts >= record.maxAttempts
    ? fail(next, "TOO_MANY_ATTEMPTS", now, notify)
    : changed(record, { attempts: next.attempts })
}

/** The verified verification with its token, valid until `validUntil`. */
export const verify = (
  record: VerificationRecord,
  token: string,
  validUntil: number,
  now: number,
  counted: boolean,
  notify: boolean
): VerificationRecord =>
  ended(
    record,
    { status: "verified", token, validUntil, attempts: counted ? record.attempts + 1 : record.attempts },
    notify ? "verification.verified" : undefined,
    now
  )

/** A new message: a new secret (only it is valid), a new lifetime, queued for sending (asked for `now`). */
export const renew = (
  record: VerificationRecord,
  secretHash: string,
  now: number,
  lifetimeMs: number,
  resendAfterMs: number,
  claim: Delivery["claim"]
): VerificationRecord =>
  changed(record, {
    secretHash,
    messagesAt: [...messageTimes(record), now],
    expiresAt: now + lifetimeMs,
    resendAvailableAt: now + resendAfterMs,
    delivery: claim === undefined ? { state: "queued", attempts: 0 } : { state: "queued", attempts: 0, claim }
  })

/** A new secret for the message about to be sent (the one made before was lost in a restart). */
export const rekey = (record: VerificationRecord, secretHash: string): VerificationRecord =>
  changed(record, { secretHash })

/** Whether another process holds the message's delivery at `now`. */
export const claimedByOther = (record: VerificationRecord, by: string, now: number): boolean =>
  record.delivery.claim !== undefined && record.delivery.claim.by !== by && record.delivery.claim.until > now

/**
 * `by` takes (or renews) the delivery of a queued message until `until`,
 * with a new code or link (`secretHash`) when it makes one; undefined when
 * another holds it.
 */
export const claimDelivery = (
  record: VerificationRecord,
  by: string,
  until: number,
  now: number,
  secretHash?: string
): VerificationRecord | undefined =>
  record.delivery.state !== "queued" || claimedByOther(record, by, now)
    ? undefined
    : changed(record, {
        delivery: { ...record.delivery, claim: { by, until } },
        ...(secretHash === undefined ? {} : { secretHash })
      })

/** The mail server took the message at `now`. */
export const sent = (record: VerificationRecord, now: number): VerificationRecord =>
  changed(record, {
    sentAt: [...record.sentAt, now],
    delivery: { state: "sent", attempts: record.delivery.attempts + 1 }
  })

/** A send attempt failed; a permanent failure gives the message up. */
export const sendFailed = (
  record: VerificationRecord,
  error: string,
  permanent: boolean,
  /** Who retries it, until when (through the backoff): another process leaves it alone meanwhile. */
  retryClaim?: Delivery["claim"]
): VerificationRecord =>
  changed(record, {
    delivery: {
      state: permanent ? "abandoned" : "queued",
      attempts: record.delivery.attempts + 1,
      lastError: error,
      ...(permanent || retryClaim === undefined ? {} : { claim: retryClaim })
    }
  })

/** An operator reset the address's redemption limit: this verification no longer counts. */
export const resetLimit = (record: VerificationRecord): VerificationRecord => changed(record, { limitReset: true })

/** The reverification reminder is owed (once). */
export const remind = (record: VerificationRecord, now: number): VerificationRecord =>
  changed(record, { notices: [...record.notices, notice("verification.reminder", now)] })

/** A notice's delivery attempt: `delivered` or one attempt more. */
export const noticeAttempted = (record: VerificationRecord, index: number, delivered: boolean): VerificationRecord =>
  changed(record, {
    notices: record.notices.map((entry, i) =>
      i === index ? { ...entry, delivered: entry.delivered || delivered, attempts: entry.attempts + 1 } : entry
    )
  })
