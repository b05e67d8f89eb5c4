/**
 * `Idempotency-Key` on the POSTs that create or send, against the real
 * daemon: a retry of the same request gets the first answer again, marked
 * `Idempotent-Replayed: true`, and nothing is created or sent twice; the
 * key with another request is a 409; a refused request keeps nothing; keys
 * are per team; answers outlive a restart on files and reach another
 * daemon on Redis.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, sharedDaemon, startDaemon } from "./daemon.ts"

let acme: string
let globex: string
let dirs: { configDir: string; dataDir: string }

let daemon = sharedDaemon((copied) => {
  dirs = copied
  setSettings(dirs, [[["rateLimits", "bulk", "requests"], 1000]])
  acme = makeKey(dirs, "acme", allScopes)
  globex = makeKey(dirs, "globex", allScopes)
})

const post = (path: string, body: unknown, key: string, idempotencyKey?: string, target = daemon) =>
  call(target, "POST", `/api/v1${path}`, {
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
  })

const outbox = () => {
  try {
    return readdirSync(join(dirs.dataDir, "outbox")).filter((name) => name.endsWith(".eml")).length
  } catch {
    return 0
  }
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 300))

/** Waits until the outbox holds `count` messages (the mail thread writes them, started with the first). */
const outboxHolds = async (count: number) => {
  const deadline = Date.now() + 10_000
  while (outbox() !== count) {
    if (Date.now() > deadline) throw new Error(`the outbox holds ${outbox()} messages, not ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("Idempotency-Key", () => {
  it("starts one verification and sends one message for a start sent twice, answering the first answer again", async () => {
    const body = { email: "retry@ox.ac.uk", offerId: "acme-student-discount" }
    const first = await post("/verifications", body, acme, "start-1")
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    await outboxHolds(1)
    const again = await post("/verifications", body, acme, "start-1")
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    await settled()
    expect(outbox()).toBe(1)
    // Without a key, a second start is a second verification.
    expect((await post("/verifications", body, acme)).body.id).not.toBe(first.body.id)
  })

  it("refuses the key with another request (409), and keeps nothing of a refused one", async () => {
    const body = { email: "other@ox.ac.uk", offerId: "acme-student-discount" }
    expect((await post("/verifications", body, acme, "start-2")).status).toBe(201)
    const reused = await post("/verifications", { ...body, email: "someone@ox.ac.uk" }, acme, "start-2")
    expect(reused).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect(reused.body.detail).toMatch(/another request/)
    // A request refused (no such offer) can be corrected and sent again with its key.
    const refused = await post("/verifications", { ...body, offerId: "no-such-offer" }, acme, "start-3")
    expect(refused.status).toBe(404)
    const corrected = await post("/verifications", body, acme, "start-3")
    expect(corrected.status).toBe(201)
  })

  it("creates an offer and a target group once: the retry gets the 201 again, not a 409 for the id", async () => {
    const offer = { id: "idem-offer", name: "Idempotent", targetGroups: ["universities"], status: "active" }
    const created = await post("/offers", offer, acme, "offer-1")
    expect(created.status).toBe(201)
    const again = await post("/offers", offer, acme, "offer-1")
    expect(again).toMatchObject({ status: 201, body: created.body })
    expect(again.headers.get("location")).toBe(created.headers.get("location"))
    expect(again.headers.get("etag")).toBe(created.headers.get("etag"))
    expect((await post("/offers", offer, acme)).status).toBe(409)
    const group = { id: "idem-group", name: "Idempotent", criteria: { domains: { allow: ["idem.edu"] } } }
    expect((await post("/target-groups", group, acme, "group-1")).status).toBe(201)
    const groupAgain = await post("/target-groups", group, acme, "group-1")
    expect(groupAgain.status).toBe(201)
    expect(groupAgain.headers.get("idempotent-replayed")).toBe("true")
  })

  it("replays a batch of offer validations and a resend", async () => {
    const batch = { requests: [{ offerId: "acme-student-discount", email: "jane@ox.ac.uk" }] }
    const first = await post("/offers/bulk-process", batch, acme, "batch-1")
    expect(first.status).toBe(200)
    const again = await post("/offers/bulk-process", batch, acme, "batch-1")
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body.results).toEqual(first.body.results)
    const started = await post("/verifications", { email: "resend@ox.ac.uk", offerId: "acme-student-discount" }, acme)
    // Too soon for a resend: refused, so nothing is kept and the key may be used once it is allowed.
    const early = await post(`/verifications/${started.body.id}/resend`, undefined, acme, "resend-1")
    expect(early.status).toBe(429)
    expect(early.headers.get("idempotent-replayed")).toBeNull()
  })

  it("keeps each team's keys apart", async () => {
    const body = { email: "kim@ox.ac.uk", targetGroupId: "uk-students" }
    const acmes = await post("/verifications", body, acme, "shared-name")
    const globexs = await post("/verifications", body, globex, "shared-name")
    expect(acmes.status).toBe(201)
    expect(globexs.status).toBe(201)
    expect(globexs.headers.get("idempotent-replayed")).toBeNull()
    expect(globexs.body.id).not.toBe(acmes.body.id)
  })

  it("of ten starts with one key at once, makes one verification: the others replay it or are told it runs", async () => {
    const body = { email: "burst@ox.ac.uk", offerId: "acme-student-discount" }
    const answers = await Promise.all(Array.from({ length: 10 }, () => post("/verifications", body, acme, "burst-1")))
    const ids = new Set(answers.filter((answer) => answer.status === 201).map((answer) => answer.body.id))
    expect(ids.size).toBe(1)
    for (const answer of answers) expect([201, 409]).toContain(answer.status)
  })

  it("answers a retry after a restart with the answer kept in the data directory", async () => {
    const body = { email: "restart@ox.ac.uk", offerId: "acme-student-discount" }
    const first = await post("/verifications", body, acme, "restart-1")
    await daemon.stop()
    daemon = await startDaemon(dirs)
    const again = await post("/verifications", body, acme, "restart-1")
    expect(again).toMatchObject({ status: 201, body: { id: first.body.id } })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
  }, 30_000)
})

describeRedis("Idempotency-Key across two daemons on one Redis", () => {
  const daemons: Array<Daemon> = []
  let key = ""
  const prefix = testPrefix()
  beforeAll(async () => {
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }]])
    key = makeKey(base, "acme", allScopes)
    for (const i of [0, 1]) daemons.push(await startDaemon({ ...base, dataDir: `${base.dataDir}-${i}` }))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(daemons.map((one) => one.stop()))
    await Effect.runPromise(Effect.scoped(Layer.build(testRedisLayer(prefix))))
  })

  it("answers a retry sent to the other daemon with the first daemon's answer", async () => {
    const body = { email: "twodaemons@ox.ac.uk", offerId: "acme-student-discount" }
    const first = await post("/verifications", body, key, "across-1", daemons[0])
    expect(first.status).toBe(201)
    const again = await post("/verifications", body, key, "across-1", daemons[1])
    expect(again).toMatchObject({ status: 201, body: { id: first.body.id } })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
  })
})
