/**
 * Why a verification request was refused, as one tagged error with its
 * reasons inside; the server's error table (`server/problemOf.ts`) is the
 * one place a reason becomes its HTTP status and problem. Messages are
 * written for the person using the API and hold no code and no address;
 * a wait (`retryAfterSeconds`) is the reason's own where it follows from
 * the person's use, else its cause's (`domain/retryAfter.ts`).
 */
import * as Schema from "effect/Schema"
import { FieldError, OfferNotFound, TargetGroupNotFound } from "../domain/errors.ts"
import { VerificationStatus } from "../domain/Verification.ts"

/** The request is not valid for this offer: a method it does not allow, a redirect to another origin, ... */
export class InvalidVerificationRequest extends Schema.TaggedError<InvalidVerificationRequest>()(
  "InvalidVerificationRequest",
  { detail: Schema.String, errors: Schema.Array(FieldError) }
) {}

/** There is no such verification the caller's team can see. */
export class VerificationNotFound extends Schema.TaggedError<VerificationNotFound>()("VerificationNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `There is no verification "${this.id}".`
  }
}

/** The code is not the latest one sent; the verification stays pending. */
export class WrongCode extends Schema.TaggedError<WrongCode>()("WrongCode", { attemptsRemaining: Schema.Number }) {
  override get message(): string {
    return `The code is not correct; ${this.attemptsRemaining} attempt${this.attemptsRemaining === 1 ? "" : "s"} left.`
  }
}

/** Too many wrong codes: the verification has failed. */
export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()("TooManyAttempts", {
  maxAttempts: Schema.Number
}) {
  override get message(): string {
    return `The verification failed after ${this.maxAttempts} wrong codes; start a new one.`
  }
}

/** The code or link is past its lifetime: the verification has expired. */
export class VerificationExpired extends Schema.TaggedError<VerificationExpired>()("VerificationExpired", {
  expiredAt: Schema.String
}) {
  override get message(): string {
    return `The verification expired at ${this.expiredAt}; start a new one.`
  }
}

/** The verification is finished (verified, failed or cancelled) and cannot take this change. */
export class VerificationNotPending extends Schema.TaggedError<VerificationNotPending>()("VerificationNotPending", {
  status: VerificationStatus
}) {
  override get message(): string {
    return `The verification is ${this.status}, no longer pending.`
  }
}

/** The address has used up the offer's verifications for the window. */
export class RedemptionLimitReached extends Schema.TaggedError<RedemptionLimitReached>()("RedemptionLimitReached", {
  limit: Schema.Number,
  window: Schema.String
}) {
  override get message(): string {
    return `This address has already been verified ${this.limit} time${this.limit === 1 ? "" : "s"} for the offer within ${this.window}.`
  }
}

/** A new message is not available yet for this verification. */
export class ResendTooSoon extends Schema.TaggedError<ResendTooSoon>()("ResendTooSoon", {
  retryAfterSeconds: Schema.Number
}) {
  override get message(): string {
    return `A new message can be sent in ${this.retryAfterSeconds} seconds.`
  }
}

/** The address has been sent as many messages as its window allows. */
export class TooManyMessages extends Schema.TaggedError<TooManyMessages>()("TooManyMessages", {
  limit: Schema.Number,
  window: Schema.String,
  retryAfterSeconds: Schema.Number
}) {
  override get message(): string {
    return `This address has been sent ${this.limit} messages within ${this.window}; retry in ${this.retryAfterSeconds} seconds.`
  }
}

/**
 * The deployment's cap on messages to one mailbox is reached. It says
 * nothing of who asked for them or when (they may be another team's):
 * the wait is the cap's whole window.
 */
export class MailboxLimitReached extends Schema.TaggedError<MailboxLimitReached>()("MailboxLimitReached", {
  retryAfterSeconds: Schema.Number
}) {
  override get message(): string {
    return `This address cannot be sent more messages for now; retry in ${this.retryAfterSeconds} seconds.`
  }
}

/** The message cannot be queued now (the store cannot be written, or the send queue is full); nothing was accepted. */
export class VerificationUnavailable extends Schema.TaggedError<VerificationUnavailable>()("VerificationUnavailable", {
  detail: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

export class VerificationsError extends Schema.TaggedError<VerificationsError>()("VerificationsError", {
  reason: Schema.Union([
    InvalidVerificationRequest,
    TargetGroupNotFound,
    OfferNotFound,
    VerificationNotFound,
    WrongCode,
    TooManyAttempts,
    VerificationExpired,
    VerificationNotPending,
    RedemptionLimitReached,
    ResendTooSoon,
    TooManyMessages,
    MailboxLimitReached,
    VerificationUnavailable
  ])
}) {
  override get message(): string {
    return this.reason.message
  }
}
