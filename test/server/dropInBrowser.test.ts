/**
 * The drop-in (`/verify.js`) in Debian's chromium, as a shop uses it: the
 * example page (`examples/drop-in.html`, pointed at the daemon) served by a
 * shop of its own on another loopback port, its server checking the token
 * with the Express-style middleware example mounted on `node:http`, mail
 * over a loopback SMTP server (the code read from the message). A click
 * opens the flow in a popup, completed there; the popup hands the token to
 * the page and closes, the promise resolves, and the shop's server accepts
 * a token that verifies against the daemon's JWKS. A shop whose origin the
 * offer does not allow sees the popup refuse (400) and no message; closing
 * it rejects the promise. With the popup blocked, the page goes to the flow
 * itself and comes back with the token, which `resultFromLocation` reads
 * (and a forged return is refused). Without its script, a popup's done
 * page links back with the result. New pages pass axe-core; the CSP refuses
 * nothing and no request leaves for another host.
 */
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EligibleRequest, requireEligibility } from "../../examples/require-eligibility-express.ts"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { browserAvailable, browserRequired, expectAccessible, launchBrowser, warnWithoutBrowser } from "../browser.ts"
import { type Daemon, startDaemon } from "./daemon.ts"
import { hostedConfig } from "./hostedFlowClient.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

// What the tests read in the page (the tests' types have no DOM).
declare const window: {
  messages: Array<{ origin: string; data: unknown }>
  addEventListener(type: "message", listener: (event: { origin: string; data: unknown }) => void): void
  readonly opener: unknown
  open: () => null
}
declare const sessionStorage: { readonly length: number }

warnWithoutBrowser("the drop-in's browser test")

const EXAMPLE = readFileSync(new URL("../../examples/drop-in.html", import.meta.url), "utf8")
const OFFER = "acme-student-discount"

describe.skipIf(!browserAvailable && !browserRequired)("the drop-in (/verify.js) in a real headless browser", () => {
  let daemon: Daemon
  let smtp: TestSmtp
  const contexts: Array<BrowserContext> = []
  const outside: Array<string> = []
  const cspViolations: Array<string> = []
  /** The tokens the shops' servers were sent. */
  const received: Array<string> = []

  /** A shop: the example page, pointed at the daemon, and the server side that checks the token. */
  const shopServer = (): Server => {
    let check: ReturnType<typeof requireEligibility> | undefined
    return createServer((request, response) => {
      if (request.method === "POST" && request.url === "/student-discount") {
        received.push(request.headers.authorization?.slice("Bearer ".length) ?? "")
        check ??= requireEligibility({ jwksUrl: `${daemon.url}/.well-known/jwks.json`, offerId: OFFER, team: "acme" })
        check(request, response, (error) => {
          if (error !== undefined) return void response.writeHead(500).end()
          const claims = (request as EligibleRequest).eligibility!
          response
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ discount: "STUDENT50", institution: claims.institution?.name }))
        })
        return
      }
      response
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(EXAMPLE.replaceAll("https://campusgate.example", daemon.url))
    })
  }
  const allowed = shopServer()
  const refused = shopServer()
  let SHOP: string
  let ELSEWHERE: string

  const listen = async (server: Server) => {
    server.listen(0, "127.0.0.1")
    await new Promise((resolve) => server.once("listening", resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  beforeAll(async () => {
    SHOP = await listen(allowed)
    ELSEWHERE = await listen(refused)
    const certificate = await makeCertificate()
    smtp = await startSmtp(certificate)
    daemon = await startDaemon(hostedConfig(smtp, certificate.cert, SHOP))
  }, 60_000)

  afterAll(async () => {
    allowed.close()
    refused.close()
    for (const context of contexts) await context.close()
    await daemon?.stop()
    await smtp?.close()
  })

  /** A browser whose pages' requests to anywhere but the daemon and the shops are noted. */
  const browse = async (options: { popupsBlocked?: boolean } = {}): Promise<Page> => {
    const context = await launchBrowser()
    contexts.push(context)
    if (options.popupsBlocked === true) {
      // What a popup blocker does: `window.open` answers null.
      await context.addInitScript(() => {
        window.open = () => null
      })
    }
    context.on("request", (request) => {
      const url = request.url()
      if (![daemon.url, SHOP, ELSEWHERE].some((origin) => url.startsWith(origin))) outside.push(url)
    })
    const watch = (page: Page) =>
      page.on("console", (message) => {
        if (message.text().includes("Content Security Policy")) cspViolations.push(message.text())
      })
    context.on("page", watch)
    const first = context.pages()[0]
    if (first !== undefined) watch(first)
    return first ?? (await context.newPage())
  }

  /** Notes every message the page receives, from anywhere. */
  const recordMessages = (page: Page) =>
    page.evaluate(() => {
      window.messages = []
      window.addEventListener("message", (event) => window.messages.push({ origin: event.origin, data: event.data }))
    })

  /**
   * The code of the message to `to`, once it arrived. A delivery that failed
   * on a loaded machine is retried after a backoff, so the wait is longer
   * than one message's usual second.
   */
  const codeTo = async (to: string) => {
    for (;;) {
      const mail = smtp.received.find((each) => each.to === to)
      if (mail !== undefined) return codeOf(mail)
      await smtp.waitFor(smtp.received.length + 1, 40_000)
    }
  }

  /** Address, then code, by keyboard, on the flow's page. */
  const completeFlow = async (flow: Page, email: string) => {
    await flow.waitForSelector("#email")
    await flow.keyboard.type(email)
    await flow.keyboard.press("Enter")
    await flow.waitForSelector("#code")
    await flow.keyboard.type(await codeTo(email))
    await flow.keyboard.press("Enter")
  }

  const result = (page: Page) => page.locator("#result")

  it("a click opens the flow in a popup; completed there, the popup hands over and closes, the promise resolves with a token that verifies", async () => {
    const page = await browse()
    await page.goto(`${SHOP}/`)
    await expectAccessible(page, "the shop's drop-in page")
    await recordMessages(page)
    const started = performance.now()
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#student")])
    await popup.waitForLoadState()
    const opened = new URL(popup.url())
    expect(`${opened.origin}${opened.pathname}`).toBe(`${daemon.url}/verify/${OFFER}`)
    expect(opened.searchParams.get("opener")).toBe(SHOP)
    expect(opened.searchParams.get("state")).toMatch(/^[0-9a-f]{32}$/)
    // Nothing severs the popup from the page that opened it.
    expect(await popup.evaluate(() => window.opener !== null)).toBe(true)
    expect(await popup.locator("h1").textContent()).toBe("Confirm your eligibility")
    await expectAccessible(popup, "the flow in a popup")
    const closed = popup.waitForEvent("close")
    await completeFlow(popup, "alan.turing@ox.ac.uk")
    await closed
    await expect.poll(() => result(page).textContent()).toBe("Discount STUDENT50 for University of Oxford")
    console.log(
      `drop-in: click to token at the shop's server in ${Math.round(performance.now() - started)} ms (mail delivery included)`
    )
    expect(page.url()).toBe(`${SHOP}/`)
    // One message, from the daemon, to this page, in the documented format.
    const messages = await page.evaluate(() => window.messages)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({
      origin: daemon.url,
      data: { type: "campusgate:verified", state: opened.searchParams.get("state") }
    })
    const token = received.at(-1)!
    expect((messages[0]!.data as { token: string }).token).toBe(token)
    const claims = await verifyEligibilityToken(token, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: OFFER,
      team: "acme"
    })
    expect(claims.institution?.name).toBe("University of Oxford")
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    expect(outside).toEqual([])
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("a shop the offer does not allow: the popup refuses before anything is shown, no message comes; closing it rejects", async () => {
    const page = await browse()
    await page.goto(`${ELSEWHERE}/`)
    await recordMessages(page)
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#student")])
    await popup.waitForLoadState()
    expect(new URL(popup.url()).searchParams.get("opener")).toBe(ELSEWHERE)
    expect(await popup.locator("h1").textContent()).toBe("There is a problem")
    expect(await popup.locator("#notice").textContent()).toContain("may not receive the result")
    expect(await popup.locator("#email").count()).toBe(0)
    await expectAccessible(popup, "a refused opener")
    await popup.close()
    await expect
      .poll(() => result(page).textContent())
      .toBe("the verification window was closed before the address was confirmed")
    expect(await page.evaluate(() => window.messages)).toEqual([])
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("popup blocked: the page goes to the flow itself and comes back with the token, read by resultFromLocation", async () => {
    const page = await browse({ popupsBlocked: true })
    await page.goto(`${SHOP}/?campaign=spring`)
    await page.click("#student")
    await page.waitForURL(`${daemon.url}/verify/**`)
    const flow = new URL(page.url())
    expect(flow.searchParams.get("redirect_uri")).toBe(`${SHOP}/?campaign=spring`)
    expect(flow.searchParams.get("opener")).toBeNull()
    await completeFlow(page, "katherine.johnson@ox.ac.uk")
    await page.waitForURL(`${SHOP}/**`)
    await expect.poll(() => result(page).textContent()).toBe("Discount STUDENT50 for University of Oxford")
    // The result is taken out of the address, the rest of it kept; the state is spent.
    expect(page.url()).toBe(`${SHOP}/?campaign=spring`)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await verifyEligibilityToken(received.at(-1)!, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: OFFER,
      team: "acme"
    })
    // A result this tab did not ask for (a forged or replayed return) is refused.
    await page.goto(`${SHOP}/?state=forged&status=verified&verificationId=ver_x&token=${received.at(-1)}`)
    await expect
      .poll(() => result(page).textContent())
      .toBe("the result in the address was not asked for from this tab")
    expect(page.url()).toBe(`${SHOP}/`)
    expect(cspViolations).toEqual([])
  }, 60_000)

  it("without its script in the popup, its done page says to go back and links back with the result", async () => {
    const page = await browse()
    // The flow's own script does not load (axe needs the browser's JavaScript, so that stays on).
    await page.context().route("**/verify/assets/verify.js*", (route) => route.abort())
    await page.goto(`${SHOP}/`)
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#student")])
    await completeFlow(popup, "mary.jackson@ox.ac.uk")
    await popup.waitForSelector("text=Your address is confirmed")
    expect(await popup.locator("main > p").first().textContent()).toBe("Go back to the page you came from to continue.")
    expect(await popup.locator("#return").textContent()).toBe(`Continue on ${new URL(SHOP).host}`)
    await expectAccessible(popup, "a popup's done page")
    const [back] = await Promise.all([
      popup.waitForRequest((request) => request.url().startsWith(SHOP)),
      popup.click("#return")
    ])
    const returned = new URL(back.url())
    expect(returned.searchParams.get("status")).toBe("verified")
    // The popup's storage began as a copy of the page's, so the shop's page in it knows the state and takes the token.
    await expect.poll(() => result(popup).textContent()).toBe("Discount STUDENT50 for University of Oxford")
    expect(received.at(-1)).toBe(returned.searchParams.get("token"))
    expect(outside).toEqual([])
  }, 60_000)
})
