/**
 * The hosted page's funnel in the offer's status, from real flows: the
 * daemon on loopback, mail over a loopback SMTP server, browsers without
 * JavaScript (`FlowClient`). A flow counts once however often its page is
 * loaded, each flow is followed to where it stopped, a flow by target
 * group counts for no offer, and the counts survive a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Daemon, makeKey, startDaemon } from "./daemon.ts"
import { FlowClient, headingOf, hostedConfig, SHOP } from "./hostedFlowClient.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

let daemon: Daemon
let smtp: TestSmtp
let dirs: { configDir: string; dataDir: string }
let key: string

beforeAll(async () => {
  const certificate = await makeCertificate()
  smtp = await startSmtp(certificate)
  dirs = hostedConfig(smtp, certificate.cert)
  key = makeKey(dirs, "acme", ["offers:read"])
  daemon = await startDaemon(dirs)
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await smtp?.close()
})

const PATH = `/verify/shop?redirect_uri=${encodeURIComponent(`${SHOP}/back`)}&state=funnel`

/** A new browser's flow: its first page, then the address `email` if given; the message sent to it. */
const openFlow = async (email?: string) => {
  const client = new FlowClient(daemon.url)
  expect((await client.get(PATH)).status).toBe(200)
  if (email === undefined) return { client, mail: undefined }
  const before = smtp.received.length
  const code = await client.submit("start", { email })
  expect(headingOf(code.body)).toBe("Enter your code")
  return { client, mail: (await smtp.waitFor(before + 1))[before]! }
}

const usageOf = async (offerId: string) => {
  const status = await call(daemon, "GET", `/api/v1/offers/${offerId}/status?days=1`, { key })
  expect(status.status).toBe(200)
  return status.body.usage
}

describe("the hosted page's funnel in the offer's status", () => {
  it("counts each flow once, how far it got, ineligible addresses; none by target group; kept across a restart", async () => {
    const before = await usageOf("shop")
    expect(before.hostedFlow).toEqual({
      started: 0,
      reachedCodeStep: 0,
      completed: 0,
      ineligibleSubmissions: 0,
      abandonedAtEmailStep: 0,
      abandonedAtCodeStep: 0
    })

    // Completed: loaded twice (a reload is the same flow), an ineligible address first, then the code.
    const done = new FlowClient(daemon.url)
    await done.get(PATH)
    await done.get(PATH)
    const refused = await done.submit("start", { email: "someone@mailinator.com" })
    expect(refused.status).toBe(200)
    const sent = smtp.received.length
    expect(headingOf((await done.submit("start", { email: "ada@ox.ac.uk" })).body)).toBe("Enter your code")
    const mail = (await smtp.waitFor(sent + 1))[sent]!
    const back = await done.post("confirm", { code: codeOf(mail) })
    expect(back.status).toBe(303)
    expect(back.location).toMatch(/^https:\/\/shop\.example\/back\?/)

    // Left at the email step; left at the code step (its page shown again: still one flow).
    await openFlow()
    const waiting = await openFlow("grace@ox.ac.uk")
    await waiting.client.get(PATH)

    // By target group: no offer's flow, whatever it reaches.
    const byGroup = new FlowClient(daemon.url)
    await byGroup.get("/verify?targetGroupId=universities")
    const groupSent = smtp.received.length
    expect(headingOf((await byGroup.submit("start", { email: "emmy@ox.ac.uk" })).body)).toBe("Enter your code")
    await smtp.waitFor(groupSent + 1)

    const expected = {
      started: 3,
      reachedCodeStep: 2,
      completed: 1,
      ineligibleSubmissions: 1,
      abandonedAtEmailStep: 1,
      abandonedAtCodeStep: 1
    }
    const usage = await usageOf("shop")
    expect(usage.hostedFlow).toEqual(expected)
    expect(usage.verifications).toMatchObject({ started: 2, verified: 1 })
    const today = new Date().toISOString().slice(0, 10)
    expect(usage.daily).toEqual([
      expect.objectContaining({
        date: today,
        hostedFlow: { started: 3, reachedCodeStep: 2, completed: 1, ineligibleSubmissions: 1 }
      })
    ])

    await daemon.stop()
    daemon = await startDaemon(dirs)
    expect((await usageOf("shop")).hostedFlow).toEqual(expected)
  }, 60_000)
})
