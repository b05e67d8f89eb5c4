/**
 * The hosted verification flow in Debian's chromium, against the real
 * daemon and a real SMTP server on loopback (the code read from the
 * message): completed with the keyboard alone, with JavaScript on (the
 * resend countdown runs, focus follows the problem) and with JavaScript
 * off; every kind of page scanned by axe-core (no serious or critical
 * violation) in the four built-in languages; no request leaves for
 * another host but the shop the flow returns to, and the CSP refuses
 * nothing the page does. The time from the first page to the token in the
 * shop's address, mail delivery excluded, is printed.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserAvailable, browserRequired, expectAccessible, launchBrowser, warnWithoutBrowser } from "../browser.ts"
import { type Daemon, startDaemon } from "./daemon.ts"
import { hostedConfig } from "./hostedFlowClient.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

declare const document: { readonly activeElement: { readonly id: string } | null }

warnWithoutBrowser("the hosted verification flow's browser test")

describe.skipIf(!browserAvailable && !browserRequired)("the hosted flow in a real headless browser", () => {
  let daemon: Daemon
  let smtp: TestSmtp
  const contexts: Array<BrowserContext> = []
  const outside: Array<string> = []
  const cspViolations: Array<string> = []
  // The shop the flow returns to: a page of its own on another loopback port.
  const shop = createServer((_request, response) =>
    response
      .writeHead(200, { "content-type": "text/html" })
      .end('<!doctype html><html lang="en"><title>Shop</title><h1>Shop</h1></html>')
  )
  let SHOP: string

  beforeAll(async () => {
    shop.listen(0, "127.0.0.1")
    await new Promise((resolve) => shop.once("listening", resolve))
    SHOP = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`
    const certificate = await makeCertificate()
    smtp = await startSmtp(certificate)
    daemon = await startDaemon(hostedConfig(smtp, certificate.cert, SHOP))
  }, 60_000)

  afterAll(async () => {
    shop.close()
    for (const context of contexts) await context.close()
    await daemon?.stop()
    await smtp?.close()
  })

  /** A browser, JavaScript on or off, whose requests to anywhere but the daemon and the shop are noted. */
  const browse = async (javaScriptEnabled: boolean): Promise<Page> => {
    const context = await launchBrowser({ javaScriptEnabled })
    contexts.push(context)
    context.on("request", (request) => {
      if (!request.url().startsWith(daemon.url) && !request.url().startsWith(SHOP)) outside.push(request.url())
    })
    const page = context.pages()[0] ?? (await context.newPage())
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) cspViolations.push(message.text())
    })
    return page
  }

  const scan = expectAccessible

  const heading = (page: Page) => page.locator("h1").textContent()
  const focused = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "")
  const url = (path: string) => `${daemon.url}${path}`

  /**
   * Waits for the message to `to` (messages to other addresses, such as an earlier flow's resend, may arrive first)
   * and answers its code and how long the wait took.
   */
  const mailTo = async (to: string, before: number) => {
    const started = performance.now()
    for (let seen = before; ; ) {
      const mails = await smtp.waitFor(seen + 1, 40_000)
      const mail = mails.slice(before).find((each) => each.to === to)
      if (mail !== undefined) return { code: codeOf(mail), waitedMs: performance.now() - started }
      seen = mails.length
    }
  }

  /** The flow from the first page to the shop, by keyboard alone; answers the shop's address and the time taken. */
  const complete = async (page: Page, email: string, options: { checks: boolean }) => {
    const started = performance.now()
    // Time spent checking (axe, watching the countdown) is not the person's: it is left out of the figure.
    let checkingMs = 0
    const checking = async (check: () => Promise<unknown>) => {
      const from = performance.now()
      await check()
      checkingMs += performance.now() - from
    }
    await page.goto(url(`/verify/shop?redirect_uri=${encodeURIComponent(`${SHOP}/back`)}&state=keyboard-${email}`))
    expect(await heading(page)).toBe("Confirm your eligibility")
    expect(await focused(page)).toBe("email")
    if (options.checks) await checking(() => scan(page, "the address form"))
    const before = smtp.received.length
    await page.keyboard.type(email)
    await page.keyboard.press("Enter")
    await page.waitForSelector("#code")
    expect(await focused(page)).toBe("code")
    const resend = page.locator("#resend")
    if (options.checks) {
      const from = performance.now()
      await scan(page, "the code form")
      // The countdown runs: the button waits, the live region counts down, then both say it is time.
      expect(await resend.isDisabled()).toBe(true)
      await page.waitForFunction(
        () =>
          !(document as never as { getElementById(id: string): { disabled: boolean } }).getElementById("resend")
            .disabled,
        undefined,
        { timeout: 5000 }
      )
      expect(await page.locator("#resend-status").textContent()).toBe("You can ask for a new message now.")
      checkingMs += performance.now() - from
    } else {
      // Without the script the button is there to press; the server says when it is too early.
      expect(await resend.isDisabled()).toBe(false)
    }
    const { code, waitedMs } = await mailTo(email, before)
    // A wrong code first: the problem is announced and the field focused again.
    await page.keyboard.type("000000")
    await page.keyboard.press("Enter")
    await page.waitForSelector("#notice")
    expect(await page.locator("#notice").textContent()).toContain("Attempts left: 4")
    expect(await focused(page)).toBe("code")
    if (options.checks) await checking(() => scan(page, "a wrong code"))
    await page.keyboard.type(code)
    await page.keyboard.press("Enter")
    await page.waitForURL(`${SHOP}/**`)
    const elapsedMs = performance.now() - started - waitedMs - checkingMs
    return { back: new URL(page.url()), elapsedMs }
  }

  for (const [javaScript, email] of [
    [true, "ada.lovelace@ox.ac.uk"],
    [false, "grace.hopper@ox.ac.uk"]
  ] as const) {
    it(`JavaScript ${javaScript ? "on" : "off"}: keyboard only, from the first page to the token in the shop's address`, async () => {
      const page = await browse(javaScript)
      // With JavaScript the pages are scanned and the countdown watched; without, the plain forms alone.
      const { back, elapsedMs } = await complete(page, email, { checks: javaScript })
      expect(back.searchParams.get("state")).toBe(`keyboard-${email}`)
      expect(back.searchParams.get("token")).toMatch(/^eyJ/)
      console.log(
        `hosted flow, JavaScript ${javaScript ? "on" : "off"}: first page to token in ${Math.round(elapsedMs)} ms (mail delivery excluded)`
      )
      expect(outside).toEqual([])
      expect(cspViolations).toEqual([])
    }, 60_000)
  }

  it("every other page passes axe-core: languages, inbox, done, expired, refused, problems", async () => {
    const page = await browse(true)
    for (const [locale, title] of [
      ["de", "Bestätigen Sie Ihre Berechtigung"],
      ["fr", "Confirmez votre éligibilité"],
      ["es", "Confirma que cumples los requisitos"]
    ] as const) {
      await page.goto(url(`/verify/shop?locale=${locale}`))
      expect(await page.locator("html").getAttribute("lang")).toBe(locale)
      expect(await heading(page)).toBe(title)
      await scan(page, `the address form in ${locale}`)
    }
    // An ineligible address: the reason in words, the field focused.
    await page.goto(url("/verify/shop"))
    await page.keyboard.type("someone@mailinator.com")
    await page.keyboard.press("Enter")
    await page.waitForSelector("#notice")
    expect(await focused(page)).toBe("email")
    await scan(page, "an ineligible address")
    // Check your inbox (the link method).
    await page.goto(url("/verify/links"))
    await page.keyboard.type("linus@ox.ac.uk")
    await page.keyboard.press("Enter")
    await page.waitForSelector("text=Check your inbox")
    await scan(page, "check your inbox")
    // Expired (codes of one second), then starting again.
    await page.goto(url("/verify/quick"))
    await page.keyboard.type("barbara.liskov@ox.ac.uk")
    await page.keyboard.press("Enter")
    await page.waitForSelector("#code")
    await page.waitForTimeout(1200)
    await page.reload()
    expect(await page.locator("#notice").textContent()).toContain("has expired")
    expect(await focused(page)).toBe("notice")
    await scan(page, "an expired code")
    // Done, without a redirect.
    await page.goto(url("/verify/shop"))
    const before = smtp.received.length
    await page.keyboard.type("frances.allen@ox.ac.uk")
    await page.keyboard.press("Enter")
    await page.waitForSelector("#code")
    const { code } = await mailTo("frances.allen@ox.ac.uk", before)
    await page.keyboard.type(code)
    await page.keyboard.press("Enter")
    await page.waitForSelector("text=Your address is confirmed")
    await scan(page, "done")
    // Problems: a refused redirect, no such offer.
    await page.goto(url("/verify/shop?redirect_uri=https%3A%2F%2Fevil.example%2F"))
    expect(await focused(page)).toBe("notice")
    await scan(page, "a refused redirect")
    await page.goto(url("/verify/no-such-offer"))
    await scan(page, "not found")
    expect(outside).toEqual([])
    expect(cspViolations).toEqual([])
  }, 60_000)
})
