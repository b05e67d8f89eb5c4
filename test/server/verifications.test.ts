/**
 * Proof of ownership end to end: the real daemon on loopback sending
 * through a real SMTP server on loopback (STARTTLS with a self-signed
 * certificate the daemon is told to trust), a webhook receiver, and the
 * CLI's key rotation. Expiry uses an offer whose codes live one second
 * (the app tests step through lifetimes with TestClock instead).
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { verifyCallback } from "../../src/webhooks/signature.ts"
import { call, copyConfig, type Daemon, freePort, makeKey, setSettings, startDaemon } from "./daemon.ts"
import {
  codeOf,
  linkOf,
  makeCertificate,
  type ReceivedMail,
  startSmtp,
  type TestCertificate,
  type TestSmtp
} from "./smtpServer.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const webhookSecret = "whsec-verifications"

let daemon: Daemon
let smtp: TestSmtp
let certificate: TestCertificate
let acme: string
let globex: string
let readOnly: string
let dirs: { configDir: string; dataDir: string }
const notices: Array<{ body: string; signature: string | undefined }> = []
const webhook = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    notices.push({
      body: Buffer.concat(chunks).toString("utf8"),
      signature: request.headers["campusgate-signature"] as string
    })
    response.writeHead(204).end()
  })
})

const offer = (id: string, verification: string) =>
  `id: ${id}\nteam: acme\nname: ${id}\ntargetGroups: [universities]\nstatus: active\nverification:\n${verification}`

beforeAll(async () => {
  certificate = await makeCertificate()
  smtp = await startSmtp(certificate)
  webhook.listen(0, "127.0.0.1")
  await new Promise((resolve) => webhook.once("listening", resolve))
  dirs = copyConfig()
  writeFileSync(join(dirs.configDir, "smtp-ca.pem"), certificate.cert)
  setSettings(dirs, [
    [
      ["verification", "mail"],
      {
        from: "Acme <offers@acme.example>",
        smtp: { host: "127.0.0.1", port: smtp.port, security: "starttls", ca: "smtp-ca.pem" }
      }
    ],
    [["verification", "redirectOrigins"], ["https://shop.example"]],
    [["verification", "webhookUrl"], `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hooks`],
    // The webhook receiver listens on loopback, which notices reach only when allowed.
    [["jobs", "callbacks", "allowHosts"], ["127.0.0.1"]]
  ])
  writeFileSync(join(dirs.configDir, "offers", "quick.yaml"), offer("quick", '  lifetime: "1 second"\n'))
  writeFileSync(join(dirs.configDir, "offers", "once.yaml"), offer("once", "  maxVerificationsPerAddress: 1\n"))
  acme = makeKey(dirs, "acme", allScopes)
  globex = makeKey(dirs, "globex", allScopes)
  readOnly = makeKey(dirs, "acme", ["verifications:read"])
  daemon = await startDaemon(dirs, { CAMPUSGATE_WEBHOOK_SECRET: webhookSecret })
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await smtp?.close()
  webhook.close()
})

const start = (body: Record<string, unknown>, key = acme) =>
  call(daemon, "POST", "/api/v1/verifications", { key, body })
/** Starts a verification and answers it with the message it sent. */
const startAndReceive = async (body: Record<string, unknown>) => {
  const before = smtp.received.length
  const started = await start(body)
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  const mail = (await smtp.waitFor(before + 1))[before]!
  return { id: started.body.id as string, mail }
}
const confirm = (id: string, code: string, key = acme) =>
  call(daemon, "POST", `/api/v1/verifications/${id}/confirm`, { key, body: { code } })

describe("verifications over HTTP and SMTP", () => {
  it("code: the message arrives over STARTTLS; the code verifies; the token checks out against the JWKS", async () => {
    const { id, mail } = await startAndReceive({ email: "Jane+shop@ox.ac.uk", offerId: "acme-student-discount" })
    expect(mail).toMatchObject({
      to: "Jane+shop@ox.ac.uk",
      secure: true,
      subject: expect.stringContaining("Acme student discount")
    })
    expect(mail.text).toContain("University of Oxford")
    const verified = await confirm(id, codeOf(mail))
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ status: "verified", messages: { sent: 1, delivery: "sent" } })
    const claims = await verifyEligibilityToken(verified.body.eligibility.token, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: "acme-student-discount"
    })
    expect(claims).toMatchObject({ jti: id, institution: { country: "GB" }, method: "code" })
    const read = await call(daemon, "GET", `/api/v1/verifications/${id}`, { key: readOnly })
    expect(read.body).toMatchObject({ status: "verified", email: "***@ox.ac.uk" })
    // A returning student is found by any spelling of the address.
    const lookup = await call(
      daemon,
      "GET",
      `/api/v1/verifications?email=${encodeURIComponent("JANE@ox.ac.uk")}&offerId=acme-student-discount`,
      { key: readOnly }
    )
    expect(lookup.body.current).toMatchObject({ id, status: "verified" })
    // Another team does not see it; a read-only key cannot start one.
    expect((await call(daemon, "GET", `/api/v1/verifications/${id}`, { key: globex })).status).toBe(404)
    expect((await start({ email: "x@ox.ac.uk", offerId: "acme-student-discount" }, readOnly)).status).toBe(403)
  })

  it("link: opening it verifies and redirects to the allowed origin with the token; the page answers without one", async () => {
    const refused = await start({
      email: "max@ox.ac.uk",
      offerId: "acme-student-discount",
      method: "link",
      redirectUrl: "https://evil.example/"
    })
    expect(refused.status).toBe(400)
    expect(refused.body.errors[0]).toMatchObject({ field: "/redirectUrl", code: "ORIGIN_NOT_ALLOWED" })
    const { id, mail } = await startAndReceive({
      email: "max@ox.ac.uk",
      offerId: "acme-student-discount",
      method: "link",
      locale: "fr",
      redirectUrl: "https://shop.example/student?from=mail"
    })
    expect(mail.subject).toContain("Confirmez")
    const link = linkOf(mail)
    expect(link.startsWith(`${daemon.url}/v/`)).toBe(true)
    const opened = await fetch(link, { redirect: "manual" })
    expect(opened.status).toBe(303)
    expect(opened.headers.get("referrer-policy")).toBe("no-referrer")
    const target = new URL(opened.headers.get("location")!)
    expect(target.origin).toBe("https://shop.example")
    expect(target.searchParams.get("from")).toBe("mail")
    expect(target.searchParams.get("status")).toBe("verified")
    expect(target.searchParams.get("verificationId")).toBe(id)
    await verifyEligibilityToken(target.searchParams.get("token")!, {
      jwksUrl: `${daemon.url}/.well-known/jwks.json`,
      offerId: "acme-student-discount"
    })
    const forged = await fetch(`${link.slice(0, -2)}xx`)
    expect(forged.status).toBe(410)
    expect(await forged.text()).toContain("<html")
    expect(daemon.lines.some((line) => String(line.path ?? "").includes("ver_"))).toBe(false)
  })

  it("wrong codes: 400 with attemptsRemaining, then TOO_MANY_ATTEMPTS; resend too soon is 429 with Retry-After", async () => {
    const { id, mail } = await startAndReceive({ email: "ann@ox.ac.uk", offerId: "acme-student-discount" })
    const resend = await call(daemon, "POST", `/api/v1/verifications/${id}/resend`, { key: acme })
    expect(resend.status).toBe(429)
    expect(resend.body.code).toBe("RESEND_TOO_SOON")
    expect(Number(resend.headers.get("retry-after"))).toBeGreaterThan(0)
    const wrong = codeOf(mail) === "000000" ? "111111" : "000000"
    for (let remaining = 4; remaining >= 1; remaining--) {
      const answer = await confirm(id, wrong)
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ code: "INVALID_CODE", attemptsRemaining: remaining })
      expect(JSON.stringify(answer.body)).not.toContain(codeOf(mail))
    }
    expect((await confirm(id, wrong)).body).toMatchObject({ code: "TOO_MANY_ATTEMPTS", attemptsRemaining: 0 })
    expect((await confirm(id, codeOf(mail))).body.code).toBe("TOO_MANY_ATTEMPTS")
    expect((await call(daemon, "GET", `/api/v1/verifications/${id}`, { key: acme })).body.status).toBe("failed")
  })

  it("expiry: a code past its lifetime is 410 VERIFICATION_EXPIRED", async () => {
    const { id, mail } = await startAndReceive({ email: "eve@ox.ac.uk", offerId: "quick" })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const late = await confirm(id, codeOf(mail))
    expect(late.status).toBe(410)
    expect(late.body.code).toBe("VERIFICATION_EXPIRED")
  })

  it("an ineligible address gets the failed result and is sent nothing; a malformed one is 400", async () => {
    const before = smtp.received.length
    const answer = await start({ email: "bob@gmail.com", offerId: "acme-student-discount" })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ isValid: false, reasonCode: expect.any(String) })
    expect((await start({ email: "not-an-email", offerId: "acme-student-discount" })).body.code).toBe(
      "INVALID_EMAIL_FORMAT"
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(smtp.received.length).toBe(before)
  })

  it("redemption limit: one verification per person across +tag and case variants; an operator resets it", async () => {
    const { id, mail } = await startAndReceive({ email: "kim@ox.ac.uk", offerId: "once" })
    expect((await confirm(id, codeOf(mail))).status).toBe(200)
    for (const email of ["Kim+again@ox.ac.uk", "KIM@OX.AC.UK"]) {
      const again = await start({ email, offerId: "once" })
      expect(again.status).toBe(409)
      expect(again.body.code).toBe("REDEMPTION_LIMIT_REACHED")
    }
    const reset = await call(daemon, "POST", "/api/v1/verifications/reset-limit", {
      key: acme,
      body: { email: "kim+x@ox.ac.uk", offerId: "once" }
    })
    expect(reset.body).toEqual({ reset: 1 })
    await startAndReceive({ email: "kim+again@ox.ac.uk", offerId: "once" })
  })

  it("posts signed webhook notices for verified, failed and expired verifications", async () => {
    const deadline = Date.now() + 10_000
    const events = () => notices.map((notice) => JSON.parse(notice.body).type as string)
    while (
      !["verification.verified", "verification.failed", "verification.expired"].every((event) =>
        events().includes(event)
      )
    ) {
      if (Date.now() > deadline) throw new Error(`notices so far: ${events().join(", ")}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    for (const notice of notices) {
      expect(
        verifyCallback(webhookSecret, notice.signature, notice.body, { toleranceSeconds: 300, now: Date.now() })
      ).toBe(true)
      expect(notice.body).not.toMatch(/@/)
    }
  })

  it("a token signed before `campusgate keys rotate-signing` still verifies with the published keys", async () => {
    const { id, mail } = await startAndReceive({ email: "lee@ox.ac.uk", offerId: "acme-student-discount" })
    const before = (await confirm(id, codeOf(mail))).body.eligibility.token as string
    execFileSync(process.execPath, [main, "keys", "rotate-signing", "--config", dirs.configDir, "--data", dirs.dataDir])
    const second = await startAndReceive({ email: "lou@ox.ac.uk", offerId: "acme-student-discount" })
    const after = (await confirm(second.id, codeOf(second.mail))).body.eligibility.token as string
    const kid = (token: string) => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid
    expect(kid(after)).not.toBe(kid(before))
    const jwks = (await call(daemon, "GET", "/.well-known/jwks.json")).body
    expect(jwks.keys.map((key: { kid: string }) => key.kid)).toEqual(expect.arrayContaining([kid(before), kid(after)]))
    for (const token of [before, after]) await verifyEligibilityToken(token, { jwks, offerId: "acme-student-discount" })
  })
})

describe("sends that fail", () => {
  it("SMTP down then up: the start is accepted, the message is retried with backoff and arrives", async () => {
    await smtp.close()
    const started = await start({ email: "sam@ox.ac.uk", offerId: "acme-student-discount" })
    expect(started.status).toBe(201)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const pending = await call(daemon, "GET", `/api/v1/verifications/${started.body.id}`, { key: acme })
    expect(pending.body).toMatchObject({ status: "pending", messages: { delivery: "queued", sent: 0 } })
    const count = smtp.received.length
    smtp = await startSmtp(certificate, { port: smtp.port, received: smtp.received })
    const mail = (await smtp.waitFor(count + 1))[count]!
    expect((await confirm(started.body.id, codeOf(mail))).status).toBe(200)
  }, 30_000)

  it("a restart resumes pending sends: a message queued when the daemon stopped arrives after it starts again", async () => {
    await smtp.close()
    const started = await start({ email: "ray@ox.ac.uk", offerId: "acme-student-discount" })
    expect(started.status).toBe(201)
    expect(await daemon.stop()).toBe(0)
    const count = smtp.received.length
    smtp = await startSmtp(certificate, { port: smtp.port, received: smtp.received })
    daemon = await startDaemon(dirs, { CAMPUSGATE_WEBHOOK_SECRET: webhookSecret }, { port: await freePort() })
    const mail: ReceivedMail = (await smtp.waitFor(count + 1))[count]!
    expect((await confirm(started.body.id, codeOf(mail))).status).toBe(200)
  }, 60_000)
})
