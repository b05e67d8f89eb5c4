/**
 * The refusals of proof of ownership, each written once for `Verifications`:
 * a request that is not valid (a field error), a store or queue that cannot
 * take the work now (503 with `Retry-After`), a verification that is no
 * longer pending, an address past its message or redemption limit; the
 * limits a write must keep (decided by the store with the write); and the
 * pending record a start stores. Pure but for the failures they return.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { ConfigSnapshot } from "../app/Snapshot.ts"
import { DEFAULT_TEAM } from "../config/settingsFile.ts"
import { RETRY_AFTER_SECONDS } from "../domain/retryAfter.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import type { VerificationRecord } from "../domain/Verification.ts"
import { periodMillis, type ResolvedPolicy, type VerificationMethod } from "../domain/VerificationPolicy.ts"
import {
  type LimitCheck,
  mailboxKey,
  messageBudgetKey,
  redemptionKey,
  unitsSince
} from "../domain/verificationLimits.ts"
import type { Viewer } from "../domain/visibility.ts"
import { canonicalAddress } from "../engine/email/canonical.ts"
import type { ParsedEmail } from "../engine/email/parseEmail.ts"
import { messageLocale } from "./messages.ts"
import type { LimitExceeded } from "./VerificationStore.ts"
import {
  InvalidVerificationRequest,
  MailboxLimitReached,
  RedemptionLimitReached,
  TooManyAttempts,
  TooManyMessages,
  VerificationExpired,
  VerificationNotPending,
  VerificationsError,
  VerificationUnavailable
} from "./VerificationsError.ts"

export const refuse = (reason: VerificationsError["reason"]) => Effect.fail(new VerificationsError({ reason }))

/** Nothing was accepted: a store cannot be used now (the default), or the send queue is full; the wait is the cause's. */
export const unavailable = (detail: string, cause: "storeUnavailable" | "queueFull" = "storeUnavailable") =>
  refuse(new VerificationUnavailable({ detail, retryAfterSeconds: RETRY_AFTER_SECONDS[cause] }))

export const invalid = (field: string, code: string, message: string) =>
  refuse(
    new InvalidVerificationRequest({
      detail: "The verification request is not valid.",
      errors: [{ field, code, message }]
    })
  )

/** Whole seconds to wait, at least one. */
export const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

const periodText = (ms: number) => Duration.format(Duration.millis(ms))

/** Why a verification that is not pending cannot be confirmed, resent or cancelled. */
export const notPending = (record: VerificationRecord) => {
  if (record.status === "expired") {
    return refuse(new VerificationExpired({ expiredAt: new Date(record.expiresAt).toISOString() }))
  }
  if (record.status === "failed" && record.failureReason === "TOO_MANY_ATTEMPTS") {
    return refuse(new TooManyAttempts({ maxAttempts: record.maxAttempts }))
  }
  return refuse(new VerificationNotPending({ status: record.status }))
}

/** The deployment's cap on the messages one mailbox is sent (`verification.mail`), in force for every offer. */
export interface MailboxCap {
  readonly max: number
  readonly windowMs: number
}

export const mailboxCapOf = (snapshot: ConfigSnapshot): MailboxCap => {
  const { maxMessagesPerMailbox, mailboxWindow } = snapshot.config.settings.verification.mail
  return { max: maxMessagesPerMailbox, windowMs: periodMillis(mailboxWindow) }
}

/**
 * What a write that asks for a message (a start, a resend) must keep: its
 * team's budget for the offer (or target group) and the mailbox's cap.
 */
export const messageLimits = (
  record: VerificationRecord,
  policy: ResolvedPolicy,
  cap: MailboxCap,
  now: number
): ReadonlyArray<LimitCheck> => [
  { key: messageBudgetKey(record), max: policy.maxMessagesPerAddress, since: now - policy.messageWindowMs },
  { key: mailboxKey(record.addressHash), max: cap.max, since: now - cap.windowMs }
]

/** What a write that makes a verification of an offer verified must keep: the offer's redemption limit. */
export const redemptionLimits = (
  record: VerificationRecord,
  policy: ResolvedPolicy,
  now: number
): ReadonlyArray<LimitCheck> =>
  record.offerId === undefined || policy.maxVerificationsPerAddress === undefined
    ? []
    : [
        {
          key: redemptionKey(record.team, record.offerId, record.addressHash),
          max: policy.maxVerificationsPerAddress,
          since: now - policy.redemptionWindowMs
        }
      ]

const redemptionLimitReached = (policy: ResolvedPolicy) =>
  new RedemptionLimitReached({
    limit: policy.maxVerificationsPerAddress ?? 0,
    window: periodText(policy.redemptionWindowMs)
  })

/** The refusal of a write a limit refused: the team's own figures, or for the shared cap nothing of others. */
export const limitRefusal = (
  exceeded: LimitExceeded,
  record: VerificationRecord,
  policy: ResolvedPolicy,
  cap: MailboxCap,
  now: number
): VerificationsError["reason"] => {
  const key = exceeded.check.key
  if (key === mailboxKey(record.addressHash))
    return new MailboxLimitReached({ retryAfterSeconds: seconds(cap.windowMs) })
  if (key !== messageBudgetKey(record)) return redemptionLimitReached(policy)
  return new TooManyMessages({
    limit: policy.maxMessagesPerAddress,
    window: periodText(policy.messageWindowMs),
    retryAfterSeconds: seconds(exceeded.oldest + policy.messageWindowMs - now)
  })
}

/**
 * The refusal when the address has already used the offer's redemptions in
 * the window (`others`: the address's verifications): read before a start,
 * so no message goes to someone who may not redeem. The decision that holds
 * under concurrency is taken when a verification is verified.
 */
export const alreadyRedeemed = (
  others: ReadonlyArray<VerificationRecord>,
  record: VerificationRecord,
  policy: ResolvedPolicy,
  now: number
): RedemptionLimitReached | undefined => {
  const [check] = redemptionLimits(record, policy, now)
  if (check === undefined) return undefined
  return unitsSince(others, check.key, check.since) >= check.max ? redemptionLimitReached(policy) : undefined
}

/** What a start asks of the method and the redirect. */
export interface StartChoices {
  readonly method?: VerificationMethod | undefined
  readonly redirectUrl?: string | undefined
}

/** The method a start uses (its own, else the policy's first), if the policy allows it and the redirect. */
export const methodOf = (request: StartChoices, policy: ResolvedPolicy) => {
  const method = request.method ?? policy.methods[0]!
  if (!policy.methods.includes(method)) {
    return invalid("/method", "METHOD_NOT_ALLOWED", `this offer verifies by ${policy.methods.join(" or ")}`)
  }
  if (request.redirectUrl !== undefined) {
    if (method !== "link") return invalid("/redirectUrl", "LINK_ONLY", "redirectUrl is for the link method")
    const refused = redirectRefusal(request.redirectUrl, policy)
    if (refused !== undefined) return invalid("/redirectUrl", "ORIGIN_NOT_ALLOWED", refused)
  }
  return Effect.succeed(method)
}

/**
 * Why the result of a verification may not go to `url` (undefined when it
 * may): its origin must be one of the offer's `redirectOrigins`. The one
 * rule for the link's redirect, the hosted page's `redirect_uri` and, with
 * `exactOrigin`, the window that opened the hosted page as a popup
 * (`opener`), which must be given as an origin alone (`https://shop.example`:
 * no path, no trailing slash), since the result is posted to exactly it.
 */
export const redirectRefusal = (
  url: string,
  policy: ResolvedPolicy,
  options: { readonly exactOrigin?: boolean } = {}
): string | undefined => {
  const origin = URL.parse(url)?.origin
  if (options.exactOrigin === true && origin !== url) return "give an origin alone, such as https://shop.example"
  if (origin !== undefined && policy.redirectOrigins.includes(origin)) return undefined
  return policy.redirectOrigins.length === 0
    ? "this offer allows no redirects (verification.redirectOrigins)"
    : `redirects go to ${policy.redirectOrigins.join(", ")} only`
}

/** The parsed address of a result that passed (the engine's normalised form). */
export const normalizedOf = (result: ValidationResult | OfferValidationResult): string | undefined => {
  const results = "results" in result ? result.results : [result]
  for (const one of results)
    if (one.validationDetails.format.normalized !== undefined) return one.validationDetails.format.normalized
  return undefined
}

/** The canonical form of a normalised address, which the address hash is taken of. */
export const canonicalOf = (normalized: string): string => {
  const at = normalized.lastIndexOf("@")
  return canonicalAddress({ localPart: normalized.slice(0, at), domain: normalized.slice(at + 1) } as ParsedEmail)
}

/** Whose verification it is: the offer's team, else the caller's, else the target group's (or the default team). */
const ownerOf = (
  snapshot: ConfigSnapshot,
  offerId: string | undefined,
  targetGroupId: string,
  viewer: Viewer
): string => {
  const offer = offerId === undefined ? undefined : snapshot.engine.offers.get(offerId)?.offer
  if (offer !== undefined) return offer.team
  if (typeof viewer === "string") return viewer
  return snapshot.engine.targetGroups.get(targetGroupId)?.targetGroup.team ?? DEFAULT_TEAM
}

export interface PendingRecordInput {
  readonly id: VerificationRecord["id"]
  readonly request: {
    readonly offerId?: string | undefined
    readonly locale?: string | undefined
    readonly redirectUrl?: string | undefined
  }
  /** The eligible answer the start was given. */
  readonly answer: ValidationResult | OfferValidationResult
  readonly viewer: Viewer
  readonly snapshot: ConfigSnapshot
  readonly policy: ResolvedPolicy
  readonly method: VerificationMethod
  readonly normalized: string
  readonly addressHash: string
  readonly secretHash: string
  readonly sealedAddress: string
  /** This process's claim on sending it (`verificationWork.ts`), so another daemon's sweep leaves it alone. */
  readonly claim: NonNullable<VerificationRecord["delivery"]["claim"]>
  readonly now: number
}

/** The record a start stores: pending, its message queued for this process to send. */
export const pendingRecord = (input: PendingRecordInput): VerificationRecord => {
  const { answer, request, policy, snapshot, now } = input
  const results = "results" in answer ? answer.results : [answer]
  const matched = results.find((result) => result.isValid) ?? results[0]!
  const institution = matched.validationDetails.domain.institution
  return {
    id: input.id,
    version: 0,
    team: ownerOf(snapshot, request.offerId, matched.targetGroup.id, input.viewer),
    ...(request.offerId === undefined ? {} : { offerId: request.offerId }),
    targetGroupId: matched.targetGroup.id,
    method: input.method,
    locale: messageLocale(request.locale ?? policy.locale, snapshot.config.templates),
    status: "pending",
    domain: input.normalized.slice(input.normalized.lastIndexOf("@") + 1),
    addressHash: input.addressHash,
    sealedAddress: input.sealedAddress,
    secretHash: input.secretHash,
    ...(request.redirectUrl === undefined ? {} : { redirectUrl: request.redirectUrl }),
    institution:
      institution === undefined
        ? null
        : { name: institution.name, country: institution.country, type: institution.type },
    createdAt: now,
    expiresAt: now + policy.lifetimeMs,
    attempts: 0,
    maxAttempts: policy.maxAttempts,
    sentAt: [],
    messagesAt: [now],
    resendAvailableAt: now + policy.resendAfterMs,
    delivery: { state: "queued", attempts: 0, claim: input.claim },
    notices: []
  }
}
