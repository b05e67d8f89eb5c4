/**
 * The drop-in over HTTP, against the real daemon and a loopback SMTP
 * server: `/verify.js` as a browser and a proxy fetch it (type, `nosniff`,
 * a short cache, compressed, `ETag` and 304), and the hosted flow opened as
 * a popup (`?opener=`): an opener the offer does not allow is refused as a
 * refused redirect is, before anything is shown; an allowed one ends on a
 * done page that holds the result for its script to post to exactly that
 * origin, with a link back for a page without script; the link method's
 * message only confirms; no answer sends `Cross-Origin-Opener-Policy`.
 */
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { type Daemon, startDaemon } from "./daemon.ts"
import { FlowClient, headingOf, hostedConfig, noticeOf, SHOP } from "./hostedFlowClient.ts"
import { codeOf, linkOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

let daemon: Daemon
let smtp: TestSmtp

beforeAll(async () => {
  const certificate = await makeCertificate()
  smtp = await startSmtp(certificate)
  daemon = await startDaemon(hostedConfig(smtp, certificate.cert))
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await smtp?.close()
})

const popupPath = (offer: string, query: Record<string, string>) =>
  `/verify/${offer}?${new URLSearchParams(query).toString()}`

/** The result a done page holds for its opener. */
const handoffOf = (body: string) => {
  const element = /<div id="handoff" hidden data-opener="([^"]*)" data-message="([^"]*)"><\/div>/.exec(body)
  if (element === null) return undefined
  const fromHtml = (text: string) =>
    text
      .replaceAll("&quot;", '"')
      .replaceAll("&#39;", "'")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&")
  return { opener: fromHtml(element[1]!), message: JSON.parse(fromHtml(element[2]!)) as Record<string, string> }
}

describe("/verify.js", () => {
  it("is a script served with nosniff, a five-minute cache, compressed, and a 304 for its ETag", async () => {
    const plain = await fetch(`${daemon.url}/verify.js`, { headers: { "accept-encoding": "identity" } })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(plain.headers.get("x-content-type-options")).toBe("nosniff")
    expect(plain.headers.get("cache-control")).toBe("public, max-age=300")
    expect(plain.headers.get("vary")).toBe("accept-encoding")
    expect(plain.headers.get("access-control-allow-origin")).toBeNull()
    const source = await plain.text()
    expect(source).toContain("window.Campusgate = { verify: verify, resultFromLocation: resultFromLocation }")
    const tag = plain.headers.get("etag")!
    expect(tag).toMatch(/^"[\w-]+"$/)
    const again = await fetch(`${daemon.url}/verify.js`, {
      headers: { "accept-encoding": "identity", "if-none-match": tag }
    })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")

    const sizes: Record<string, number> = { identity: Buffer.byteLength(source) }
    for (const coding of ["br", "gzip"]) {
      // Node's fetch decodes the body; node:http's raw bytes are what travels.
      const raw = await new Promise<{ headers: Record<string, unknown>; bytes: number }>((resolve, reject) => {
        request(`${daemon.url}/verify.js`, { headers: { "accept-encoding": coding } }, (response) => {
          let bytes = 0
          response.on("data", (chunk: Buffer) => {
            bytes += chunk.length
          })
          response.on("end", () => resolve({ headers: response.headers, bytes }))
        })
          .on("error", reject)
          .end()
      })
      expect(raw.headers["content-encoding"]).toBe(coding)
      expect(raw.headers.etag).toBe(`${tag.slice(0, -1)}-${coding}"`)
      sizes[coding] = raw.bytes
    }
    console.log(`/verify.js: ${sizes.identity} bytes, ${sizes.gzip} gzip, ${sizes.br} brotli`)
    expect(sizes.br).toBeLessThan(2 * 1024)
  })
})

describe("the hosted flow as a popup (?opener=)", () => {
  it("refuses an opener the offer does not allow, or that is not an origin alone, before anything is shown", async () => {
    for (const opener of [
      "https://evil.example",
      "https://shop.example.evil.example",
      `${SHOP}/`,
      `${SHOP}/checkout`,
      "null",
      "javascript:alert(1)"
    ]) {
      const refused = await new FlowClient(daemon.url).get(popupPath("shop", { opener, state: "s" }))
      expect(refused.status, opener).toBe(400)
      expect(noticeOf(refused.body)).toContain("may not receive the result")
      expect(refused.headers.getSetCookie()).toEqual([])
      expect(refused.headers.get("cross-origin-opener-policy")).toBeNull()
    }
  })

  it("admits an allowed opener, by offer or by target group, under the deployment's redirectOrigins too", async () => {
    for (const path of [
      popupPath("shop", { opener: SHOP, state: "s" }),
      `/verify?${new URLSearchParams({ targetGroupId: "universities", opener: SHOP, state: "s" })}`
    ]) {
      const admitted = await new FlowClient(daemon.url).get(path)
      expect(admitted.status, path).toBe(200)
      expect(headingOf(admitted.body)).toBe("Confirm your eligibility")
    }
    const other = await new FlowClient(daemon.url).get(
      `/verify?${new URLSearchParams({ targetGroupId: "universities", opener: "https://evil.example" })}`
    )
    expect(other.status).toBe(400)
  })

  it("ends on a done page that holds the result for exactly its opener, and a link back without script", async () => {
    const client = new FlowClient(daemon.url)
    const path = popupPath("shop", { opener: SHOP, state: "popup-1", redirect_uri: `${SHOP}/cart?x=1` })
    const first = await client.get(path)
    expect(first.status).toBe(200)
    expect(first.headers.get("cross-origin-opener-policy")).toBeNull()
    // A popup's flow has a cookie of its own: the same flow without the opener is another.
    const cookieName = (answer: { headers: Headers }) => answer.headers.getSetCookie()[0]?.split("=")[0]
    const withoutOpener = await new FlowClient(daemon.url).get(
      popupPath("shop", { state: "popup-1", redirect_uri: `${SHOP}/cart?x=1` })
    )
    expect(cookieName(first)).toMatch(/^cg_verify_/)
    expect(cookieName(first)).not.toBe(cookieName(withoutOpener))
    const before = smtp.received.length
    await client.submit("start", { email: "edsger@ox.ac.uk" })
    const mail = (await smtp.waitFor(before + 1)).slice(before).find((each) => each.to === "edsger@ox.ac.uk")!
    const confirmed = await client.post("confirm", { code: codeOf(mail) })
    // Back to the flow, not to the shop: the popup hands the result over itself.
    expect(confirmed.status).toBe(303)
    expect(confirmed.location).toBe(path)
    const done = await client.get(confirmed.location!)
    expect(done.status).toBe(200)
    expect(done.headers.get("cross-origin-opener-policy")).toBeNull()
    expect(headingOf(done.body)).toBe("Your address is confirmed")
    expect(done.body).toContain("Go back to the page you came from to continue.")
    const handoff = handoffOf(done.body)!
    expect(handoff.opener).toBe(SHOP)
    expect(handoff.message).toMatchObject({ type: "campusgate:verified", state: "popup-1" })
    const claims = await verifyEligibilityToken(handoff.message.token!, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: "shop",
      team: "acme"
    })
    expect(claims.jti).toBe(handoff.message.verificationId)
    expect(Date.parse(handoff.message.expiresAt!)).toBeGreaterThan(Date.now())
    const link = /<a class="button" id="return" href="([^"]*)">Continue on shop\.example<\/a>/.exec(done.body)
    const back = new URL(link![1]!.replaceAll("&amp;", "&"))
    expect(`${back.origin}${back.pathname}`).toBe(`${SHOP}/cart`)
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      x: "1",
      state: "popup-1",
      status: "verified",
      token: handoff.message.token
    })
  })

  it("with the link method, the message's link confirms without leaving for the shop; the popup then hands over", async () => {
    const client = new FlowClient(daemon.url)
    const path = popupPath("links", { opener: SHOP, state: "popup-link", redirect_uri: `${SHOP}/back` })
    await client.get(path)
    const before = smtp.received.length
    const inbox = await client.submit("start", { email: "tony.hoare@ox.ac.uk" })
    expect(headingOf(inbox.body)).toBe("Check your inbox")
    const mail = (await smtp.waitFor(before + 1)).slice(before).find((each) => each.to === "tony.hoare@ox.ac.uk")!
    const opened = await fetch(linkOf(mail), { redirect: "manual" })
    expect(opened.status).toBe(200)
    const done = await client.get(path)
    expect(done.status).toBe(200)
    expect(handoffOf(done.body)?.message).toMatchObject({ type: "campusgate:verified", state: "popup-link" })
  })
})
