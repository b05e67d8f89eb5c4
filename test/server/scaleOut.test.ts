/**
 * Three daemons on one Redis, as behind a load balancer: each with its own
 * copy of the config directory and its own data directory (as on three
 * hosts without a shared volume: job bytes live in Redis) and a Redis
 * server of the test's own (started here, so it can be stopped and restarted mid-traffic). The
 * test talks to each daemon directly, playing the load balancer.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Keys } from "../../src/app/Keys.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import * as ApiKeyRedis from "../../src/keys/apiKeyRedis.ts"
import { estimate } from "../../src/stats/HyperLogLog.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../src/stats/UsageRecorder.ts"
import { Redis, redisStoreLayer } from "../../src/store/redis.ts"
import { secretKey } from "../../src/store/redisSecret.ts"
import { skippedForWantOfRedis } from "../redisTesting.ts"
import { eligible } from "../stats/fixtures.ts"
import {
  call,
  copyConfig,
  type Daemon,
  freePort,
  makeKey,
  setSettings,
  startDaemonsSharing,
  waitForLine,
  within
} from "./daemon.ts"

const redisInstalled = spawnSync("redis-server", ["--version"]).status === 0
const required = process.env.CAMPUSGATE_REQUIRE_REDIS === "1"
if (!redisInstalled && !required) {
  skippedForWantOfRedis("three daemons on one Redis", "redis-server is not installed (apt-get install redis-server)")
}
const suite = redisInstalled || required ? describe : describe.skip

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const prefix = "cgscale:"

/** A Redis server of the test's own, with the persistence docs/operations.md asks for. */
class RedisServer {
  process: ChildProcess | undefined
  readonly port: number
  readonly dir: string
  constructor(port: number, dir: string) {
    this.port = port
    this.dir = dir
  }
  get url() {
    return `redis://127.0.0.1:${this.port}`
  }
  async start() {
    const child = spawn(
      "redis-server",
      [
        ...["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir],
        ...["--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction"]
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    this.process = child
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("redis-server did not start")), 10_000)
      child.stdout!.on("data", (chunk) => {
        if (String(chunk).includes("Ready to accept connections")) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  }
  /** A clean stop (SIGTERM: Redis writes its append-only file out and exits). */
  async stop() {
    const child = this.process
    if (child === undefined || child.exitCode !== null) return
    child.kill("SIGTERM")
    await once(child, "exit")
  }
}

let redis: RedisServer
let daemons: Array<Daemon> = []
let key = ""
/** A key for the job: `key` spends its bulk budget in the first test. */
let jobKey = ""

const validate = (daemon: Daemon, email: string, targetGroupId = "uk-students", apiKey = key) =>
  call(daemon, "POST", "/api/v1/validate/target-group", { key: apiKey, body: { email, targetGroupId } })

const validateOffer = (daemon: Daemon, email: string, offerId: string) =>
  call(daemon, "POST", "/api/v1/validate/offer", { key, body: { email, offerId } })

const createGroup = (daemon: Daemon, id: string) =>
  call(daemon, "POST", "/api/v1/target-groups", {
    key,
    body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
  })

suite("three daemons on one Redis", () => {
  beforeAll(async () => {
    redis = new RedisServer(await freePort(), mkdtempSync(join(tmpdir(), "campusgate-redis-")))
    await redis.start()
    const base = copyConfig()
    setSettings(base, [
      [["store"], { kind: "redis", url: redis.url, keyPrefix: prefix }],
      [["jobs", "concurrency"], 1],
      [["statistics", "flushIntervalMs"], 200]
    ])
    key = makeKey(base, "acme", [
      "validate:target-groups",
      "validate:offers",
      "validate:bulk",
      "jobs:read",
      "offers:read",
      "offers:write",
      "target-groups:read",
      "target-groups:write"
    ])
    jobKey = makeKey(base, "acme", ["validate:bulk", "jobs:read"])
    daemons = await startDaemonsSharing(base, 3, { ownDataDirs: true })
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    await redis?.stop()
  })

  it("refuses the 11th bulk call in a minute whichever daemon receives it", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 11; i++) {
      const answer = await call(daemons[i % 3]!, "POST", "/api/v1/validate/bulk", {
        key,
        body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
      })
      statuses.push(answer.status)
      if (i === 10) expect(answer.headers.get("retry-after")).toMatch(/^\d+$/)
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429])
  })

  it("serves a target group created on one daemon from the others within a second", async () => {
    expect((await createGroup(daemons[0]!, "scale-group")).status).toBe(201)
    for (const other of [daemons[1]!, daemons[2]!]) {
      const took = await within(
        async () => (await validate(other, "ann@scale-group.samples.edu", "scale-group")).status === 200,
        1000
      )
      expect(took).toBeLessThan(1000)
    }
  })

  it("refuses a key revoked on one daemon on every daemon within a second", async () => {
    const created = await Effect.runPromise(
      Effect.scoped(
        ApiKeyStore.use((store) =>
          Keys.make(store).create({ team: "acme" as TeamId, scopes: ["validate:target-groups"] }, false)
        ).pipe(
          Effect.provide(ApiKeyRedis.layerRedis(daemons[0]!.configDir)),
          Effect.provide(redisStoreLayer({ url: redis.url, keyPrefix: prefix }))
        )
      )
    )
    for (const daemon of daemons) {
      await within(
        async () => (await validate(daemon, "jane@ox.ac.uk", "uk-students", created.key)).status === 200,
        1000
      )
    }
    const revoked = spawnSync(
      process.execPath,
      [main, "keys", "revoke", "--config", daemons[0]!.configDir, created.id],
      {
        encoding: "utf8"
      }
    )
    expect(revoked.status, revoked.stderr).toBe(0)
    for (const daemon of daemons) {
      const took = await within(
        async () => (await validate(daemon, "jane@ox.ac.uk", "uk-students", created.key)).status === 401,
        1000
      )
      expect(took).toBeLessThan(1000)
    }
  })

  it("takes a console session made on one daemon on the others (one console secret, kept in Redis)", async () => {
    const signedIn = await call(daemons[0]!, "POST", "/console/session", { body: { key } })
    expect(signedIn.status).toBe(200)
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!
    for (const daemon of daemons.slice(1)) {
      const offers = await call(daemon, "GET", "/api/v1/offers", { headers: { cookie } })
      expect(offers.status).toBe(200)
      const session = await call(daemon, "GET", "/console/session", { headers: { cookie } })
      expect(session.body.csrfToken).toBe(signedIn.body.csrfToken)
    }
  })

  it("ends a session signed out on one daemon on every daemon within a second", async () => {
    const signedIn = await call(daemons[0]!, "POST", "/console/session", { body: { key } })
    const headers = {
      cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!,
      "x-csrf-token": signedIn.body.csrfToken
    }
    for (const daemon of daemons) expect((await call(daemon, "GET", "/api/v1/offers", { headers })).status).toBe(200)
    expect((await call(daemons[1]!, "DELETE", "/console/session", { headers })).status).toBe(204)
    for (const daemon of daemons) {
      const took = await within(
        async () => (await call(daemon, "GET", "/api/v1/offers", { headers })).status === 401,
        1000
      )
      expect(took).toBeLessThan(1000)
      // The fast path's route too (a body of declared length).
      const change = await call(daemon, "POST", "/api/v1/validate/target-group", {
        headers,
        body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
      })
      expect(change.status).toBe(401)
    }
  })

  it("sums usage statistics across daemons without counting an email twice", async () => {
    const offerId = "acme-student-discount"
    const shared = Array.from({ length: 20 }, (_, i) => `shared${i}@mit.edu`)
    const own = (name: string) => Array.from({ length: 30 }, (_, i) => `${name}${i}@mit.edu`)
    const plan = [
      [daemons[0]!, [...own("a"), ...shared]],
      [daemons[1]!, [...own("b"), ...shared]],
      [daemons[2]!, shared]
    ] as const
    for (const [daemon, emails] of plan) {
      for (const email of emails) expect((await validateOffer(daemon, email, offerId)).status).toBe(200)
    }
    // Each daemon answers what is stored plus what it has not flushed yet; once all have flushed, all agree.
    await new Promise((resolve) => setTimeout(resolve, 600))
    const views = await Promise.all(
      daemons.map(async (daemon) => (await call(daemon, "GET", `/api/v1/offers/${offerId}/status`, { key })).body.usage)
    )
    expect(views.map((usage) => usage.validations)).toEqual([120, 120, 120])
    // 80 distinct addresses, each counted once: the same estimate one process gives for them, with the deployment's key.
    const secret = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(Redis, (client) => client.send<string>("GET", secretKey(prefix, "stats-hash-key"))).pipe(
          Effect.provide(redisStoreLayer({ url: redis.url, keyPrefix: prefix }))
        )
      )
    )
    const alone = new UsageRecorder(hashKeyFromSecret(secret))
    for (const [, emails] of plan) for (const email of emails) alone.record(offerId, email, eligible(email))
    const expected = estimate(alone.take().get(offerId)!.registers)
    expect(Math.abs(expected - 80)).toBeLessThanOrEqual(3)
    expect(views.map((usage) => usage.uniqueEmails.estimate)).toEqual([expected, expected, expected])
  })

  it("finishes a job whose daemon was killed mid-run on another, every input exactly once", async () => {
    const total = 300_000
    const emails = Array.from({ length: total }, (_, i) => `user${i}@school${i % 50}.edu`)
    const accepted = await call(daemons[0]!, "POST", "/api/v1/validate/bulk-async?targetGroupId=universities", {
      key: jobKey,
      rawBody: `${emails.map((email) => JSON.stringify(email)).join("\n")}\n`,
      headers: { "content-type": "application/x-ndjson" }
    })
    expect(accepted.status).toBe(202)
    const { jobId } = accepted.body
    // Whichever daemon's worker took it runs it: that one is killed once a checkpoint is stored.
    const started = (line: Record<string, unknown>) => line.msg === "job started" && line.jobId === jobId
    const runner = await Promise.any(daemons.map((daemon) => waitForLine(daemon, started, 20_000).then(() => daemon)))
    const survivors = daemons.filter((daemon) => daemon !== runner)
    await within(async () => {
      const { body } = await call(survivors[0]!, "GET", `/api/v1/jobs/${jobId}`, { key })
      return body.progress.processed > 0
    }, 20_000)
    await runner.stop("SIGKILL")
    const { body: atKill } = await call(survivors[0]!, "GET", `/api/v1/jobs/${jobId}`, { key })
    expect(atKill.status).toBe("running")
    expect(atKill.progress.processed).toBeLessThan(total)
    await within(async () => {
      const { body } = await call(survivors[1]!, "GET", `/api/v1/jobs/${jobId}`, { key })
      return body.status === "completed"
    }, 40_000)
    expect(
      survivors.some((daemon) => daemon.lines.some((line) => line.msg === "job resumed" && line.jobId === jobId))
    ).toBe(true)
    const download = await fetch(`${survivors[0]!.url}/api/v1/jobs/${jobId}/results`, {
      headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" }
    })
    const rows = (await download.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).email as string)
    expect(rows).toHaveLength(total)
    expect(rows).toEqual(emails)
    daemons = survivors
  }, 90_000)

  it("answers 503 while Redis is down and recovers when it is back, losing nothing acknowledged", async () => {
    const offerId = "acme-winter-semester"
    const acknowledged = { groups: [] as Array<string>, validations: 0 }
    let refused = 0
    let validationFailures = 0
    let running = true
    const traffic = (async () => {
      for (let i = 0; running; i++) {
        const daemon = daemons[i % daemons.length]!
        const id = `outage-${i}`
        const created = await createGroup(daemon, id)
        if (created.status === 201) acknowledged.groups.push(id)
        else {
          expect(created.status).toBe(503)
          expect(created.headers.get("retry-after")).toMatch(/^\d+$/)
          refused++
        }
        const single = await validateOffer(daemon, `outage${i}@mit.edu`, offerId)
        if (single.status === 200) acknowledged.validations++
        else validationFailures++
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
    const signedIn = await call(daemons[0]!, "POST", "/console/session", { body: { key } })
    const session = {
      cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!,
      "x-csrf-token": signedIn.body.csrfToken
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
    await redis.stop()
    await within(async () => refused > 0, 10_000)
    // A sign-out the store cannot record is not done: 503, and the cookie stays for another try.
    const notEnded = await call(daemons[0]!, "DELETE", "/console/session", { headers: session })
    expect(notEnded.status).toBe(503)
    expect(notEnded.headers.get("set-cookie")).toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await redis.start()
    const refusedWhileDown = refused
    await within(async () => (await createGroup(daemons[0]!, `after-${Date.now()}`)).status === 201, 15_000)
    running = false
    await traffic
    expect((await call(daemons[0]!, "DELETE", "/console/session", { headers: session })).status).toBe(204)
    await within(
      async () => (await call(daemons[1]!, "GET", "/api/v1/offers", { headers: session })).status === 401,
      1000
    )
    expect(refusedWhileDown).toBeGreaterThan(0)
    // Single validations kept answering throughout (rate limits fail open, by default).
    expect(validationFailures).toBe(0)
    // Every acknowledged group is there, on a daemon that did not create most of them (once propagated: <= 1 s).
    for (const id of acknowledged.groups) {
      await within(
        async () => (await call(daemons[1]!, "GET", `/api/v1/target-groups/${id}`, { key })).status === 200,
        2000
      )
    }
    await within(async () => {
      const { body } = await call(daemons[0]!, "GET", `/api/v1/offers/${offerId}/status`, { key })
      return body.usage.validations === acknowledged.validations
    }, 10_000)
  }, 60_000)
})
