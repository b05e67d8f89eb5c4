/**
 * The hosted flow's steps: what a flow's page shows now (`entry`, `show`),
 * and what a form submission does (`submit`: start, confirm, resend,
 * restart), with each refusal of the verification service turned into a
 * notice on the flow's page or a page of its own (`refusal`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import type { VerificationsError } from "../../verification/VerificationsError.ts"
import type { RateLimitDecider } from "../rateLimit.ts"
import { type Flow, type Notice, newNonce } from "./flowCookie.ts"
import {
  admit,
  type Exchange,
  exchangeOf,
  handoffOf,
  languageOf,
  linkRedirect,
  page,
  problem,
  seeOther,
  successTarget,
  type Target,
  UNAVAILABLE_RETRY_SECONDS
} from "./hostedExchange.ts"
import { reasonWord } from "./hostedWords.ts"

/** Why an address was refused: an offer's own reason (not active), else the first target group's. */
const refusedFor = (answer: ValidationResult | OfferValidationResult): ReasonCode | undefined =>
  "results" in answer && answer.reasonCode !== "OFFER_NOT_ACTIVE"
    ? (answer.results.find((result) => result.reasonCode !== undefined)?.reasonCode ?? answer.reasonCode)
    : answer.reasonCode

/** A started verification in the flow; the login step of an OpenID Connect authorization keeps the sealed address too. */
const startedFlow = (
  flow: Flow,
  outcome: { readonly started: { readonly id: string }; readonly sealedAddress: string }
) => ({
  verificationId: outcome.started.id,
  sealedAddress: flow.interaction === undefined ? undefined : outcome.sealedAddress
})

const minutes = (seconds: number) => Math.max(1, Math.ceil(seconds / 60))

/** The page a flow shows now: the email form, or its verification's step. */
const show = (exchange: Exchange, target: Target, flow: Flow) =>
  Effect.gen(function* () {
    const notice = flow.notice
    const kept: Flow = { ...flow, notice: undefined }
    if (flow.verificationId === undefined) return page(exchange, target, kept, 200, { kind: "email", notice })
    const read = yield* Effect.result(exchange.verifications.get(target.team, flow.verificationId))
    if (read._tag === "Failure") {
      if (read.failure.reason._tag === "VerificationUnavailable")
        return problem(exchange, target, 503, "unavailable", { retry: true, flow: kept })
      const fresh: Flow = { ...kept, verificationId: undefined }
      return page(exchange, target, fresh, 200, { kind: "email", notice })
    }
    const view = read.success
    switch (view.status) {
      case "pending": {
        const resendSeconds = Math.max(0, Math.ceil((Date.parse(view.resendAvailableAt) - exchange.now) / 1000))
        return page(exchange, target, kept, 200, { kind: view.method, email: view.email, resendSeconds, notice })
      }
      case "verified": {
        const location = successTarget(exchange.keys, flow, view)
        if (location !== undefined) return seeOther(exchange, location, kept)
        return page(exchange, target, kept, 200, { kind: "done", handoff: handoffOf(flow, view) })
      }
      case "expired":
      case "cancelled":
        return page(exchange, target, kept, 410, { kind: "ended", notice: { key: "expired" } })
      case "failed":
        return page(exchange, target, kept, 409, {
          kind: "ended",
          notice: { key: view.failureReason === "REDEMPTION_LIMIT_REACHED" ? "limitReached" : "tooManyAttempts" }
        })
    }
  })

export const entry = (offerId: string | undefined) =>
  Effect.gen(function* () {
    const exchange = yield* exchangeOf
    const admitted = admit(exchange, offerId)
    if ("refused" in admitted) return admitted.refused
    const { target, flow } = admitted
    // The address opened decides the language: a flow reopened without `?locale=` follows the browser again.
    const locale = exchange.query.get("locale") ?? undefined
    if (flow !== undefined) return yield* show(exchange, target, { ...flow, locale })
    const fresh: Flow = {
      nonce: newNonce(),
      offerId: target.offerId,
      targetGroupId: target.targetGroupId,
      redirectUri: admitted.redirectUri,
      state: admitted.state,
      opener: admitted.opener,
      interaction: admitted.interaction,
      locale,
      at: exchange.now
    }
    exchange.count(target, "started")
    return page(exchange, target, fresh, 200, { kind: "email" })
  })

/** What a refusal of the service shows: a notice on the flow's page, or a page of its own. */
const refusal = (exchange: Exchange, target: Target, flow: Flow, error: VerificationsError) => {
  const reason = error.reason
  const back = (notice: Notice | undefined, next: Flow = flow) =>
    seeOther(exchange, exchange.action, { ...next, notice })
  switch (reason._tag) {
    case "WrongCode":
      return back({ key: "wrongCode", values: { attempts: reason.attemptsRemaining }, field: "code" })
    case "ResendTooSoon":
      return back({ key: "resendWait", values: { seconds: reason.retryAfterSeconds } })
    case "TooManyMessages":
    case "MailboxLimitReached":
      return back({ key: "tooManyMessages", values: { minutes: minutes(reason.retryAfterSeconds) } })
    case "RedemptionLimitReached":
      return back({ key: "limitReached", field: flow.verificationId === undefined ? "email" : undefined })
    case "VerificationNotFound":
      return back({ key: "expired" }, { ...flow, verificationId: undefined })
    case "OfferNotFound":
    case "TargetGroupNotFound":
      return problem(exchange, target, 404, "notFound")
    case "InvalidVerificationRequest":
      if (reason.errors.some((field) => field.field === "/redirectUrl"))
        return problem(exchange, target, 400, "redirectRefused")
      return back(undefined)
    case "VerificationUnavailable":
      return problem(exchange, target, 503, "unavailable", { retry: true, flow })
    default:
      // Too many attempts, expired, no longer pending: the page shows the record as it is now.
      return back(undefined)
  }
}

export const submit = (decide: RateLimitDecider["decide"], offerId: string | undefined) =>
  Effect.gen(function* () {
    const exchange = yield* exchangeOf
    const address = Option.getOrElse(exchange.request.remoteAddress, () => "unknown")
    const decision = yield* decide(`address:${address}`, "hostedFlow")
    const admitted = admit(exchange, offerId)
    if ("refused" in admitted) return admitted.refused
    const { target, flow } = admitted
    if (decision.problem !== undefined) {
      const seconds =
        decision.problem._tag === "TooManyRequests" ? decision.problem.retryAfterSeconds : UNAVAILABLE_RETRY_SECONDS
      return problem(
        exchange,
        target,
        decision.problem._tag === "TooManyRequests" ? 429 : 503,
        decision.problem._tag === "TooManyRequests" ? "rateLimited" : "unavailable",
        { values: { seconds: seconds ?? 60 }, retry: true }
      )
    }
    const form = new URLSearchParams(yield* Effect.orElseSucceed(exchange.request.text, () => ""))
    if (flow === undefined || !exchange.keys.csrfMatches(flow, form.get("csrf") ?? undefined)) {
      return problem(exchange, target, 403, "formExpired", { retry: true })
    }
    const back = (next: Flow) => seeOther(exchange, exchange.action, next)
    const service = exchange.verifications
    switch (form.get("action")) {
      case "start": {
        const email = (form.get("email") ?? "").trim()
        if (email === "") return back({ ...flow, notice: { key: "emailRequired", field: "email" } })
        const method = target.policy.methods[0]!
        const { locale } = languageOf(exchange, target, flow)
        const started = yield* Effect.result(
          service.start(target.team, {
            email,
            ...(target.offerId === undefined ? { targetGroupId: target.targetGroupId } : { offerId: target.offerId }),
            method,
            locale,
            // A popup's result goes to its opener from the popup: the message's link, opened elsewhere, only confirms.
            redirectUrl: method === "link" && flow.opener === undefined ? linkRedirect(flow) : undefined
          })
        )
        if (started._tag === "Failure") return refusal(exchange, target, flow, started.failure)
        const outcome = started.success
        if ("ineligible" in outcome) {
          exchange.count(target, "ineligibleSubmissions")
          return back({
            ...flow,
            notice: {
              key: "ineligible",
              values: { reason: reasonWord(refusedFor(outcome.ineligible)) },
              field: "email"
            }
          })
        }
        exchange.count(target, "reachedCodeStep")
        return back({ ...flow, ...startedFlow(flow, outcome), notice: undefined })
      }
      case "confirm": {
        if (flow.verificationId === undefined) return back(flow)
        const code = (form.get("code") ?? "").replace(/\s+/g, "")
        if (code === "") return back({ ...flow, notice: { key: "codeRequired", field: "code" } })
        const confirmed = yield* Effect.result(service.confirm(target.team, flow.verificationId, code))
        if (confirmed._tag === "Failure") return refusal(exchange, target, flow, confirmed.failure)
        exchange.count(target, "completed")
        const location = successTarget(exchange.keys, flow, confirmed.success)
        return location === undefined ? back({ ...flow, notice: undefined }) : seeOther(exchange, location, flow)
      }
      case "resend": {
        if (flow.verificationId === undefined) return back(flow)
        const resent = yield* Effect.result(service.resend(target.team, flow.verificationId))
        if (resent._tag === "Failure") return refusal(exchange, target, flow, resent.failure)
        return back({ ...flow, notice: { key: "resent" } })
      }
      case "restart":
        return back({ ...flow, verificationId: undefined, notice: undefined })
      default:
        return back(flow)
    }
  })
