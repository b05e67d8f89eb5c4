/**
 * The hosted verification flow (`GET /verify/{offerId}`, `GET
 * /verify?targetGroupId=…`): a page a shop sends a person to, which asks
 * for the address, then the code (or says "check your inbox" for a link),
 * and on success sends the browser back to the caller's `redirect_uri`
 * with the signed eligibility token and the caller's `state`, or shows
 * that it is done. Plain forms posting to the flow's own address and
 * answered with a 303 back to it (post-redirect-get), so it works without
 * JavaScript; pages in `hostedPages.ts`, words in `hostedWords.ts`.
 *
 * - No API key: the flow acts as the offer's team (a target group's, or
 *   for a shared group the default team), through `Verifications`, which
 *   applies the team rule (`domain/visibility.ts`), the offer's policy and
 *   every per-address limit.
 * - `redirect_uri` must be on one of the offer's `redirectOrigins` — the
 *   rule the link's redirect obeys (`redirectRefusal`); another is refused
 *   with a 400 page before anything is shown.
 * - The state lives in a signed cookie (`flowCookie.ts`) and the
 *   verification record: any daemon sharing the store continues the flow.
 *   Every form carries the flow's CSRF token, checked in constant time.
 * - Form submissions draw on the `hostedFlow` rate limit of the client's
 *   address (`rateLimits.hostedFlow`).
 * - Answers are never cached, send no referrer, and carry a strict CSP:
 *   scripts and styles from this origin only (and one `<style>` with the
 *   answer's nonce), images from this origin, forms to this origin and the
 *   redirect's, no framing.
 */
import { randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { notFound as notFoundProblem } from "../../api/problems.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import type { PageLogo } from "../../config/pageLogos.ts"
import { DEFAULT_TEAM } from "../../config/settingsFile.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import type { VerificationView } from "../../domain/Verification.ts"
import type { ResolvedPolicy } from "../../domain/VerificationPolicy.ts"
import { Verifications, type VerificationsService } from "../../verification/Verifications.ts"
import type { VerificationsError } from "../../verification/VerificationsError.ts"
import { policyOf } from "../../verification/verificationPolicy.ts"
import { redirectRefusal } from "../../verification/verificationRules.ts"
import { cameOverTls } from "../credentials.ts"
import { answerWith } from "../problemResponse.ts"
import { makeRateLimitDecider, type RateLimitDecider } from "../rateLimit.ts"
import { HOSTED_ASSET_PATH, HOSTED_LOGO_PATH, HOSTED_OFFER_PATH, HOSTED_PATH } from "../routes.ts"
import { assetResponse, contentHash, makeAsset, type StaticAsset } from "../staticAsset.ts"
import { redirectTarget } from "../verificationRoutes.ts"
import { FLOW_COOKIE, type Flow, type FlowKeys, flowCookie, flowKeys, type Notice, newNonce } from "./flowCookie.ts"
import { hostedAssets } from "./hostedAssets.ts"
import { type PageContext, type Presentation, renderPage, type Step } from "./hostedPages.ts"
import { chooseLocale, pageLocales, reasonWord, wordsOf } from "./hostedWords.ts"

/** The deployment's verification secret, which signs flows (every daemon sharing a store has the same). */
export class HostedFlowSecret extends Context.Service<HostedFlowSecret, string>()(
  "campusgate/server/HostedFlowSecret"
) {}

const DEFAULT_ACCENT = "#1d4ed8"
const MAX_REDIRECT_URI = 2048
const MAX_STATE = 512
const UNAVAILABLE_RETRY_SECONDS = 30

/** What the flow is for, and as whom it acts. */
interface Target {
  readonly offerId?: string | undefined
  readonly targetGroupId?: string | undefined
  readonly team: string
  readonly name: string
  readonly policy: ResolvedPolicy
}

const targetOf = (snapshot: ConfigSnapshot, offerId: string | undefined, groupId: string | undefined) => {
  if (offerId !== undefined) {
    const offer = snapshot.engine.offers.get(offerId)?.offer
    if (offer === undefined) return undefined
    return { offerId, team: offer.team, name: offer.name, policy: policyOf(snapshot, { offerId }) } satisfies Target
  }
  if (groupId === undefined) return undefined
  const group = snapshot.engine.targetGroups.get(groupId)?.targetGroup
  if (group === undefined) return undefined
  return {
    targetGroupId: groupId,
    team: group.team ?? DEFAULT_TEAM,
    name: group.name,
    policy: policyOf(snapshot, {})
  } satisfies Target
}

const logoHashes = new WeakMap<PageLogo, string>()
const logoHash = (logo: PageLogo): string => {
  let hash = logoHashes.get(logo)
  if (hash === undefined) {
    hash = contentHash(logo.bytes)
    logoHashes.set(logo, hash)
  }
  return hash
}

const presentationOf = (snapshot: ConfigSnapshot, target: Target | undefined): Presentation => {
  const page = target?.policy.page ?? snapshot.config.settings.verification.page
  const logo = page?.logo === undefined ? undefined : snapshot.config.pageLogos?.get(page.logo)
  return {
    displayName: page?.displayName ?? target?.name ?? "Campusgate",
    logoUrl: logo === undefined ? undefined : `/verify/logos/${logoHash(logo)}`,
    accentColor: page?.accentColor ?? DEFAULT_ACCENT,
    supportUrl: page?.supportUrl,
    privacyUrl: page?.privacyUrl,
    privacyNotice: page?.privacyNotice
  }
}

const cspOf = (nonce: string, redirectOrigin: string | undefined) =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self'; form-action 'self'${redirectOrigin === undefined ? "" : ` ${redirectOrigin}`}; base-uri 'none'; frame-ancestors 'none'`

const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff" }

/** Where the browser goes on success: as after a link, the caller's `redirect_uri` (with its `state`) and the outcome. */
const successTarget = (flow: Flow, view: VerificationView): string | undefined =>
  redirectTarget({ outcome: "verified", locale: view.locale, verification: view, redirectUrl: linkRedirect(flow) })

/** The caller's `redirect_uri` with its `state`: the redirect a link carries (the link page adds the outcome). */
const linkRedirect = (flow: Flow): string | undefined => {
  if (flow.redirectUri === undefined) return undefined
  const url = new URL(flow.redirectUri)
  if (flow.state !== undefined) url.searchParams.set("state", flow.state)
  return url.toString()
}

/** Everything one request of the flow needs. */
interface Exchange {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly snapshot: ConfigSnapshot
  readonly keys: FlowKeys
  readonly verifications: VerificationsService
  readonly query: URLSearchParams
  /** The flow's address: path and query as requested. */
  readonly action: string
  readonly now: number
}

const exchangeOf = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, "http://campusgate.invalid")
  return {
    request,
    snapshot: (yield* Snapshot).current(),
    keys: flowKeys(yield* HostedFlowSecret),
    verifications: yield* Verifications,
    query: url.searchParams,
    action: `${url.pathname}${url.search}`,
    now: Date.now()
  } satisfies Exchange
})

/** The page's language and words for this request. */
const languageOf = (exchange: Exchange, target: Target | undefined, flow: Flow | undefined) => {
  const templates = exchange.snapshot.config.templates
  const locale = chooseLocale(
    pageLocales(templates),
    exchange.query.get("locale") ?? flow?.locale,
    exchange.request.headers["accept-language"],
    target?.policy.locale ?? exchange.snapshot.config.settings.verification.locale
  )
  return { locale, words: wordsOf(locale, templates) }
}

/** An HTML answer of the flow; `flow` is written back to the cookie when given. */
const page = (
  exchange: Exchange,
  target: Target | undefined,
  flow: Flow | undefined,
  status: number,
  step: Step,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => {
  const nonce = randomBytes(16).toString("base64")
  const context: PageContext = {
    ...languageOf(exchange, target, flow),
    presentation: presentationOf(exchange.snapshot, target),
    nonce,
    action: exchange.action,
    csrf: flow === undefined ? undefined : exchange.keys.csrfToken(flow)
  }
  const origin = flow?.redirectUri === undefined ? undefined : new URL(flow.redirectUri).origin
  return HttpServerResponse.text(renderPage(context, step), {
    status,
    contentType: "text/html; charset=utf-8",
    headers: {
      ...PRIVATE,
      ...headers,
      "content-security-policy": cspOf(nonce, origin),
      ...(flow === undefined ? {} : { "set-cookie": writeFlow(exchange, flow) })
    }
  })
}

const writeFlow = (exchange: Exchange, flow: Flow): string =>
  flowCookie(exchange.keys.seal({ ...flow, at: exchange.now }), cameOverTls(exchange.request))

const seeOther = (exchange: Exchange, location: string, flow?: Flow): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.empty({
    status: 303,
    headers: { ...PRIVATE, location, ...(flow === undefined ? {} : { "set-cookie": writeFlow(exchange, flow) }) }
  })

const problem = (
  exchange: Exchange,
  target: Target | undefined,
  status: number,
  key: string,
  options: { readonly values?: Record<string, number>; readonly retry?: boolean; readonly flow?: Flow } = {}
) => {
  const headers: Record<string, string> =
    status === 503
      ? { "retry-after": String(UNAVAILABLE_RETRY_SECONDS) }
      : status === 429
        ? { "retry-after": String(options.values?.seconds ?? 60) }
        : {}
  const step: Step = { kind: "problem", notice: { key, values: options.values }, retry: options.retry === true }
  return page(exchange, target, options.flow, status, step, headers)
}

/** The target and the caller's redirect, checked: a problem page, or what the flow is for. */
const admit = (exchange: Exchange, offerId: string | undefined) => {
  const target = targetOf(
    exchange.snapshot,
    offerId,
    offerId === undefined ? (exchange.query.get("targetGroupId") ?? undefined) : undefined
  )
  if (target === undefined) return { refused: problem(exchange, undefined, 404, "notFound") }
  const redirectUri = exchange.query.get("redirect_uri") ?? undefined
  const state = exchange.query.get("state") ?? undefined
  if (
    (redirectUri !== undefined &&
      (redirectUri.length > MAX_REDIRECT_URI || redirectRefusal(redirectUri, target.policy) !== undefined)) ||
    (state !== undefined && state.length > MAX_STATE)
  ) {
    return { refused: problem(exchange, target, 400, "redirectRefused") }
  }
  const cookie = exchange.keys.open(exchange.request.cookies[FLOW_COOKIE], exchange.now)
  const same =
    cookie !== undefined &&
    cookie.offerId === target.offerId &&
    cookie.targetGroupId === target.targetGroupId &&
    cookie.redirectUri === redirectUri &&
    cookie.state === state
  return { target, redirectUri, state, flow: same ? cookie : undefined }
}

/** Why an address was refused: an offer's own reason (not active), else the first target group's. */
const refusedFor = (answer: ValidationResult | OfferValidationResult): ReasonCode | undefined =>
  "results" in answer && answer.reasonCode !== "OFFER_NOT_ACTIVE"
    ? (answer.results.find((result) => result.reasonCode !== undefined)?.reasonCode ?? answer.reasonCode)
    : answer.reasonCode

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
        const location = successTarget(flow, view)
        if (location !== undefined) return seeOther(exchange, location, kept)
        return page(exchange, target, kept, 200, { kind: "done" })
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

const entry = (offerId: string | undefined) =>
  Effect.gen(function* () {
    const exchange = yield* exchangeOf
    const admitted = admit(exchange, offerId)
    if ("refused" in admitted) return admitted.refused
    const { target, flow } = admitted
    if (flow !== undefined) return yield* show(exchange, target, flow)
    const fresh: Flow = {
      nonce: newNonce(),
      offerId: target.offerId,
      targetGroupId: target.targetGroupId,
      redirectUri: admitted.redirectUri,
      state: admitted.state,
      locale: exchange.query.get("locale") ?? undefined,
      at: exchange.now
    }
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

const submit = (decide: RateLimitDecider["decide"], offerId: string | undefined) =>
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
            redirectUrl: method === "link" ? linkRedirect(flow) : undefined
          })
        )
        if (started._tag === "Failure") return refusal(exchange, target, flow, started.failure)
        const outcome = started.success
        if ("ineligible" in outcome) {
          return back({
            ...flow,
            notice: {
              key: "ineligible",
              values: { reason: reasonWord(refusedFor(outcome.ineligible)) },
              field: "email"
            }
          })
        }
        return back({ ...flow, verificationId: outcome.started.id, notice: undefined })
      }
      case "confirm": {
        if (flow.verificationId === undefined) return back(flow)
        const code = (form.get("code") ?? "").replace(/\s+/g, "")
        if (code === "") return back({ ...flow, notice: { key: "codeRequired", field: "code" } })
        const confirmed = yield* Effect.result(service.confirm(target.team, flow.verificationId, code))
        if (confirmed._tag === "Failure") return refusal(exchange, target, flow, confirmed.failure)
        const location = successTarget(flow, confirmed.success)
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

const notFound = Effect.suspend(() => answerWith(notFoundProblem("The verification page has no such file.")))

const asset = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { file } = yield* HttpRouter.params
  const { css, js } = hostedAssets()
  const found = file === "verify.css" ? css : file === "verify.js" ? js : undefined
  if (found === undefined) return yield* notFound
  return HttpServerResponse.setHeaders(assetResponse(found, request.headers), { "x-content-type-options": "nosniff" })
})

const logoAssets = new WeakMap<PageLogo, StaticAsset>()

/** A logo by its content hash; an SVG cannot run script (a sandboxing CSP, and `<img>` never runs it anyway). */
const logo = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { file } = yield* HttpRouter.params
  const snapshot = (yield* Snapshot).current()
  const found = [...(snapshot.config.pageLogos?.values() ?? [])].find((each) => logoHash(each) === file)
  if (found === undefined) return yield* notFound
  let made = logoAssets.get(found)
  if (made === undefined) {
    made = makeAsset(found.bytes, {
      contentType: found.contentType,
      cacheControl: "public, max-age=31536000, immutable"
    })
    logoAssets.set(found, made)
  }
  return HttpServerResponse.setHeaders(assetResponse(made, request.headers), {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"
  })
})

const offerParam = Effect.map(HttpRouter.params, (params) => params.offerId)

export const HostedRoutes = Layer.mergeAll(
  HttpRouter.add("GET", HOSTED_PATH, entry(undefined)),
  HttpRouter.add("GET", HOSTED_OFFER_PATH, Effect.flatMap(offerParam, entry)),
  Layer.unwrap(
    Effect.map(makeRateLimitDecider, ({ decide }) =>
      Layer.mergeAll(
        HttpRouter.add("POST", HOSTED_PATH, submit(decide, undefined)),
        HttpRouter.add(
          "POST",
          HOSTED_OFFER_PATH,
          Effect.flatMap(offerParam, (id) => submit(decide, id))
        )
      )
    )
  ),
  HttpRouter.add("GET", HOSTED_ASSET_PATH, asset),
  HttpRouter.add("GET", HOSTED_LOGO_PATH, logo)
)
