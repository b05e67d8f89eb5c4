/**
 * What the OpenID Connect tests share: the hosted flow's config with two
 * clients (a public single-page app and a confidential backend) and an offer
 * that releases the address; a relying party made with `openid-client`
 * (discovery, PKCE, state, nonce); and a browser (`FlowClient`'s cookie jar)
 * that follows the provider's redirects through the hosted flow — the
 * address typed, the code read from the message — until the browser is sent
 * back to the client's redirect URI.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as client from "openid-client"
import { expect } from "vitest"
import { hashClientSecret } from "../../src/oidc/clientSecrets.ts"
import { FlowClient, headingOf, hostedConfig, SHOP } from "./hostedFlowClient.ts"
import { codeOf, type TestSmtp } from "./smtpServer.ts"

export const WEB_CALLBACK = `${SHOP}/oidc/callback`
export const BACKEND_CALLBACK = `${SHOP}/backend/callback`
export const BACKEND_SECRET = "cgs_the-backend-secret-of-the-tests-0123456789abc"

/**
 * The hosted flow's config with the clients `web` (public), `linkapp` (public, the offer whose method is a
 * link) and `backend` (confidential), and the offer `open` (releases the address).
 */
export const oidcConfig = (smtp: TestSmtp, smtpCa: string) => {
  const dirs = hostedConfig(smtp, smtpCa)
  writeFileSync(
    join(dirs.configDir, "offers", "open.yaml"),
    "id: open\nteam: acme\nname: Open offer\ntargetGroups: [universities]\nstatus: active\nverification:\n  releaseEmail: true\n"
  )
  mkdirSync(join(dirs.configDir, "clients"), { recursive: true })
  writeFileSync(
    join(dirs.configDir, "clients", "web.yaml"),
    `id: web\nname: The shop's app\ntype: public\nredirectUris: ["${WEB_CALLBACK}"]\nallowedOffers: [shop, open]\n`
  )
  writeFileSync(
    join(dirs.configDir, "clients", "linkapp.yaml"),
    `id: linkapp\nname: An app whose offer sends links\ntype: public\nredirectUris: ["${WEB_CALLBACK}"]\nallowedOffers: [links]\n`
  )
  writeFileSync(
    join(dirs.configDir, "clients", "backend.yaml"),
    `id: backend\nname: The shop's backend\ntype: confidential\nredirectUris: ["${BACKEND_CALLBACK}"]\nallowedOffers: [shop]\nsecretHashes:\n  - ${hashClientSecret("cgs_an-old-secret")}\n  - ${hashClientSecret(BACKEND_SECRET)}\n`
  )
  return dirs
}

/** The relying party `clientId` of the daemon at `issuer` (plain http on loopback). */
export const relyingParty = (issuer: string, clientId: string, secret?: string) =>
  client.discovery(
    new URL(issuer),
    clientId,
    undefined,
    secret === undefined ? client.None() : client.ClientSecretBasic(secret),
    { execute: [client.allowInsecureRequests] }
  )

/** An authorization request's address and the checks its answer is held to. */
export const authorizationRequest = async (
  config: client.Configuration,
  parameters: Record<string, string> & { redirect_uri: string }
) => {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    scope: "openid email campusgate_eligibility",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...parameters
  })
  return { url, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce } }
}

/** Follows redirects from `start` (a daemon's address) while they stay on a daemon; answers the last answer. */
export const follow = async (browser: FlowClient, start: string) => {
  let answer = await browser.get(start)
  for (let hops = 0; hops < 10 && answer.status >= 300 && answer.status < 400; hops++) {
    const next = new URL(answer.location!, browser.base)
    if (next.origin === SHOP) return { ...answer, location: next.toString() }
    answer = await browser.get(next.toString())
  }
  return answer
}

/**
 * A person signing in at the client: from the authorization request through
 * the hosted flow (address, the code from the message) to the client's
 * redirect URI; answers that address (with `code`, `state`, `iss`).
 * `finishOn`: a browser on another daemon (the same cookies) for every step
 * after the first.
 */
export const signIn = async (
  smtp: TestSmtp,
  browser: FlowClient,
  authorizationUrl: URL,
  email: string,
  finishOn?: FlowClient
): Promise<URL> => {
  const form = await follow(browser, authorizationUrl.toString())
  expect(form.status, form.body).toBe(200)
  expect(headingOf(form.body)).toBeDefined()
  const next = finishOn ?? browser
  if (finishOn !== undefined) for (const [name, value] of browser.cookies) finishOn.cookies.set(name, value)
  next.lastForm = form
  const before = smtp.received.length
  const codePage = await next.submit("start", { email })
  expect(codePage.status, codePage.body).toBe(200)
  const mail = (await smtp.waitFor(before + 1)).slice(before).find((message) => message.to === email)!
  const confirmed = await next.post("confirm", { code: codeOf(mail) })
  expect(confirmed.status, confirmed.body).toBe(303)
  const back = await follow(next, confirmed.location!)
  expect(back.status, back.body).toBeGreaterThanOrEqual(300)
  return new URL(back.location!)
}

export { FlowClient }
