/**
 * The hosted verification flow over HTTP, as a browser without JavaScript
 * drives it: the real daemon on loopback, mail over a real SMTP server on
 * loopback (the code read from the message as its recipient would), a
 * cookie jar, forms posted with the CSRF token the page holds and every
 * 303 followed. Each state a person can meet is reached for real: wrong
 * code with attempts left, too many wrong codes, expiry, resend and its
 * wait, an ineligible address (its reason in words), the redemption limit,
 * too many messages, check-your-inbox and the link, a refused redirect,
 * a form without its token, an unknown offer, too many submissions from
 * one address, and the service unavailable.
 */
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { type Daemon, setSettings, startDaemon, waitForLine } from "./daemon.ts"
import { FlowClient, headingOf, hostedConfig, LOGO_SVG, noticeOf, SHOP } from "./hostedFlowClient.ts"
import { codeOf, linkOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

let daemon: Daemon
let smtp: TestSmtp
let dirs: { configDir: string; dataDir: string }
let caPem: string

beforeAll(async () => {
  const certificate = await makeCertificate()
  caPem = certificate.cert
  smtp = await startSmtp(certificate)
  dirs = hostedConfig(smtp, caPem)
  daemon = await startDaemon(dirs)
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await smtp?.close()
})

const flowPath = (offer: string, query: Record<string, string> = {}) => {
  const search = new URLSearchParams(query).toString()
  return `/verify/${offer}${search === "" ? "" : `?${search}`}`
}

/** Opens the flow and submits the address; answers the page after it and the message sent. */
const startFlow = async (client: FlowClient, path: string, email: string) => {
  const first = await client.get(path)
  expect(first.status, first.body).toBe(200)
  const before = smtp.received.length
  const next = await client.submit("start", { email })
  const mail =
    next.status === 200 && /name="code"|linkContinue|I have opened/.test(next.body)
      ? (await smtp.waitFor(before + 1))[before]!
      : undefined
  return { next, mail }
}

describe("the hosted verification flow without JavaScript", () => {
  it("email → code → back to the shop with the token and the caller's state; headers and page as promised", async () => {
    const client = new FlowClient(daemon.url)
    const path = flowPath("shop", { redirect_uri: `${SHOP}/checkout/done?cart=7`, state: "s-123" })
    const first = await client.get(path)
    expect(first.status).toBe(200)
    expect(first.headers.get("cache-control")).toBe("no-store")
    expect(first.headers.get("referrer-policy")).toBe("no-referrer")
    const csp = first.headers.get("content-security-policy")!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self';")
    expect(csp).toMatch(/style-src 'self' 'nonce-[^']+'/)
    expect(csp).toContain(`form-action 'self' ${SHOP}`)
    expect(csp).toContain("frame-ancestors 'none'")
    const cookie = first.headers.getSetCookie().join("\n")
    expect(cookie).toMatch(/^cg_verify_[\w-]{16}=[^;]+; Path=\/verify; Max-Age=\d+; HttpOnly; SameSite=Strict$/)
    // The page: its language, the offer's presentation, a labelled field, no inline script, nothing from elsewhere.
    expect(first.body).toContain('<html lang="en">')
    expect(first.body).toContain("Acme Learning")
    expect(first.body).toContain('<label for="email">')
    expect(first.body).toContain("Acme keeps only whether you are eligible")
    expect(first.body).not.toMatch(/<script>|<script [^>]*>[^<]/)
    expect(first.body.match(/(?:src|href)="([^"]+)"/g)!.filter((ref) => /="https?:/.test(ref))).toEqual([
      'href="https://acme.example/help"',
      'href="https://acme.example/privacy"'
    ])
    // Weight of the first page, compressed, with its stylesheet, script and logo.
    const assets = await Promise.all(
      [...first.body.matchAll(/(?:src|href)="(\/verify\/[^"]+)"/g)].map(async ([, ref]) => {
        const response = await fetch(new URL(ref!, daemon.url), { headers: { "accept-encoding": "br, gzip" } })
        return (await response.arrayBuffer()).byteLength
      })
    )
    const weight = gzipSync(first.body).length + assets.reduce((sum, bytes) => sum + bytes, 0)
    console.log(`hosted flow: first page with its files, compressed: ${weight} bytes (${assets.length} files)`)
    expect(weight).toBeLessThanOrEqual(30 * 1024)

    const before = smtp.received.length
    const code = await client.submit("start", { email: "ada@ox.ac.uk" })
    expect(headingOf(code.body)).toBe("Enter your code")
    expect(code.body).toContain("***@ox.ac.uk")
    expect(code.body).toContain('autocomplete="one-time-code"')
    const mail = (await smtp.waitFor(before + 1))[before]!
    expect(mail.to).toBe("ada@ox.ac.uk")
    const done = await client.post("confirm", { code: codeOf(mail) })
    expect(done.status).toBe(303)
    const back = new URL(done.location!)
    expect(`${back.origin}${back.pathname}`).toBe(`${SHOP}/checkout/done`)
    expect(back.searchParams.get("cart")).toBe("7")
    expect(back.searchParams.get("state")).toBe("s-123")
    expect(back.searchParams.get("status")).toBe("verified")
    const claims = await verifyEligibilityToken(back.searchParams.get("token")!, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: "shop",
      team: "acme"
    })
    expect(claims).toMatchObject({ jti: back.searchParams.get("verificationId"), method: "code" })
    // Back to the flow's address: the same token again, not a new verification.
    const again = await client.get(path)
    expect(again.status).toBe(303)
    expect(new URL(again.location!).searchParams.get("token")).toBe(back.searchParams.get("token"))
  })

  it("without redirect_uri the done page says so; the logo is served from here and cannot run script", async () => {
    const client = new FlowClient(daemon.url)
    const { next, mail } = await startFlow(client, flowPath("shop"), "grace@ox.ac.uk")
    expect(next.status).toBe(200)
    const done = await client.submit("confirm", { code: codeOf(mail!) })
    expect(done.status).toBe(200)
    expect(headingOf(done.body)).toBe("Your address is confirmed")
    const logo = /<img src="([^"]+)"/.exec(done.body)![1]!
    const served = await fetch(new URL(logo, daemon.url))
    expect(served.headers.get("content-type")).toBe("image/svg+xml")
    expect(served.headers.get("content-security-policy")).toContain("sandbox")
    expect(served.headers.get("x-content-type-options")).toBe("nosniff")
    expect(await served.text()).toBe(LOGO_SVG)
  })

  it("two flows open in one browser at once each keep their own state", async () => {
    const client = new FlowClient(daemon.url)
    const first = await startFlow(client, flowPath("shop", { state: "tab-1" }), "ada@ox.ac.uk")
    expect(headingOf(first.next.body)).toBe("Enter your code")
    const firstForm = client.lastForm
    // A second tab opens another flow: the first one's form still posts.
    const second = await client.get(flowPath("shop", { state: "tab-2" }))
    expect(second.body).toContain('<input id="email"')
    expect([...client.cookies.keys()].filter((name) => name.startsWith("cg_verify_"))).toHaveLength(2)
    client.lastForm = firstForm
    const done = await client.submit("confirm", { code: codeOf(first.mail!) })
    expect(headingOf(done.body)).toBe("Your address is confirmed")
    // And the second tab is where it was: the address form.
    expect((await client.get(flowPath("shop", { state: "tab-2" }))).body).toContain('<input id="email"')
  })

  it("a wrong code says how many attempts are left and marks the field; the last one fails the verification", async () => {
    const client = new FlowClient(daemon.url)
    const { next } = await startFlow(client, flowPath("strict"), "alan@ox.ac.uk")
    expect(headingOf(next.body)).toBe("Enter your code")
    const wrong = await client.submit("confirm", { code: "000000" })
    expect(wrong.status).toBe(200)
    expect(noticeOf(wrong.body)).toContain("That code is not correct. Attempts left: 1.")
    expect(wrong.body).toMatch(/<input id="code"[^>]* aria-invalid="true" aria-describedby="notice" autofocus>/)
    const empty = await client.submit("confirm", { code: "  " })
    expect(noticeOf(empty.body)).toContain("Enter the code from the message.")
    const failed = await client.submit("confirm", { code: "000001" })
    expect(failed.status).toBe(409)
    expect(noticeOf(failed.body)).toContain("Too many wrong codes")
    // Starting again leads back to the address form.
    const restarted = await client.submit("restart")
    expect(restarted.body).toContain('<input id="email"')
  })

  it("resend: refused with the wait until it is due, then sent; the countdown's live region is on the page", async () => {
    const client = new FlowClient(daemon.url)
    const { next } = await startFlow(client, flowPath("shop"), "barbara@ox.ac.uk")
    expect(next.body).toMatch(/<p id="resend-status"[^>]* aria-live="polite"[^>]* data-seconds="[12]"/)
    const early = await client.submit("resend")
    expect(noticeOf(early.body)).toMatch(/You can ask for a new message in [12] seconds\./)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const before = smtp.received.length
    const resent = await client.submit("resend")
    expect(noticeOf(resent.body)).toBe("We sent a new message.")
    const mail = (await smtp.waitFor(before + 1))[before]!
    expect(mail.to).toBe("barbara@ox.ac.uk")
    const done = await client.submit("confirm", { code: codeOf(mail) })
    expect(headingOf(done.body)).toBe("Your address is confirmed")
  })

  it("too many messages to one address: said in minutes, nothing sent", async () => {
    const client = new FlowClient(daemon.url)
    await startFlow(client, flowPath("few"), "edsger@ox.ac.uk")
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const before = smtp.received.length
    const refused = await client.submit("resend")
    expect(noticeOf(refused.body)).toMatch(
      /Too many messages have been sent to this address\. Try again in \d+ minutes\./
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(smtp.received.length).toBe(before)
  })

  it("an expired code: the page says so (410) and starts again", async () => {
    const client = new FlowClient(daemon.url)
    const { mail } = await startFlow(client, flowPath("quick"), "john@ox.ac.uk")
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const expired = await client.get(client.form().action)
    expect(expired.status).toBe(410)
    expect(noticeOf(expired.body)).toContain("has expired")
    const late = await client.submit("confirm", { code: codeOf(mail!) })
    expect(late.status).toBe(410)
    const restarted = await client.submit("restart")
    expect(restarted.body).toContain('<input id="email"')
  })

  it("an ineligible address: the reason in plain words, never its code; an empty one is asked for", async () => {
    const client = new FlowClient(daemon.url)
    await client.get(flowPath("shop"))
    const refused = await client.submit("start", { email: "someone@mailinator.com" })
    expect(refused.status).toBe(200)
    const notice = noticeOf(refused.body)!
    expect(notice).toContain("This address cannot be used for this offer.")
    expect(notice).toContain("Addresses of temporary mail services cannot be used.")
    expect(refused.body).not.toMatch(/DISPOSABLE_EMAIL|[A-Z]{3,}_[A-Z]{3,}/)
    expect(refused.body).toMatch(/<input id="email"[^>]* aria-invalid="true" aria-describedby="notice" autofocus>/)
    const unknown = await client.submit("start", { email: "someone@gmail.com" })
    expect(noticeOf(unknown.body)).toContain("does not belong to a university or school this offer is for")
    const empty = await client.submit("start", { email: "" })
    expect(noticeOf(empty.body)).toContain("Enter your email address.")
  })

  it("the redemption limit: a second verification of one address for the offer is refused before any message", async () => {
    const first = new FlowClient(daemon.url)
    const { mail } = await startFlow(first, flowPath("once"), "donald@ox.ac.uk")
    expect(headingOf((await first.submit("confirm", { code: codeOf(mail!) })).body)).toBe("Your address is confirmed")
    const second = new FlowClient(daemon.url)
    await second.get(flowPath("once"))
    const before = smtp.received.length
    const refused = await second.submit("start", { email: "Donald+again@ox.ac.uk" })
    expect(noticeOf(refused.body)).toContain("already been used for this offer")
    expect(smtp.received.length).toBe(before)
  })

  it("the link method: check your inbox; the link sends the browser back with the state; the flow then shows it done", async () => {
    const client = new FlowClient(daemon.url)
    const path = flowPath("links", { redirect_uri: `${SHOP}/back`, state: "link-state" })
    const { next, mail } = await startFlow(client, path, "margaret@ox.ac.uk")
    expect(headingOf(next.body)).toBe("Check your inbox")
    expect(next.body).not.toContain('name="code"')
    const pending = await client.get(path)
    expect(headingOf(pending.body)).toBe("Check your inbox")
    const opened = await fetch(linkOf(mail!), { redirect: "manual" })
    expect(opened.status).toBe(303)
    const back = new URL(opened.headers.get("location")!)
    expect(back.searchParams.get("state")).toBe("link-state")
    expect(back.searchParams.get("token")).toBeTruthy()
    const after = await client.get(path)
    expect(after.status).toBe(303)
    expect(new URL(after.location!).searchParams.get("token")).toBe(back.searchParams.get("token"))
  })

  it("by target group, in the language asked for: ?locale= first, then Accept-Language, then the offer's", async () => {
    const client = new FlowClient(daemon.url)
    const german = await client.get("/verify?targetGroupId=universities", {
      "accept-language": "de-AT,de;q=0.9,en;q=0.5"
    })
    expect(german.body).toContain('<html lang="de">')
    expect(headingOf(german.body)).toBe("Bestätigen Sie Ihre Berechtigung")
    const french = await client.get("/verify?targetGroupId=universities&locale=fr", { "accept-language": "de" })
    expect(french.body).toContain('<html lang="fr">')
    const spanish = await client.get("/verify?targetGroupId=universities", { "accept-language": "es-MX" })
    expect(headingOf(spanish.body)).toBe("Confirma que cumples los requisitos")
    const fallback = await client.get("/verify?targetGroupId=universities", { "accept-language": "ja, zh;q=0.5" })
    expect(fallback.body).toContain('<html lang="en">')
    // The address form in German, then the message in German too.
    const before = smtp.received.length
    await client.get("/verify?targetGroupId=universities&locale=de")
    const code = await client.submit("start", { email: "emmy@ox.ac.uk" })
    expect(headingOf(code.body)).toBe("Code eingeben")
    const mail = (await smtp.waitFor(before + 1))[before]!
    expect(mail.subject).toMatch(/^Ihr Code/)
  })

  it("refuses before showing anything: an unlisted redirect_uri (400), an unknown offer or group (404)", async () => {
    const client = new FlowClient(daemon.url)
    for (const uri of ["https://evil.example/steal", "javascript:alert(1)", `${SHOP}.evil.example/`, "/relative"]) {
      const refused = await client.get(flowPath("shop", { redirect_uri: uri }))
      expect(refused.status, uri).toBe(400)
      expect(noticeOf(refused.body)).toContain("may not receive the result")
      expect(refused.body).not.toContain('name="email"')
      expect(refused.headers.getSetCookie()).toEqual([])
    }
    expect((await client.get("/verify/no-such-offer")).status).toBe(404)
    expect((await client.get("/verify?targetGroupId=nope")).status).toBe(404)
    // Another team's offer is not the flow's to refuse by team: every offer has its page, acting as its own team.
    expect((await client.get("/verify/globex-uk-launch")).status).toBe(200)
  })

  it("CSRF: a post without the flow's token, with another flow's, or without the cookie is refused (403), nothing sent", async () => {
    const client = new FlowClient(daemon.url)
    await client.get(flowPath("shop"))
    const before = smtp.received.length
    const forged = await client.post("start", { email: "mallory@ox.ac.uk" }, { csrf: "AAAA" })
    expect(forged.status).toBe(403)
    expect(noticeOf(forged.body)).toContain("This form has expired")
    const other = new FlowClient(daemon.url)
    await other.get(flowPath("shop"))
    const crossed = await client.post("start", { email: "mallory@ox.ac.uk" }, { csrf: other.form().csrf })
    expect(crossed.status).toBe(403)
    const cookieless = new FlowClient(daemon.url)
    cookieless.lastForm = client.lastForm
    expect((await cookieless.post("start", { email: "mallory@ox.ac.uk" })).status).toBe(403)
    // A cookie altered by one character no longer opens.
    const tampered = new FlowClient(daemon.url)
    await tampered.get(flowPath("shop"))
    const [name, value] = [...tampered.cookies].find(([cookie]) => cookie.startsWith("cg_verify_"))!
    tampered.cookies.set(name, `${value.slice(0, 10)}${value[10] === "A" ? "B" : "A"}${value.slice(11)}`)
    expect((await tampered.post("start", { email: "mallory@ox.ac.uk" })).status).toBe(403)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(smtp.received.length).toBe(before)
  })
})

describe("the hosted flow under load and failure (settings reloaded)", () => {
  const reloads = () => daemon.lines.filter((line) => line.msg === "config reloaded").length
  const reloadWith = async (values: ReadonlyArray<readonly [ReadonlyArray<string>, unknown]>) => {
    const seen = reloads()
    setSettings(dirs, values)
    await waitForLine(daemon, () => reloads() > seen, 20_000)
  }

  it("service unavailable: when no message can even be queued, a 503 page with Retry-After", async () => {
    await smtp.close()
    await reloadWith([[["verification", "mail", "maxQueued"], 1]])
    const first = new FlowClient(daemon.url)
    await first.get(flowPath("shop"))
    expect(headingOf((await first.submit("start", { email: "kurt@ox.ac.uk" })).body)).toBe("Enter your code")
    const second = new FlowClient(daemon.url)
    await second.get(flowPath("shop"))
    const refused = await second.post("start", { email: "alonzo@ox.ac.uk" })
    expect(refused.status).toBe(503)
    expect(refused.headers.get("retry-after")).toBe("30")
    expect(noticeOf(refused.body)).toContain("not available right now")
  }, 30_000)

  it("too many submissions from one client address: 429 with Retry-After", async () => {
    await reloadWith([[["rateLimits", "hostedFlow"], { requests: 2, windowSeconds: 60 }]])
    const client = new FlowClient(daemon.url)
    await client.get(flowPath("shop"))
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await client.post("start", { email: "" }))
    expect(answers.map((answer) => answer.status)).toEqual([303, 303, 429])
    expect(Number(answers[2]!.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(noticeOf(answers[2]!.body)).toMatch(/Too many attempts from your connection\. Try again in \d+ seconds\./)
  }, 30_000)
})
