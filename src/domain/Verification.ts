/**
 * A verification: the proof that a person controls an address an offer (or
 * a target group) accepts, by a one-time code or a link sent to it. The
 * stored record (`VerificationRecord`) holds no address and no code: the
 * address as a keyed hash of its canonical form (for lookups and
 * redemption limits) and, while a message may still have to be sent, sealed
 * (encrypted with the deployment's key, dropped when the verification
 * ends); the current code or link secret as a keyed hash. Only the latest
 * code is valid. What the API shows is `VerificationView`.
 *
 * Status moves one way: `pending` → `verified` | `failed` | `expired` |
 * `cancelled`, and a finished verification never changes status again.
 */
import * as Schema from "effect/Schema"
import { Count } from "./Count.ts"
import { InstitutionType } from "./Institution.ts"
import { VerificationMethod } from "./VerificationPolicy.ts"

/** `ver_` and 26 lower-case letters or digits (130 random bits): safe in URLs, logs and file names. */
export const VerificationId = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^ver_[a-z0-9]{26}$/, { message: "a verification id is ver_ and 26 lower-case letters or digits" })
  ),
  Schema.brand("VerificationId")
)
export type VerificationId = typeof VerificationId.Type

export const VerificationStatus = Schema.Literals(["pending", "verified", "failed", "expired", "cancelled"])
export type VerificationStatus = typeof VerificationStatus.Type

/** Why a verification failed. */
export const FailureReason = Schema.Literals(["TOO_MANY_ATTEMPTS", "REDEMPTION_LIMIT_REACHED"])
export type FailureReason = typeof FailureReason.Type

/** The events a verification posts to its webhook. */
export const VerificationEvent = Schema.Literals([
  "verification.verified",
  "verification.failed",
  "verification.expired",
  "verification.reminder"
])
export type VerificationEvent = typeof VerificationEvent.Type

/** The institution the address belongs to, as the token names it. */
export const VerifiedInstitution = Schema.Struct({
  name: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  type: InstitutionType
})
export type VerifiedInstitution = typeof VerifiedInstitution.Type

/** Where the message stands: waiting to be (re)sent, handed to the mail server, or given up (the verification ended). */
export const DeliveryState = Schema.Literals(["queued", "sent", "abandoned"])
export type DeliveryState = typeof DeliveryState.Type

export const Delivery = Schema.Struct({
  state: DeliveryState,
  /** Send attempts of the current message. */
  attempts: Count,
  /** Why the last attempt failed (the mail server's answer class, never an address). */
  lastError: Schema.optionalKey(Schema.String),
  /**
   * The process sending (or about to retry) the queued message, and until
   * when: daemons sharing a store send each message once; a claim that
   * lapses (its process died) is taken over.
   */
  claim: Schema.optionalKey(Schema.Struct({ by: Schema.String, until: Schema.Number }))
})
export type Delivery = typeof Delivery.Type

/** A webhook notice owed for an event, and whether it arrived. */
export const Notice = Schema.Struct({
  event: VerificationEvent,
  at: Schema.Number,
  delivered: Schema.Boolean,
  attempts: Count
})
export type Notice = typeof Notice.Type

const Millis = Schema.Number

export const VerificationRecord = Schema.Struct({
  id: VerificationId,
  /** +1 on every change: a store replaces a record only over the version it was read at. */
  version: Count,
  team: Schema.String,
  offerId: Schema.optionalKey(Schema.String),
  /** The target group asked for, or for an offer the first of its target groups that matched. */
  targetGroupId: Schema.String,
  method: VerificationMethod,
  locale: Schema.String,
  status: VerificationStatus,
  /** The address's domain (ASCII), shown as `***@domain`. */
  domain: Schema.String,
  /** Keyed hash of the canonical address (`+tags`, case, provider dots folded), hex. */
  addressHash: Schema.String,
  /** The address encrypted with the deployment's key, kept only while the verification is pending. */
  sealedAddress: Schema.optionalKey(Schema.String),
  /** Keyed hash of the current code or link secret; absent until one is made, and for a code once the verification ends. */
  secretHash: Schema.optionalKey(Schema.String),
  redirectUrl: Schema.optionalKey(Schema.String),
  institution: Schema.NullOr(VerifiedInstitution),
  createdAt: Millis,
  expiresAt: Millis,
  attempts: Count,
  maxAttempts: Count,
  /** When each message was handed to the mail server. */
  sentAt: Schema.Array(Millis),
  /**
   * When each message was asked for, by the start and each resend: the
   * message limits count them (`verificationLimits.ts`). Absent in records
   * written before it was kept: `sentAt` counts instead.
   */
  messagesAt: Schema.optionalKey(Schema.Array(Millis)),
  resendAvailableAt: Millis,
  delivery: Delivery,
  finishedAt: Schema.optionalKey(Millis),
  failureReason: Schema.optionalKey(FailureReason),
  /** The eligibility token (JWS) of a verified verification, and when it expires. */
  token: Schema.optionalKey(Schema.String),
  validUntil: Schema.optionalKey(Millis),
  /** An operator reset the address's redemption limit: this verification no longer counts towards it. */
  limitReset: Schema.optionalKey(Schema.Boolean),
  /** The webhook notices of this verification, in order. */
  notices: Schema.Array(Notice)
})
export type VerificationRecord = typeof VerificationRecord.Type

/** Whether the status is final. */
export const isFinished = (status: VerificationStatus): boolean => status !== "pending"

/** A verification as the API and the library answer it. */
export const VerificationView = Schema.Struct({
  id: VerificationId,
  status: VerificationStatus,
  method: VerificationMethod,
  offerId: Schema.optionalKey(Schema.String),
  targetGroupId: Schema.String,
  /** The address with its local part hidden: `***@ox.ac.uk`. */
  email: Schema.String,
  locale: Schema.String,
  institution: Schema.NullOr(VerifiedInstitution),
  createdAt: Schema.String,
  /** Until when the code or link works (pending), or when the verification ended otherwise. */
  expiresAt: Schema.String,
  /** From when a new message may be asked for (`POST .../resend`). */
  resendAvailableAt: Schema.String,
  attempts: Schema.Struct({ made: Count, remaining: Count }),
  messages: Schema.Struct({
    sent: Count,
    /** `queued` until the mail server took the message (it is retried with backoff), then `sent`. */
    delivery: DeliveryState,
    lastSentAt: Schema.NullOr(Schema.String)
  }),
  finishedAt: Schema.NullOr(Schema.String),
  failureReason: Schema.optionalKey(FailureReason),
  /** For a verified verification: the signed eligibility token (JWS) and until when it is valid. */
  eligibility: Schema.optionalKey(Schema.Struct({ token: Schema.String, expiresAt: Schema.String })),
  notices: Schema.Array(
    Schema.Struct({ event: VerificationEvent, at: Schema.String, delivered: Schema.Boolean, attempts: Count })
  )
}).annotate({ identifier: "Verification" })
export type VerificationView = typeof VerificationView.Type

const iso = (millis: number): string => new Date(millis).toISOString()

/** The view of a record. */
export const toView = (record: VerificationRecord): VerificationView => {
  const lastSent = record.sentAt.length === 0 ? undefined : record.sentAt[record.sentAt.length - 1]
  return {
    id: record.id,
    status: record.status,
    method: record.method,
    ...(record.offerId === undefined ? {} : { offerId: record.offerId }),
    targetGroupId: record.targetGroupId,
    email: `***@${record.domain}`,
    locale: record.locale,
    institution: record.institution,
    createdAt: iso(record.createdAt),
    expiresAt: iso(record.expiresAt),
    resendAvailableAt: iso(record.resendAvailableAt),
    attempts: { made: record.attempts, remaining: Math.max(0, record.maxAttempts - record.attempts) },
    messages: {
      sent: record.sentAt.length,
      delivery: record.delivery.state,
      lastSentAt: lastSent === undefined ? null : iso(lastSent)
    },
    finishedAt: record.finishedAt === undefined ? null : iso(record.finishedAt),
    ...(record.failureReason === undefined ? {} : { failureReason: record.failureReason }),
    ...(record.token === undefined || record.validUntil === undefined
      ? {}
      : { eligibility: { token: record.token, expiresAt: iso(record.validUntil) } }),
    notices: record.notices.map((notice) => ({ ...notice, at: iso(notice.at) }))
  }
}
