/**
 * Outbound HTTP on a client's behalf (job callbacks, webhooks), guarded
 * against server-side request forgery. A URL's host must resolve to public
 * addresses only (`addresses.ts`), checked when the URL is accepted and
 * again for every request; the request then connects to exactly the
 * addresses that were checked (the resolution is pinned, so a name that
 * re-resolves to an internal address between check and connect — DNS
 * rebinding — is never reached). Redirects are followed only within the
 * same origin (307/308, which keep method and body), at most three.
 *
 * What comes back is a reason class, never the remote status line or an
 * error's text: a caller must not learn more about a host than whether it
 * took the request.
 *
 * An operator can open private networks (`allowPrivateNetworks`, for
 * receivers inside the same cluster) or name hosts that may be reached
 * whatever they resolve to (`allowHosts`).
 */

import type { LookupAddress } from "node:dns"
import { lookup } from "node:dns/promises"
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { ipLiteralOf, isPublicAddress } from "./addresses.ts"

export interface OutboundPolicy {
  /** Reach loopback, private and link-local addresses too (default false). */
  readonly allowPrivateNetworks: boolean
  /** Host names or IP literals that may be reached whatever they resolve to. */
  readonly allowHosts: ReadonlyArray<string>
}

export const defaultOutboundPolicy: OutboundPolicy = { allowPrivateNetworks: false, allowHosts: [] }

/** Resolves a host name to its addresses (the system resolver by default; tests give their own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<LookupAddress>>

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true })

/** Why an outbound request was not delivered. */
export type FailureReason =
  /** The host is, or resolves to, an address requests may not reach. */
  | "blocked"
  /** The host name did not resolve. */
  | "dns"
  /** No connection, or it broke (refused, reset, TLS). */
  | "connect"
  | "timeout"
  /** The receiver answered, but not with a 2xx. */
  | "http"
  /** A redirect to another origin (not followed), or too many. */
  | "redirect"

export type PostOutcome = { readonly delivered: true } | { readonly delivered: false; readonly reason: FailureReason }

const MAX_REDIRECTS = 3

/** The addresses `url`'s host may be reached at under `policy`, or why it may not be. */
export const resolveTarget = async (
  url: URL,
  policy: OutboundPolicy,
  resolve: Resolver = systemResolver
): Promise<ReadonlyArray<LookupAddress> | "blocked" | "dns"> => {
  const literal = ipLiteralOf(url.hostname)
  const host = (literal ?? url.hostname).toLowerCase()
  const allowed =
    policy.allowPrivateNetworks ||
    policy.allowHosts.some((entry) => (ipLiteralOf(entry) ?? entry).toLowerCase() === host)
  if (literal !== undefined) {
    return allowed || isPublicAddress(literal)
      ? [{ address: literal, family: literal.includes(":") ? 6 : 4 }]
      : "blocked"
  }
  let addresses: ReadonlyArray<LookupAddress>
  try {
    addresses = await resolve(url.hostname)
  } catch {
    return "dns"
  }
  if (addresses.length === 0) return "dns"
  // One internal address among public ones is enough to refuse: the connection could go to any of them.
  return allowed || addresses.every((entry) => isPublicAddress(entry.address)) ? addresses : "blocked"
}

/**
 * Why `url` cannot be a callback target now, in words for a field error,
 * or undefined when it can (checked again at every request).
 */
export const refusedTarget = async (
  text: string,
  policy: OutboundPolicy,
  resolve: Resolver = systemResolver
): Promise<string | undefined> => {
  const url = URL.parse(text)
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return "expected an absolute http or https URL"
  }
  const target = await resolveTarget(url, policy, resolve)
  if (target === "dns") return `the host "${url.hostname}" does not resolve`
  if (target === "blocked") {
    return `the host "${url.hostname}" is a loopback, private, link-local or reserved address, which callbacks may not reach unless campusgate.yaml allows it (jobs.callbacks.allowHosts: ["${url.hostname}"], or jobs.callbacks.allowPrivateNetworks: true)`
  }
  return undefined
}

/** One POST to `url`, connecting only to `addresses`; answers the response (its body discarded). */
const postOnce = (
  url: URL,
  addresses: ReadonlyArray<LookupAddress>,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal
): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: false,
      signal,
      // The connection goes to the addresses checked, never to a second resolution's.
      lookup: (_hostname, options, callback) => {
        if (options.all === true) callback(null, [...addresses])
        else callback(null, addresses[0]!.address, addresses[0]!.family)
      }
    })
    request.on("response", (response) => {
      response.resume()
      resolve(response)
    })
    request.on("error", reject)
    request.end(body)
  })

/**
 * POSTs `body` to `url` under `policy`: delivered on a 2xx, else the reason
 * class. Times out with `signal`.
 */
export const postJson = async (
  url: string,
  body: string,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  signal: AbortSignal,
  resolve: Resolver = systemResolver
): Promise<PostOutcome> => {
  let target = new URL(url)
  for (let redirects = 0; ; redirects++) {
    const addresses = await resolveTarget(target, policy, resolve)
    if (typeof addresses === "string") return { delivered: false, reason: addresses }
    let response: IncomingMessage
    try {
      response = await postOnce(target, addresses, body, { "content-type": "application/json", ...headers }, signal)
    } catch {
      return { delivered: false, reason: signal.aborted ? "timeout" : "connect" }
    }
    const status = response.statusCode ?? 0
    if (status >= 200 && status < 300) return { delivered: true }
    const location = response.headers.location
    if ((status !== 307 && status !== 308) || location === undefined) return { delivered: false, reason: "http" }
    const next = URL.parse(location, target.href)
    if (next === null || next.origin !== target.origin || redirects === MAX_REDIRECTS) {
      return { delivered: false, reason: "redirect" }
    }
    target = next
  }
}
