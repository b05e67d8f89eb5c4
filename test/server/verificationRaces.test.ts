/**
 * Proof of ownership's limits as an attacker tries them: 50 requests sent
 * at once, against the real daemon — one on files, and two sharing one
 * Redis, the requests dealt out between them. Exactly the limit passes,
 * as when the requests come one after another: the per-address message
 * budget of an offer, the deployment's mailbox cap across teams, and an
 * offer's redemption limit. Codes are read from each daemon's outbox.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { readOutbox } from "../../src/verification/outbox.ts"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon } from "./daemon.ts"

const offer = (id: string, team: string, verification: Record<string, unknown>) =>
  `${JSON.stringify({ id, team, name: id, targetGroups: ["universities"], status: "active", verification })}\n`

interface Deployment {
  readonly daemons: ReadonlyArray<Daemon>
  readonly acme: string
  readonly globex: string
}

/** Daemons on copies of one config (the shipped one, with the offers the races need), started at once. */
const deploy = async (count: number, store?: Record<string, unknown>): Promise<Deployment> => {
  const base = copyConfig()
  setSettings(base, [
    [["rateLimits", "verifications", "requests"], 100_000],
    ...(store === undefined ? [] : [[["store"], store] as const])
  ])
  const offers = join(base.configDir, "offers")
  writeFileSync(join(offers, "race-default.yaml"), offer("race-default", "acme", {}))
  writeFileSync(join(offers, "race-open.yaml"), offer("race-open", "acme", { maxMessagesPerAddress: 1000 }))
  writeFileSync(join(offers, "race-globex.yaml"), offer("race-globex", "globex", { maxMessagesPerAddress: 1000 }))
  writeFileSync(join(offers, "race-globex-default.yaml"), offer("race-globex-default", "globex", {}))
  writeFileSync(
    join(offers, "race-once.yaml"),
    offer("race-once", "acme", { maxVerificationsPerAddress: 1, maxMessagesPerAddress: 1000 })
  )
  const acme = makeKey(base, "acme", allScopes)
  const globex = makeKey(base, "globex", allScopes)
  // Each daemon a data directory of its own (its outbox); they share the store.
  const dirs = Array.from({ length: count }, (_, i) => ({ ...base, dataDir: `${base.dataDir}-${i}` }))
  return { daemons: await Promise.all(dirs.map((dir) => startDaemon(dir))), acme, globex }
}

/** The code of a verification's message, from whichever daemon's outbox holds it. */
const codeOf = async (daemons: ReadonlyArray<Daemon>, id: string): Promise<string> => {
  const deadline = Date.now() + 20_000
  for (;;) {
    for (const daemon of daemons) {
      const [message] = await readOutbox(join(daemon.dataDir, "outbox"), 1, id)
      const code = message === undefined ? undefined : /^\s*(\d{6,10})\s*$/m.exec(message.text)?.[1]
      if (code !== undefined) return code
    }
    if (Date.now() > deadline) throw new Error(`no message for ${id}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** How many answers had each status. */
const statuses = (answers: ReadonlyArray<{ status: number }>) => {
  const counts: Record<number, number> = {}
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1
  return counts
}

const races = (deployment: () => Deployment) => {
  const at = (i: number) => deployment().daemons[i % deployment().daemons.length]!
  const start = (i: number, key: string, email: string, offerId: string) =>
    call(at(i), "POST", "/api/v1/verifications", { key, body: { email, offerId } })
  const atOnce = <A>(count: number, one: (i: number) => Promise<A>) =>
    Promise.all(Array.from({ length: count }, (_, i) => one(i)))

  it("50 starts at once for one address: the offer's 5 messages an hour, the rest 429 TOO_MANY_MESSAGES", async () => {
    const { acme } = deployment()
    const answers = await atOnce(50, (i) => start(i, acme, `bomb+${i}@ox.ac.uk`, "race-default"))
    expect(statuses(answers)).toEqual({ 201: 5, 429: 45 })
    const refused = answers.find((answer) => answer.status === 429)!
    expect(refused.body.code).toBe("TOO_MANY_MESSAGES")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500)
  })

  it("50 starts at once across two teams' offers: the mailbox cap of 10, saying nothing of the other team", async () => {
    const { acme, globex } = deployment()
    const answers = await atOnce(50, (i) =>
      start(i, i % 2 === 0 ? acme : globex, "mailbox@ox.ac.uk", i % 2 === 0 ? "race-open" : "race-globex")
    )
    expect(statuses(answers)).toEqual({ 201: 10, 429: 40 })
    const refused = answers.find((answer) => answer.status === 429)!
    expect(refused.headers.get("retry-after")).toBe("3600")
    expect(refused.body.detail).not.toMatch(/acme|globex|\b10\b/)
  })

  it("an offer's own budget is its team's: acme's five messages leave globex's offer its own", async () => {
    const { acme, globex } = deployment()
    for (let i = 0; i < 5; i++) expect((await start(i, acme, "shared@ox.ac.uk", "race-default")).status).toBe(201)
    expect((await start(5, acme, "shared@ox.ac.uk", "race-default")).status).toBe(429)
    expect((await start(6, globex, "shared@ox.ac.uk", "race-globex-default")).status).toBe(201)
  })

  it("50 wrong codes at once against one verification: each answer counted, no more than its 5 attempts", async () => {
    const { acme } = deployment()
    const started = await start(0, acme, "guess@ox.ac.uk", "race-default")
    expect(started.status).toBe(201)
    const answers = await atOnce(50, (i) =>
      call(at(i), "POST", `/api/v1/verifications/${started.body.id}/confirm`, {
        key: acme,
        body: { code: String(i).padStart(6, "0").replace(/^0/, "9") }
      })
    )
    const wrong = answers.filter((answer) => answer.body.code === "INVALID_CODE")
    // Every "wrong code" answer is an attempt counted: each says a different number left.
    expect(new Set(wrong.map((answer) => answer.body.attemptsRemaining)).size).toBe(wrong.length)
    expect(wrong.length).toBeLessThanOrEqual(4)
    const view = await call(at(0), "GET", `/api/v1/verifications/${started.body.id}`, { key: acme })
    expect(view.body).toMatchObject({ status: "failed", failureReason: "TOO_MANY_ATTEMPTS", attempts: { made: 5 } })
  })

  it("50 confirmations at once, with the right codes, of one person's 10 verifications: one redemption", async () => {
    const { acme, daemons } = deployment()
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const answer = await start(i, acme, `jane+${i}@ox.ac.uk`, "race-once")
      expect(answer.status, JSON.stringify(answer.body)).toBe(201)
      ids.push(answer.body.id)
    }
    const codes = await Promise.all(ids.map((id) => codeOf(daemons, id)))
    const answers = await atOnce(50, (i) =>
      call(at(i), "POST", `/api/v1/verifications/${ids[i % 10]}/confirm`, { key: acme, body: { code: codes[i % 10] } })
    )
    const verified = answers.filter((answer) => answer.status === 200 && answer.body.status === "verified")
    expect(new Set(verified.map((answer) => answer.body.id)).size).toBe(1)
    const views = await Promise.all(
      ids.map((id, i) => call(at(i), "GET", `/api/v1/verifications/${id}`, { key: acme }))
    )
    expect(views.map((view) => view.body.status).sort()).toEqual([...Array(9).fill("failed"), "verified"])
    expect(views.filter((view) => view.body.failureReason === "REDEMPTION_LIMIT_REACHED")).toHaveLength(9)
  })
}

describe("proof of ownership's limits under concurrent requests: one daemon on files", () => {
  let deployment: Deployment
  beforeAll(async () => {
    deployment = await deploy(1)
  }, 60_000)
  afterAll(async () => {
    await Promise.all(deployment?.daemons.map((daemon) => daemon.stop()) ?? [])
  })
  races(() => deployment)
})

describeRedis("proof of ownership's limits under concurrent requests: two daemons on one Redis", () => {
  let deployment: Deployment
  const prefix = testPrefix()
  beforeAll(async () => {
    deployment = await deploy(2, { kind: "redis", url: testRedisUrl, keyPrefix: prefix })
  }, 60_000)
  afterAll(async () => {
    await Promise.all(deployment?.daemons.map((daemon) => daemon.stop()) ?? [])
    // Building the test layer and releasing it deletes the run's keys.
    await Effect.runPromise(Effect.scoped(Layer.build(testRedisLayer(prefix))))
  })
  races(() => deployment)
})
