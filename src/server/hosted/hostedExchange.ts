/**
 * What every request of the hosted flow shares: the request with its
 * snapshot, flow keys and service (`Exchange`); the target it is for and the
 * caller's redirect and opener, checked (`admit`); where a success goes (a
 * redirect, or for a popup the result handed to its opener); the page's
 * language and presentation; and the three kinds of answer: a page (with
 * the strict CSP and the flow's cookie written back), a 303 back to the
 * flow or on to the caller, and a problem page.
 */
import { randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import type { PageLogo } from "../../config/pageLogos.ts"
import { DEFAULT_TEAM } from "../../config/settingsFile.ts"
import type { HostedFlowStep } from "../../domain/OfferUsage.ts"
import type { VerificationView } from "../../domain/Verification.ts"
import type { ResolvedPolicy } from "../../domain/VerificationPolicy.ts"
import { HostedFunnel } from "../../stats/HostedFunnel.ts"
import { Verifications, type VerificationsService } from "../../verification/Verifications.ts"
import { policyOf } from "../../verification/verificationPolicy.ts"
import { redirectRefusal } from "../../verification/verificationRules.ts"
import { cameOverTls } from "../credentials.ts"
import { contentHash } from "../staticAsset.ts"
import { redirectTarget } from "../verificationRoutes.ts"
import { VERIFIED_MESSAGE_TYPE } from "./dropIn.ts"
import { type Flow, type FlowKeys, flowCookie, flowCookieName, flowKeys } from "./flowCookie.ts"
import { type Handoff, type PageContext, type Presentation, renderPage, type Step } from "./hostedPages.ts"
import { chooseLocale, pageLocales, wordsOf } from "./hostedWords.ts"

/** The deployment's verification secret, which signs flows (every daemon sharing a store has the same). */
export class HostedFlowSecret extends Context.Service<HostedFlowSecret, string>()(
  "campusgate/server/HostedFlowSecret"
) {}

const DEFAULT_ACCENT = "#1d4ed8"
const MAX_REDIRECT_URI = 2048
const MAX_STATE = 512
export const UNAVAILABLE_RETRY_SECONDS = 30

/** What the flow is for, and as whom it acts. */
export interface Target {
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
export const logoHash = (logo: PageLogo): string => {
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

/** As after a link: the caller's `redirect_uri` (with its `state`) and the outcome. */
const returnTarget = (flow: Flow, view: VerificationView): string | undefined =>
  redirectTarget({ outcome: "verified", locale: view.locale, verification: view, redirectUrl: linkRedirect(flow) })

/**
 * Where the browser goes on success: the OpenID Connect interaction's finish
 * when the flow is one's login step; a popup's flow stays on its done page
 * (which hands the result to its opener); else the caller's return
 * (`returnTarget`).
 */
export const successTarget = (keys: FlowKeys, flow: Flow, view: VerificationView): string | undefined =>
  flow.interaction !== undefined
    ? interactionFinish(keys, flow.interaction, view.id, flow.sealedAddress)
    : flow.opener === undefined
      ? returnTarget(flow, view)
      : undefined
/** The OpenID Connect interaction's finish (`server/oidc.ts`), with the proof that binds it to this flow's verification. */
const interactionFinish = (keys: FlowKeys, uid: string, verificationId: string, sealedAddress: string | undefined) => {
  const query = new URLSearchParams({ verification: verificationId })
  if (sealedAddress !== undefined) query.set("address", sealedAddress)
  query.set("proof", keys.interactionProof(uid, verificationId, sealedAddress))
  return `/oidc/interaction/${encodeURIComponent(uid)}/finish?${query}`
}

/** An OpenID Connect interaction's uid as `oidc-provider` makes them (and nothing longer reaches the cookie). */
const INTERACTION_UID = /^[A-Za-z0-9_-]{1,64}$/

/** What a popup's done page hands its opener, with the return link a page without script offers instead. */
export const handoffOf = (flow: Flow, view: VerificationView): Handoff | undefined => {
  if (flow.opener === undefined || view.eligibility === undefined) return undefined
  const returnUrl = returnTarget(flow, view)
  return {
    opener: flow.opener,
    message: {
      type: VERIFIED_MESSAGE_TYPE,
      state: flow.state ?? null,
      token: view.eligibility.token,
      verificationId: view.id,
      expiresAt: view.eligibility.expiresAt
    },
    returnUrl,
    site: returnUrl === undefined ? undefined : new URL(returnUrl).host
  }
}

/** The caller's `redirect_uri` with its `state`: the redirect a link carries (the link page adds the outcome). */
export const linkRedirect = (flow: Flow): string | undefined => {
  if (flow.redirectUri === undefined) return undefined
  const url = new URL(flow.redirectUri)
  if (flow.state !== undefined) url.searchParams.set("state", flow.state)
  return url.toString()
}

/** Everything one request of the flow needs. */
export interface Exchange {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly snapshot: ConfigSnapshot
  readonly keys: FlowKeys
  readonly verifications: VerificationsService
  /** Counts a step of the flow in its offer's funnel (`HostedFunnel`). */
  readonly count: (target: Target, step: HostedFlowStep) => void
  readonly query: URLSearchParams
  /** The flow's address: path and query as requested. */
  readonly action: string
  readonly now: number
}

export const exchangeOf = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, "http://campusgate.invalid")
  const funnel = yield* HostedFunnel
  return {
    request,
    snapshot: (yield* Snapshot).current(),
    keys: flowKeys(yield* HostedFlowSecret),
    verifications: yield* Verifications,
    count: (target, step) => funnel.record(target.offerId, step),
    query: url.searchParams,
    action: `${url.pathname}${url.search}`,
    now: Date.now()
  } satisfies Exchange
})

/** The page's language and words for this request. */
export const languageOf = (exchange: Exchange, target: Target | undefined, flow: Flow | undefined) => {
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
export const page = (
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
  flowCookie(flow, exchange.keys.seal({ ...flow, at: exchange.now }), cameOverTls(exchange.request))

export const seeOther = (exchange: Exchange, location: string, flow?: Flow): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.empty({
    status: 303,
    headers: { ...PRIVATE, location, ...(flow === undefined ? {} : { "set-cookie": writeFlow(exchange, flow) }) }
  })

export const problem = (
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
export const admit = (exchange: Exchange, offerId: string | undefined) => {
  const target = targetOf(
    exchange.snapshot,
    offerId,
    offerId === undefined ? (exchange.query.get("targetGroupId") ?? undefined) : undefined
  )
  if (target === undefined) return { refused: problem(exchange, undefined, 404, "notFound") }
  const redirectUri = exchange.query.get("redirect_uri") ?? undefined
  const state = exchange.query.get("state") ?? undefined
  const opener = exchange.query.get("opener") ?? undefined
  const interaction = exchange.query.get("interaction") ?? undefined
  if (
    (interaction !== undefined &&
      (!INTERACTION_UID.test(interaction) || redirectUri !== undefined || opener !== undefined)) ||
    (redirectUri !== undefined &&
      (redirectUri.length > MAX_REDIRECT_URI || redirectRefusal(redirectUri, target.policy) !== undefined)) ||
    (opener !== undefined &&
      (opener.length > MAX_REDIRECT_URI ||
        redirectRefusal(opener, target.policy, { exactOrigin: true }) !== undefined)) ||
    (state !== undefined && state.length > MAX_STATE)
  ) {
    return { refused: problem(exchange, target, 400, "redirectRefused") }
  }
  const cookie = exchange.keys.open(
    exchange.request.cookies[
      flowCookieName({
        offerId: target.offerId,
        targetGroupId: target.targetGroupId,
        redirectUri,
        state,
        opener,
        interaction
      })
    ],
    exchange.now
  )
  const same =
    cookie !== undefined &&
    cookie.offerId === target.offerId &&
    cookie.targetGroupId === target.targetGroupId &&
    cookie.redirectUri === redirectUri &&
    cookie.state === state &&
    cookie.opener === opener &&
    cookie.interaction === interaction
  return { target, redirectUri, state, opener, interaction, flow: same ? cookie : undefined }
}
