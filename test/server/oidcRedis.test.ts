/**
 * The OpenID Connect provider across daemons: two daemons on one Redis (the
 * test server, a key prefix of the test's own) behind one public URL, as a
 * load balancer spreads a sign-in's requests. The authorization begins on
 * one, the hosted flow, its finish and the provider's resume run on the
 * other, the code is redeemed on the first and a replay on the second is
 * refused: interactions, grants, codes and their consumption live in Redis.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { createRemoteJWKSet, jwtVerify } from "jose"
import * as client from "openid-client"
import { afterAll, beforeAll, expect, it } from "vitest"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { deleteKeys, describeRedis, testRedisUrl } from "../redisTesting.ts"
import { type Daemon, freePort, setSettings, startDaemon } from "./daemon.ts"
import { authorizationRequest, FlowClient, oidcConfig, signIn, WEB_CALLBACK } from "./oidcRelyingParty.ts"
import { makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

/** The relying party of `daemon`'s endpoints, the deployment's issuer named in its discovery. */
const relyingPartyOn = async (daemon: Daemon) => {
  const metadata = (await (
    await fetch(`${daemon.url}/.well-known/openid-configuration`)
  ).json()) as client.ServerMetadata
  const config = new client.Configuration(metadata, "web", undefined, client.None())
  client.allowInsecureRequests(config)
  return config
}

describeRedis("the OpenID Connect provider on two daemons sharing Redis", () => {
  const prefix = `cgoidc:${randomBytes(6).toString("hex")}:`
  let smtp: TestSmtp
  const daemons: Array<Daemon> = []

  beforeAll(async () => {
    const certificate = await makeCertificate()
    smtp = await startSmtp(certificate)
    const dirs = oidcConfig(smtp, certificate.cert)
    const ports = [await freePort(), await freePort()]
    // One public URL for both, as behind a load balancer: the issuer every token names.
    setSettings(dirs, [
      [["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }],
      [["verification", "publicUrl"], `http://127.0.0.1:${ports[0]}`]
    ])
    // One first, so the secrets and the signing key it makes in Redis are the ones the second finds.
    for (const port of ports) daemons.push(await startDaemon(dirs, {}, { port }))
  }, 90_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
    await smtp?.close()
    await Effect.runPromise(
      deleteKeys(prefix).pipe(Effect.provide(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })))
    )
  })

  it("begun on one daemon, verified and resumed on the other, redeemed on the first; a replay on the second is refused", async () => {
    const [first, second] = daemons as [Daemon, Daemon]
    const onFirst = await relyingPartyOn(first)
    const onSecond = await relyingPartyOn(second)
    const request = await authorizationRequest(onFirst, { redirect_uri: WEB_CALLBACK, offer: "shop" })
    const callback = await signIn(
      smtp,
      new FlowClient(first.url),
      request.url,
      "hedy@ox.ac.uk",
      new FlowClient(second.url)
    )
    const tokens = await client.authorizationCodeGrant(onFirst, callback, request.checks)
    expect(tokens.claims()).toMatchObject({
      iss: first.url,
      aud: "web",
      campusgate_eligibility: { offer: { id: "shop" } }
    })
    // One signing key for both daemons: the ID token validates against the other's JWKS.
    await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${second.url}/.well-known/jwks.json`)), {
      issuer: first.url,
      audience: "web"
    })
    const userinfo = await client.fetchUserInfo(onSecond, tokens.access_token, tokens.claims()!.sub)
    expect(userinfo.campusgate_eligibility).toEqual(tokens.claims()!.campusgate_eligibility)
    await expect(client.authorizationCodeGrant(onSecond, callback, request.checks)).rejects.toMatchObject({
      error: "invalid_grant"
    })
  })

  it("one code redeemed on both daemons at once: exactly one gets tokens", async () => {
    const [first, second] = daemons as [Daemon, Daemon]
    const onFirst = await relyingPartyOn(first)
    const onSecond = await relyingPartyOn(second)
    for (let round = 0; round < 3; round++) {
      const request = await authorizationRequest(onFirst, { redirect_uri: WEB_CALLBACK, offer: "shop" })
      const callback = await signIn(smtp, new FlowClient(first.url), request.url, `ada${round}@ox.ac.uk`)
      const outcomes = await Promise.allSettled([
        client.authorizationCodeGrant(onFirst, callback, request.checks),
        client.authorizationCodeGrant(onSecond, callback, request.checks)
      ])
      expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1)
      const refused = outcomes.find((outcome) => outcome.status === "rejected") as PromiseRejectedResult
      expect(refused.reason).toMatchObject({ error: "invalid_grant" })
    }
  })
})
