/**
 * The hosted verification flow across daemons: two daemons on one Redis
 * (the test server, a key prefix of the test's own), the flow begun on one
 * and finished on the other, as a load balancer may send its requests. No
 * daemon keeps the flow in memory: the signed cookie and the record in
 * Redis are all there is. The offer's funnel adds up what each daemon
 * counted of the flow.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { deleteKeys, describeRedis, testRedisUrl } from "../redisTesting.ts"
import { call, type Daemon, makeKey, setSettings, startDaemon } from "./daemon.ts"
import { FlowClient, headingOf, hostedConfig, noticeOf, SHOP } from "./hostedFlowClient.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

describeRedis("the hosted flow on two daemons sharing Redis", () => {
  const prefix = `cghosted:${randomBytes(6).toString("hex")}:`
  let smtp: TestSmtp
  const daemons: Array<Daemon> = []
  let key: string

  beforeAll(async () => {
    const certificate = await makeCertificate()
    smtp = await startSmtp(certificate)
    const dirs = hostedConfig(smtp, certificate.cert)
    setSettings(dirs, [
      [["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }],
      [["statistics", "flushIntervalMs"], 200]
    ])
    key = makeKey(dirs, "acme", ["offers:read"])
    // One first, so the secrets it makes in Redis are the ones the second finds.
    daemons.push(await startDaemon(dirs))
    daemons.push(await startDaemon(dirs))
  }, 90_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
    await smtp?.close()
    await Effect.runPromise(
      deleteKeys(prefix).pipe(Effect.provide(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })))
    )
  })

  it("started on one daemon, the code form, a wrong code and the success all come from the other; the funnel adds up", async () => {
    const [first, second] = daemons as [Daemon, Daemon]
    const path = `/verify/shop?redirect_uri=${encodeURIComponent(`${SHOP}/back`)}&state=across`
    const onFirst = new FlowClient(first.url)
    await onFirst.get(path)
    const before = smtp.received.length
    await onFirst.post("start", { email: "hedy@ox.ac.uk" })
    const mail = (await smtp.waitFor(before + 1))[before]!
    // The same browser (its cookie jar), now answered by the other daemon.
    const onSecond = new FlowClient(second.url)
    for (const [name, value] of onFirst.cookies) onSecond.cookies.set(name, value)
    const code = await onSecond.get(path)
    expect(headingOf(code.body)).toBe("Enter your code")
    expect(code.body).toContain("***@ox.ac.uk")
    const wrong = await onSecond.submit("confirm", { code: "000000" })
    expect(noticeOf(wrong.body)).toContain("Attempts left: 4")
    const done = await onSecond.post("confirm", { code: codeOf(mail) })
    expect(done.status).toBe(303)
    const back = new URL(done.location!)
    expect(back.searchParams.get("state")).toBe("across")
    expect(back.searchParams.get("token")).toMatch(/^eyJ/)

    // Started and taken to the code step on the first daemon, completed on the second: one flow, from either.
    for (const daemon of daemons) {
      await expect
        .poll(async () => (await call(daemon, "GET", "/api/v1/offers/shop/status", { key })).body.usage?.hostedFlow, {
          timeout: 5000
        })
        .toEqual({
          started: 1,
          reachedCodeStep: 1,
          completed: 1,
          ineligibleSubmissions: 0,
          abandonedAtEmailStep: 0,
          abandonedAtCodeStep: 0
        })
    }
  }, 30_000)
})
