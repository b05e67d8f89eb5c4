/**
 * The OpenID Connect provider end to end: the real daemon on loopback,
 * `openid-client` as the relying party (discovery, PKCE, state and nonce),
 * and the real hosted flow as the login step, driven over HTTP with the
 * code read from a message sent over a loopback SMTP server. What a shop
 * relies on: the code flow completes, the ID token validates against the
 * published JWKS, the claims say what the offer allows and no more, and
 * every misuse (state or nonce mismatch, a replayed code, a wrong secret,
 * an unregistered redirect URI, an offer not allowed, no PKCE) is refused.
 */
import { execFileSync } from "node:child_process"
import { unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose"
import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Daemon, startDaemon, waitForLine } from "./daemon.ts"
import { headingOf } from "./hostedFlowClient.ts"
import {
  authorizationRequest,
  BACKEND_CALLBACK,
  BACKEND_SECRET,
  FlowClient,
  follow,
  oidcConfig,
  relyingParty,
  signIn,
  WEB_CALLBACK
} from "./oidcRelyingParty.ts"
import { linkOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

let daemon: Daemon
let smtp: TestSmtp

beforeAll(async () => {
  const certificate = await makeCertificate()
  smtp = await startSmtp(certificate)
  daemon = await startDaemon(oidcConfig(smtp, certificate.cert))
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await smtp?.close()
})

/** One sign-in of `email` at `clientId` for `offer`: the callback address and the checks to redeem it with. */
const signedIn = async (
  config: client.Configuration,
  email: string,
  parameters: Record<string, string> & { redirect_uri: string },
  browser = new FlowClient(daemon.url)
) => {
  const request = await authorizationRequest(config, parameters)
  const callback = await signIn(smtp, browser, request.url, email)
  return { callback, checks: request.checks }
}

const jwksOf = async () => (await (await fetch(`${daemon.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet

/** Why the relying party refused: the OAuth error the server answered, else what `openid-client` found wrong. */
const refusal = async (exchange: Promise<unknown>): Promise<string> => {
  try {
    await exchange
  } catch (error) {
    const { error: code, cause } = error as { error?: string; cause?: unknown }
    if (code !== undefined) return code
    if (Array.isArray(cause)) return String(cause[0]?.parameters?.error)
    return String((cause as Error | undefined)?.message ?? (error as Error).message)
  }
  throw new Error("the relying party accepted it")
}

describe("the OpenID Connect provider", () => {
  it("discovery names the endpoints under /oidc/, the existing JWKS and what is supported, and nothing more", async () => {
    const response = await fetch(`${daemon.url}/.well-known/openid-configuration`)
    expect(response.status).toBe(200)
    const discovery = (await response.json()) as Record<string, unknown>
    expect(discovery).toMatchObject({
      issuer: daemon.url,
      authorization_endpoint: `${daemon.url}/oidc/auth`,
      token_endpoint: `${daemon.url}/oidc/token`,
      userinfo_endpoint: `${daemon.url}/oidc/userinfo`,
      jwks_uri: `${daemon.url}/.well-known/jwks.json`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
      scopes_supported: expect.arrayContaining(["openid", "email", "campusgate_eligibility"])
    })
    // The algorithm of the deployment's signing key (verification.signing.algorithm).
    expect(discovery.id_token_signing_alg_values_supported).toEqual([expect.stringMatching(/^(EdDSA|ES256)$/)])
    expect(discovery.registration_endpoint).toBeUndefined()
    expect(discovery.device_authorization_endpoint).toBeUndefined()
    expect(discovery.end_session_endpoint).toBeUndefined()
    expect(discovery.grant_types_supported).toEqual(["authorization_code"])
  })

  it("code flow with PKCE: the ID token validates against the JWKS, userinfo agrees, no address unless the offer releases it", async () => {
    const config = await relyingParty(daemon.url, "web")
    const { callback, checks } = await signedIn(config, "ada@ox.ac.uk", {
      redirect_uri: WEB_CALLBACK,
      offer: "shop"
    })
    expect(`${callback.origin}${callback.pathname}`).toBe(WEB_CALLBACK)
    const tokens = await client.authorizationCodeGrant(config, callback, checks)
    // Signed with the deployment's signing key, published at the existing JWKS.
    const jwks = (await (await fetch(`${daemon.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
    const header = decodeProtectedHeader(tokens.id_token!)
    expect(jwks.keys.map((key: { kid: string }) => key.kid)).toContain(header.kid)
    expect(["EdDSA", "ES256"]).toContain(header.alg)
    const { payload } = await jwtVerify(
      tokens.id_token!,
      createRemoteJWKSet(new URL(`${daemon.url}/.well-known/jwks.json`)),
      {
        issuer: daemon.url,
        audience: "web"
      }
    )
    expect(payload.nonce).toBe(checks.expectedNonce)
    expect(payload.sub).toMatch(/^[\w-]{20,}$/)
    expect(JSON.stringify(payload)).not.toContain("ada")
    expect(payload.email).toBeUndefined()
    expect(payload.campusgate_eligibility).toMatchObject({
      offer: { id: "shop", name: "shop" },
      targetGroups: [{ id: "universities" }],
      institution: { country: "GB", type: "university" },
      verifiedAt: expect.any(String),
      expiresAt: expect.any(String)
    })
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, String(payload.sub))
    expect(userinfo).toEqual({ sub: payload.sub, campusgate_eligibility: payload.campusgate_eligibility })
  })

  it("the address, verified, when the client asks for email and the offer releases it; the same person keeps their sub", async () => {
    const config = await relyingParty(daemon.url, "web")
    const browser = new FlowClient(daemon.url)
    const first = await signedIn(config, "grace@ox.ac.uk", { redirect_uri: WEB_CALLBACK, offer: "open" }, browser)
    const claims = (await client.authorizationCodeGrant(config, first.callback, first.checks)).claims()!
    expect(claims).toMatchObject({ email: "grace@ox.ac.uk", email_verified: true })
    // Without the email scope: no address, the same sub (per person and client, whatever the offer). The same
    // browser goes through the hosted flow again (signIn expects its form): a session never stands in for it.
    const second = await signedIn(
      config,
      "grace@ox.ac.uk",
      { redirect_uri: WEB_CALLBACK, offer: "shop", scope: "openid campusgate_eligibility" },
      browser
    )
    const again = (await client.authorizationCodeGrant(config, second.callback, second.checks)).claims()!
    expect(again.email).toBeUndefined()
    expect(again.sub).toBe(claims.sub)
  })

  it("an offer verified by link: the link opened anywhere, the sign-in finishes in the browser that began it", async () => {
    const config = await relyingParty(daemon.url, "linkapp")
    const request = await authorizationRequest(config, { redirect_uri: WEB_CALLBACK })
    const browser = new FlowClient(daemon.url)
    const form = await follow(browser, request.url.toString())
    const flowPage = new URL(browser.form().action, daemon.url).toString()
    const before = smtp.received.length
    const inbox = await browser.submit("start", { email: "margaret@ox.ac.uk" })
    expect(headingOf(inbox.body), form.body).toBe("Check your inbox")
    const mail = (await smtp.waitFor(before + 1)).slice(before).find((message) => message.to === "margaret@ox.ac.uk")!
    // Opened in the mail app: no cookie, no redirect (the sign-in is not its to finish).
    expect((await fetch(linkOf(mail), { redirect: "manual" })).status).toBe(200)
    const back = await follow(browser, flowPage)
    const callback = new URL(back.location!)
    expect(`${callback.origin}${callback.pathname}`).toBe(WEB_CALLBACK)
    const tokens = await client.authorizationCodeGrant(config, callback, request.checks)
    expect(tokens.claims()).toMatchObject({ aud: "linkapp", campusgate_eligibility: { offer: { id: "links" } } })
  })

  it("refuses a callback whose state or nonce is not the request's, and a code redeemed twice", async () => {
    const config = await relyingParty(daemon.url, "web")
    const { callback, checks } = await signedIn(config, "alan@ox.ac.uk", { redirect_uri: WEB_CALLBACK, offer: "shop" })
    expect(
      await refusal(client.authorizationCodeGrant(config, callback, { ...checks, expectedState: "another-state" }))
    ).toMatch(/"state"/)
    expect(
      await refusal(client.authorizationCodeGrant(config, callback, { ...checks, expectedNonce: "another-nonce" }))
    ).toMatch(/"nonce"/)
    // The code was redeemed (by the nonce check's exchange): a replay is invalid_grant.
    await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
      error: "invalid_grant"
    })
  })

  it("a confidential client: a wrong secret is refused, either listed secret is taken", async () => {
    const wrong = await relyingParty(daemon.url, "backend", "cgs_not-the-secret")
    const { callback, checks } = await signedIn(wrong, "edsger@ox.ac.uk", { redirect_uri: BACKEND_CALLBACK })
    expect(await refusal(client.authorizationCodeGrant(wrong, callback, checks))).toBe("invalid_client")
    const right = await relyingParty(daemon.url, "backend", BACKEND_SECRET)
    const tokens = await client.authorizationCodeGrant(right, callback, checks)
    expect(tokens.claims()).toMatchObject({ aud: "backend", campusgate_eligibility: { offer: { id: "shop" } } })
  })

  it("refuses an unregistered redirect URI (no redirect), an offer the client may not ask for, and a request without PKCE", async () => {
    const config = await relyingParty(daemon.url, "web")
    const unknown = await authorizationRequest(config, { redirect_uri: "https://evil.example/cb", offer: "shop" })
    const refused = await new FlowClient(daemon.url).get(unknown.url.toString())
    expect(refused.status).toBe(400)
    expect(refused.location).toBeUndefined()
    expect(refused.body).toContain("redirect_uri")

    const notAllowed = await authorizationRequest(config, { redirect_uri: WEB_CALLBACK, offer: "links" })
    const answer = await follow(new FlowClient(daemon.url), notAllowed.url.toString())
    const error = new URL(answer.location!)
    expect(`${error.origin}${error.pathname}`).toBe(WEB_CALLBACK)
    expect(error.searchParams.get("error")).toBe("invalid_request")
    expect(error.searchParams.get("error_description")).toContain("offer")
    expect(error.searchParams.get("state")).toBe(notAllowed.checks.expectedState)

    // Two offers allowed and none named: the client must say which.
    const unnamed = await authorizationRequest(config, { redirect_uri: WEB_CALLBACK })
    const which = new URL((await follow(new FlowClient(daemon.url), unnamed.url.toString())).location!)
    expect(which.searchParams.get("error")).toBe("invalid_request")

    const withoutPkce = new URL(notAllowed.url)
    withoutPkce.searchParams.set("offer", "shop")
    withoutPkce.searchParams.delete("code_challenge")
    withoutPkce.searchParams.delete("code_challenge_method")
    const noPkce = new URL((await follow(new FlowClient(daemon.url), withoutPkce.toString())).location!)
    expect(noPkce.searchParams.get("error")).toBe("invalid_request")
    expect(noPkce.searchParams.get("error_description")).toMatch(/PKCE/)
  })

  it("after the signing key rotates, the next ID token is signed with the new key, published in the JWKS", async () => {
    const config = await relyingParty(daemon.url, "web")
    const idTokenKid = async (email: string) => {
      const { callback, checks } = await signedIn(config, email, { redirect_uri: WEB_CALLBACK, offer: "shop" })
      const tokens = await client.authorizationCodeGrant(config, callback, checks)
      await jwtVerify(tokens.id_token!, createLocalJWKSet(await jwksOf()), { issuer: daemon.url, audience: "web" })
      return decodeProtectedHeader(tokens.id_token!).kid
    }
    const before = await idTokenKid("barbara@ox.ac.uk")
    const rotated = JSON.parse(
      execFileSync(process.execPath, [
        fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url)),
        ...["keys", "rotate-signing", "--config", daemon.configDir, "--data", daemon.dataDir]
      ]).toString()
    ) as { signingKey: string }
    expect(rotated.signingKey).not.toBe(before)
    expect(await idTokenKid("barbara@ox.ac.uk")).toBe(rotated.signingKey)
  })

  it("the hosted flow refuses an interaction that is not one, or that comes with a redirect_uri", async () => {
    const browser = new FlowClient(daemon.url)
    expect((await browser.get("/verify/shop?interaction=not%20a%20uid")).status).toBe(400)
    const both = `/verify/shop?interaction=abc&redirect_uri=${encodeURIComponent("https://shop.example/x")}`
    expect((await browser.get(both)).status).toBe(400)
  })

  it("logs and counts its requests under route templates, never a code or a uid", async () => {
    const logged = daemon.lines.filter((line) => String(line.path ?? "").startsWith("/oidc/"))
    expect(new Set(logged.map((line) => line.path))).toEqual(
      new Set([
        "/oidc/auth",
        "/oidc/auth/{uid}",
        "/oidc/interaction/{uid}",
        "/oidc/interaction/{uid}/finish",
        "/oidc/token",
        "/oidc/userinfo"
      ])
    )
    expect(logged.every((line) => typeof line.requestId === "string")).toBe(true)
  })

  it("a client file with a mistake is rejected with its file and field; the clients in force keep working", async () => {
    const from = daemon.lines.length
    const file = join(daemon.configDir, "clients", "broken.yaml")
    writeFileSync(
      file,
      "id: broken\nname: Broken\ntype: public\nredirectUris: [https://x.example/cb]\nallowedOffers: [nope]\n"
    )
    const rejected = await waitForLine(
      daemon,
      (line) => daemon.lines.indexOf(line) >= from && String(line.msg).startsWith("config change rejected")
    )
    expect(JSON.stringify(rejected.problems)).toMatch(/broken\.yaml.*allowedOffers\[0\].*no offer \\"nope\\"/)
    const config = await relyingParty(daemon.url, "web")
    const { callback, checks } = await signedIn(config, "rosalind@ox.ac.uk", {
      redirect_uri: WEB_CALLBACK,
      offer: "shop"
    })
    expect((await client.authorizationCodeGrant(config, callback, checks)).claims()?.aud).toBe("web")
    unlinkSync(file)
  })

  it("an interaction's finish is refused without the flow's proof", async () => {
    const config = await relyingParty(daemon.url, "web")
    const request = await authorizationRequest(config, { redirect_uri: WEB_CALLBACK, offer: "shop" })
    const browser = new FlowClient(daemon.url)
    const first = await browser.get(request.url.toString())
    const interaction = first.location!
    const forged = await browser.get(`${interaction}/finish?verification=ver_aaaaaaaaaaaaaaaaaaaaaaaaaa&proof=x`)
    expect(forged.status).toBe(400)
    // Another browser (no interaction cookie), and a uid that is not one: a page, never a failure.
    expect((await new FlowClient(daemon.url).get(interaction)).status).toBe(400)
    expect((await browser.get("/oidc/interaction/%E0%A4%A/finish")).status).toBe(400)
  })
})
