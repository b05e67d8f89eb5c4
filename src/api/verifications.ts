/**
 * The verification endpoints (proof of ownership): start a verification of
 * an eligible address (a code or a link is mailed to it), confirm it with
 * its code, read it, send a new message, cancel it, look up whether an
 * address has a current verification for an offer, and reset an address's
 * redemption limit. Team-scoped like offers: another team's verification is
 * 404. The link a message carries (`GET /v/{token}`) and the signing keys
 * (`GET /.well-known/jwks.json`) are served beside the API, without a key.
 */
import * as Context from "effect/Context"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { VerificationView } from "../domain/Verification.ts"
import { VerificationMethod } from "../domain/VerificationPolicy.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { Idempotency, IdempotencyHeaders } from "./idempotency.ts"
import { BadRequest, Conflict, Gone, NotFound, ServiceUnavailable, TooManyRequests } from "./problems.ts"
import { RateLimitBucket } from "./rateLimits.ts"
import { OfferValidationResponse, ValidationResponse } from "./validation.ts"

const pendingExample: typeof VerificationView.Encoded = {
  id: "ver_k3v9q2m7x4c8b1n6z5t0w2y4r8",
  status: "pending",
  method: "code",
  offerId: "acme-student-discount",
  targetGroupId: "universities",
  email: "***@ox.ac.uk",
  locale: "en",
  institution: { name: "University of Oxford", country: "GB", type: "university" },
  createdAt: "2026-11-21T10:00:00.000Z",
  expiresAt: "2026-11-21T10:10:00.000Z",
  resendAvailableAt: "2026-11-21T10:00:30.000Z",
  attempts: { made: 0, remaining: 5 },
  messages: { sent: 0, delivery: "queued", lastSentAt: null },
  finishedAt: null,
  notices: []
}

const verifiedExample: typeof VerificationView.Encoded = {
  ...pendingExample,
  status: "verified",
  attempts: { made: 1, remaining: 4 },
  messages: { sent: 1, delivery: "sent", lastSentAt: "2026-11-21T10:00:01.000Z" },
  finishedAt: "2026-11-21T10:02:13.000Z",
  eligibility: {
    token:
      "eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiIsInR5cCI6ImNhbXB1c2dhdGUtZWxpZ2liaWxpdHkrand0In0.eyJpc3MiOiIuLi4ifQ.c2ln",
    expiresAt: "2027-11-21T10:02:13.000Z"
  }
}

export const StartVerificationRequest = Schema.Struct({
  email: Schema.String,
  offerId: Schema.optionalKey(Schema.String),
  targetGroupId: Schema.optionalKey(Schema.String),
  /** `code` (default) or `link`, among those the offer allows. */
  method: Schema.optionalKey(VerificationMethod),
  /** The message's language (en, de, fr, es, or one the config directory adds); default the offer's. */
  locale: Schema.optionalKey(
    Schema.String.pipe(
      Schema.check(
        Schema.isPattern(/^[a-z]{2}([-_][A-Za-z]{2,4})?$/, { message: "a language tag such as en or de-AT" })
      )
    )
  ),
  /** For links: where the browser goes after confirming, on an origin the offer allows. */
  redirectUrl: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(2048))))
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { email: "jane@ox.ac.uk", offerId: "acme-student-discount" },
      {
        email: "max@tum.de",
        offerId: "acme-student-discount",
        method: "link",
        locale: "de",
        redirectUrl: "https://shop.acme.example/student/done"
      }
    ]
  })
)
export type StartVerificationRequest = typeof StartVerificationRequest.Type

export const ConfirmRequest = Schema.Struct({
  code: Schema.String.pipe(Schema.check(Schema.isPattern(/^\d{6,10}$/, { message: "the digits of the code" })))
}).pipe(Schema.annotateEncoded({ examples: [{ code: "493027" }] }))

export const LookupQuery = {
  email: Schema.String.annotate({ examples: ["jane@ox.ac.uk"] }),
  offerId: Schema.optionalKey(Schema.String.annotate({ examples: ["acme-student-discount"] })),
  targetGroupId: Schema.optionalKey(Schema.String)
}

export const LookupResponse = Schema.Struct({
  /** The newest verified verification of the address whose token is still valid; null when there is none. */
  current: Schema.NullOr(VerificationView)
})
  .annotate({ identifier: "VerificationLookup" })
  .pipe(Schema.annotateEncoded({ examples: [{ current: verifiedExample }, { current: null }] }))

export const ResetLimitRequest = Schema.Struct({ email: Schema.String, offerId: Schema.String }).pipe(
  Schema.annotateEncoded({ examples: [{ email: "jane@ox.ac.uk", offerId: "acme-student-discount" }] })
)

export const ResetLimitResponse = Schema.Struct({
  /** Verifications of the address that no longer count towards the offer's redemption limit. */
  reset: Count
})
  .annotate({ identifier: "RedemptionLimitReset" })
  .pipe(Schema.annotateEncoded({ examples: [{ reset: 1 }] }))

const IdParam = { id: Schema.String.annotate({ examples: ["ver_k3v9q2m7x4c8b1n6z5t0w2y4r8"] }) }
const common = [BadRequest, NotFound, Conflict, Gone, TooManyRequests, ServiceUnavailable] as const
/** What starts, confirms, resends or cancels a verification: the write scope, counted against the `verifications` rate limit. */
const rateLimitedWrite = Context.make(RequiredScope, "verifications:write").pipe(
  Context.add(RateLimitBucket, "verifications")
)

export class VerificationsApi extends HttpApiGroup.make("verifications")
  .add(
    HttpApiEndpoint.post("start", "/verifications", {
      headers: IdempotencyHeaders,
      payload: StartVerificationRequest,
      success: [
        VerificationView.pipe(Schema.annotateEncoded({ examples: [pendingExample] }), HttpApiSchema.status(201)),
        Schema.Union([ValidationResponse, OfferValidationResponse])
      ],
      error: common
    })
      .middleware(Idempotency)
      .annotateMerge(rateLimitedWrite)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Start proving that a person controls an eligible address",
          description:
            "Eligibility is decided first, as by the validate endpoints: an ineligible address is answered 200 with the failed validation result (`isValid: false`, `reason`, `reasonCode`) and is sent nothing. An eligible one is answered 201 with the pending verification, and a message with a one-time code (or a link) is sent to it. 429 `TOO_MANY_MESSAGES` when the address has had its messages for the hour, 409 `REDEMPTION_LIMIT_REACHED` when it has used up the offer's verifications, 503 with `Retry-After` only when the message cannot even be queued."
        })
      ),
    HttpApiEndpoint.get("lookup", "/verifications", { query: LookupQuery, success: LookupResponse, error: common })
      .annotate(RequiredScope, "verifications:read")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Whether an address has a current verification for an offer",
          description:
            "Looked up by the keyed hash of the canonical address (`+tags`, case and provider dots do not matter), so a returning person need not be mailed again. Give `offerId` or `targetGroupId`."
        })
      ),
    HttpApiEndpoint.get("get", "/verifications/:id", {
      params: IdParam,
      success: VerificationView.pipe(Schema.annotateEncoded({ examples: [pendingExample, verifiedExample] })),
      error: common
    })
      .annotate(RequiredScope, "verifications:read")
      .annotateMerge(
        OpenApi.annotations({
          summary: "A verification's status, times, attempts, messages and token",
          description:
            "`pending`, `verified`, `failed`, `expired` or `cancelled`, with its times, the attempts made and left, the messages sent and, once verified, the signed eligibility token. The address is masked; another team's verification is 404."
        })
      ),
    HttpApiEndpoint.post("confirm", "/verifications/:id/confirm", {
      params: IdParam,
      payload: ConfirmRequest,
      success: VerificationView.pipe(Schema.annotateEncoded({ examples: [verifiedExample] })),
      error: common
    })
      .annotateMerge(rateLimitedWrite)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Confirm a verification with the code the person received",
          description:
            "200 with the verified verification and its signed eligibility token. A wrong code is 400 `INVALID_CODE` with `attemptsRemaining`; after the last attempt the verification has failed (400 `TOO_MANY_ATTEMPTS`); past its lifetime 410 `VERIFICATION_EXPIRED`; a finished one 409 `VERIFICATION_NOT_PENDING`. Only the latest code sent is valid."
        })
      ),
    HttpApiEndpoint.post("resend", "/verifications/:id/resend", {
      headers: IdempotencyHeaders,
      params: IdParam,
      success: VerificationView,
      error: common
    })
      .middleware(Idempotency)
      .annotateMerge(rateLimitedWrite)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Send a new code or link (the previous one stops working)",
          description:
            "Available from `resendAvailableAt` (429 `RESEND_TOO_SOON` with `Retry-After` before); the new message has a new lifetime. 429 `TOO_MANY_MESSAGES` when the address has had its messages for the window."
        })
      ),
    HttpApiEndpoint.delete("cancel", "/verifications/:id", {
      params: IdParam,
      success: VerificationView,
      error: common
    })
      .annotateMerge(rateLimitedWrite)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Cancel a pending verification (its code or link stops working)",
          description:
            "The verification becomes `cancelled` and its code or link no longer confirms it. A verification that has already finished is 409 `VERIFICATION_NOT_PENDING`."
        })
      ),
    HttpApiEndpoint.post("resetLimit", "/verifications/reset-limit", {
      payload: ResetLimitRequest,
      success: ResetLimitResponse,
      error: common
    })
      .annotate(RequiredScope, "verifications:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Reset an address's redemption limit for an offer",
          description:
            "The address's verified verifications of the offer stop counting towards `maxVerificationsPerAddress` (they stay verified)."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "Proof that a person controls an eligible address: a one-time code or link sent to it, confirmed for a signed eligibility token that a shop checks offline against /.well-known/jwks.json."
    })
  )
  .middleware(Authorization) {}
