/**
 * Two daemons on one PostgreSQL database behind a faulty network: a
 * loopback proxy (`test/support/faultProxy.ts`) between them and the
 * server adds latency, loses the replies to commits (the server wrote, the
 * daemon cannot know it), drops connections and partitions them off for
 * 10 s, while real traffic runs through both (`postgresTraffic.ts`): single
 * validations counting usage, verifications started and confirmed, target
 * groups created, and a bulk job submitted under an Idempotency-Key.
 * Afterwards what is stored is compared with what was acknowledged: usage
 * counts exactly the acknowledged validations and verification events, each
 * verification is in the state its last acknowledged call put it in, every
 * acknowledged group is served, and the job has one row and counted each
 * input once.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { describePostgres, makeTestDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import {
  call,
  copyConfig,
  type Daemon,
  makeKey,
  roomyBulkAndJobBudgets,
  setSettings,
  startDaemonsSharing
} from "./daemon.ts"
import {
  expectAcknowledgedKept,
  query,
  sleep,
  startTraffic,
  trafficSettings,
  writeVerifyOffer
} from "./postgresTraffic.ts"

let database: { readonly url: string; readonly drop: () => Promise<void> }
let proxy: FaultProxy
let daemons: Array<Daemon> = []
let key = ""

/** The offer the job counts into (single validations and verifications count into others). */
const JOB_OFFER = "acme-student-discount"

/** A PostgreSQL CommandComplete for COMMIT: the server's answer that a transaction is stored. */
const isCommitReply = (chunk: Buffer) => chunk.includes("COMMIT\0")

describePostgres("two daemons on PostgreSQL through a faulty network", () => {
  beforeAll(async () => {
    database = await makeTestDatabase()
    const server = new URL(testPostgresUrl)
    proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) })
    const base = copyConfig()
    setSettings(base, [
      [["store"], { kind: "postgres", url: proxy.url(database.url) }],
      [["jobs", "concurrency"], 1],
      ...trafficSettings,
      ...roomyBulkAndJobBudgets
    ])
    writeVerifyOffer(base.configDir)
    key = makeKey(base, "acme", allScopes)
    daemons = await startDaemonsSharing(base, 2)
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    await proxy?.close()
    await database?.drop()
  })

  it("keeps usage, verification states, groups and job rows exact through latency, lost replies, drops and a partition", async () => {
    const traffic = startTraffic(daemons, key, { groups: true })

    // The job: submitted once (sent again under its Idempotency-Key until accepted), run while the faults come.
    const jobEmails = Array.from({ length: 20_000 }, (_, i) => `job${i}@school${i % 40}.edu`)
    const jobKey = randomUUID()
    const submitted = await traffic.untilAnswered("job", () =>
      call(daemons[0]!, "POST", `/api/v1/validate/bulk-async?offerId=${JOB_OFFER}`, {
        key,
        rawBody: `${jobEmails.map((email) => JSON.stringify(email)).join("\n")}\n`,
        headers: { "content-type": "application/x-ndjson", "idempotency-key": jobKey }
      })
    )
    expect(submitted.status).toBe(202)
    const jobId: string = submitted.body.jobId

    await sleep(1500)
    // Latency: every chunk 40 ms late.
    proxy.latency(40)
    await sleep(3000)
    proxy.latency(0)
    // Replies to commits lost: the server stored the write, the daemon saw its connection drop.
    for (let round = 0; round < 6; round++) {
      await Promise.race([proxy.loseReplies(isCommitReply, 2), sleep(1500)])
    }
    // Connections dropped mid-traffic, a few times.
    traffic.cutting(true)
    for (let round = 0; round < 4; round++) {
      proxy.drop()
      await sleep(400)
    }
    // A 10 s partition.
    proxy.partition()
    await sleep(10_000)
    proxy.heal()
    traffic.cutting(false)
    await sleep(4000)
    await traffic.stop()

    await expectAcknowledgedKept(traffic, daemons, key, database.url)

    // The job ends, its row once, its inputs counted once.
    const deadline = Date.now() + 40_000
    for (;;) {
      const { body } = await call(daemons[1]!, "GET", `/api/v1/jobs/${jobId}`, { key })
      if (body.status === "completed") break
      expect(body.status === "queued" || body.status === "running", JSON.stringify(body)).toBe(true)
      if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${body.status}`)
      await sleep(200)
    }
    expect(await query<{ job_id: string }>(database.url, "select job_id from campusgate_jobs")).toEqual([
      { job_id: jobId }
    ])
    const jobUsage = async () =>
      (await call(daemons[0]!, "GET", `/api/v1/offers/${JOB_OFFER}/status`, { key })).body.usage.validations
    const counted = Date.now() + 10_000
    while ((await jobUsage()) !== jobEmails.length && Date.now() < counted) await sleep(200)
    expect(await jobUsage()).toBe(jobEmails.length)
  }, 150_000)
})
