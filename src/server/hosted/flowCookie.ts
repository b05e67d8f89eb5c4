/**
 * The hosted flow's state between requests, held by the browser: a cookie
 * signed with a key derived from the deployment's verification secret
 * (which every daemon sharing a store shares), so any daemon can continue a
 * flow another one began, and nothing is kept in a process's memory. It
 * names the target (offer or target group), the caller's `redirect_uri`,
 * `state`, opener origin (a popup's) and asked locale, the verification
 * once started (the record itself, in the store, holds the rest), and a
 * one-shot notice for the next page (post-redirect-get). A flow's CSRF token is an HMAC of its nonce:
 * forms carry it, and a POST is taken only when it matches the cookie's,
 * compared in constant time. The cookie is `HttpOnly`, `SameSite=Strict`,
 * `Path=/verify`, and `Secure` when the request came over TLS. Its name
 * carries a digest of what the flow is for (target, `redirect_uri`,
 * `state`, opener, interaction), so two flows open in one browser at once
 * keep a cookie each. A popup's flow names its opener (`verify.js`). A
 * flow that is the login step of an OpenID Connect authorization names
 * its interaction and keeps the address it started with, sealed by
 * `Verifications`; its success goes to the interaction's finish with
 * `interactionProof`, an HMAC over the interaction, the verification and
 * the sealed address.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** What every flow's cookie name begins with. */
export const FLOW_COOKIE_PREFIX = "cg_verify_"
/** How long a flow lives without a request (the cookie's `Max-Age`). */
export const FLOW_SECONDS = 3600

/** A notice for the next page: a word key and its values. */
export interface Notice {
  readonly key: string
  readonly values?: Readonly<Record<string, string | number>> | undefined
  /** Which form field it concerns (focused and marked invalid). */
  readonly field?: "email" | "code" | undefined
}

export interface Flow {
  /** Random per flow: what the CSRF token is made of. */
  readonly nonce: string
  readonly offerId?: string | undefined
  readonly targetGroupId?: string | undefined
  readonly redirectUri?: string | undefined
  readonly state?: string | undefined
  /** The origin of the window that opened the flow as a popup, which the result is posted to. */
  readonly opener?: string | undefined
  readonly locale?: string | undefined
  readonly verificationId?: string | undefined
  /** The OpenID Connect authorization this flow is the login step of (its interaction's uid). */
  readonly interaction?: string | undefined
  /** With `interaction`: the address started, sealed by `Verifications` (opaque here), for the `email` claim. */
  readonly sealedAddress?: string | undefined
  readonly notice?: Notice | undefined
  /** When the cookie was last written (epoch ms). */
  readonly at: number
}

export interface FlowKeys {
  seal(flow: Flow): string
  open(cookie: string | undefined, now: number): Flow | undefined
  csrfToken(flow: Flow): string
  csrfMatches(flow: Flow, presented: string | undefined): boolean
  /**
   * What binds an OpenID Connect interaction to the verification this flow
   * verified (and the sealed address it started with): the proof the
   * interaction's finish checks before it trusts the three.
   */
  interactionProof(uid: string, verificationId: string, sealedAddress: string | undefined): string
}

const mac = (key: Buffer, text: string): Buffer => createHmac("sha256", key).update(text).digest()

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b)

/** The keys of flows signed under the deployment's verification secret. */
export const flowKeys = (verificationSecret: string): FlowKeys => {
  const signing = mac(Buffer.from(verificationSecret), "campusgate hosted flow cookie v1")
  const csrf = mac(Buffer.from(verificationSecret), "campusgate hosted flow csrf v1")
  const interaction = mac(Buffer.from(verificationSecret), "campusgate hosted flow interaction v1")
  return {
    seal: (flow) => {
      const payload = Buffer.from(JSON.stringify(flow)).toString("base64url")
      return `${payload}.${mac(signing, payload).toString("base64url")}`
    },
    open: (cookie, now) => {
      if (cookie === undefined) return undefined
      const dot = cookie.indexOf(".")
      if (dot < 0) return undefined
      const payload = cookie.slice(0, dot)
      if (!sameBytes(mac(signing, payload), Buffer.from(cookie.slice(dot + 1), "base64url"))) return undefined
      try {
        const flow = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Flow
        return typeof flow.nonce === "string" && typeof flow.at === "number" && now - flow.at <= FLOW_SECONDS * 1000
          ? flow
          : undefined
      } catch {
        return undefined
      }
    },
    csrfToken: (flow) => mac(csrf, flow.nonce).toString("base64url"),
    csrfMatches: (flow, presented) =>
      presented !== undefined && sameBytes(mac(csrf, flow.nonce), Buffer.from(presented, "base64url")),
    interactionProof: (uid, verificationId, sealedAddress) =>
      mac(interaction, `${uid}\0${verificationId}\0${sealedAddress ?? ""}`).toString("base64url")
  }
}

export const newNonce = (): string => randomBytes(16).toString("base64url")

/** What a flow is for: the members a flow's cookie is named by. */
export type FlowFor = Pick<Flow, "offerId" | "targetGroupId" | "redirectUri" | "state" | "opener" | "interaction">

/** The name of the cookie of a flow for `target`. */
export const flowCookieName = (target: FlowFor): string =>
  `${FLOW_COOKIE_PREFIX}${createHash("sha256")
    .update(
      JSON.stringify([
        target.offerId ?? "",
        target.targetGroupId ?? "",
        target.redirectUri ?? "",
        target.state ?? "",
        // A popup's flow names its opener and each OpenID Connect authorization is its own flow; the names of
        // other flows' cookies stay as they were.
        ...(target.opener === undefined ? [] : ["opener", target.opener]),
        ...(target.interaction === undefined ? [] : ["interaction", target.interaction])
      ])
    )
    .digest("base64url")
    .slice(0, 16)}`

/** The `Set-Cookie` value for a flow. */
export const flowCookie = (flow: FlowFor, sealed: string, secure: boolean): string =>
  `${flowCookieName(flow)}=${sealed}; Path=/verify; Max-Age=${FLOW_SECONDS}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`
