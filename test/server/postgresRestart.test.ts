/**
 * PostgreSQL going away mid-traffic and coming back, with the daemons left
 * running: while it is away, requests that need it are answered 503 with
 * `Retry-After`; once it is back they are served again without restarting
 * a daemon, and nothing acknowledged is lost — every verification started
 * or confirmed, group created, validation counted and job accepted is there
 * afterwards (`postgresTraffic.ts` compares).
 *
 * Twice: the machine's shared server behind the loopback fault proxy, cut
 * (every connection dropped, new ones refused: a restart as the client sees
 * it) and restored; and a server of the test's own
 * (`test/support/postgresServer.ts`) really restarted, as a crash would
 * (`pg_ctl stop -m immediate`), skipped loudly where PostgreSQL's server
 * binaries are not installed.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { describePostgres, makeTestDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import { describeWithPostgresServer, type PostgresServer, startPostgresServer } from "../support/postgresServer.ts"
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

/** Two daemons on the database at `url`, with a key for everything. */
const deploy = async (url: string) => {
  const base = copyConfig()
  setSettings(base, [
    [["store"], { kind: "postgres", url }],
    [["jobs", "concurrency"], 1],
    ...trafficSettings,
    ...roomyBulkAndJobBudgets
  ])
  writeVerifyOffer(base.configDir)
  const key = makeKey(base, "acme", allScopes)
  return { key, daemons: await startDaemonsSharing(base, 2) }
}

/**
 * Runs the traffic through `daemons`, takes the store away with `away` and
 * brings it back with `back`; checks the 503s while it is away, the
 * recovery, a job accepted before and one after, and that nothing
 * acknowledged was lost.
 */
const outage = async (
  daemons: ReadonlyArray<Daemon>,
  key: string,
  databaseUrl: string,
  away: () => Promise<void>,
  back: () => Promise<void>
) => {
  const traffic = startTraffic(daemons, key, { groups: true })
  const submit = (daemon: Daemon, idempotencyKey: string) =>
    traffic.untilAnswered(`job ${idempotencyKey}`, () =>
      call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key,
        body: { emails: Array.from({ length: 2000 }, (_, i) => `j${i}@ox.ac.uk`), targetGroupId: "uk-students" },
        headers: { "idempotency-key": idempotencyKey }
      })
    )
  const before = await submit(daemons[0]!, randomUUID())
  expect(before.status).toBe(202)
  await sleep(1500)
  traffic.cutting(true)
  await away()
  // While it is away: a write is refused 503 with Retry-After.
  const refused = await call(daemons[1]!, "POST", "/api/v1/target-groups", {
    key,
    body: { id: "while-away", name: "while-away", team: "acme", criteria: { domains: { allow: ["away.samples.edu"] } } }
  })
  expect(refused.status).toBe(503)
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
  // A job submitted while it is away is accepted once it is back (sent again under its key meanwhile).
  const during = submit(daemons[1]!, randomUUID())
  await sleep(1500)
  await back()
  traffic.cutting(false)
  const backAt = performance.now()
  expect((await during).status).toBe(202)
  // Served again by both daemons, neither restarted.
  for (const daemon of daemons) {
    const created = await traffic.untilAnswered(`after ${daemon.url}`, () =>
      call(daemon, "POST", "/api/v1/target-groups", {
        key,
        body: {
          id: `after-${daemons.indexOf(daemon)}`,
          name: "after",
          team: "acme",
          criteria: { domains: { allow: ["after.samples.edu"] } }
        }
      })
    )
    expect(created.status).toBe(201)
  }
  expect(performance.now() - backAt).toBeLessThan(10_000)
  await sleep(2000)
  await traffic.stop()
  await expectAcknowledgedKept(traffic, daemons, key, databaseUrl)
  // Both jobs stored once each, and run to the end.
  const jobs = [before.body.jobId, (await during).body.jobId]
  const rows = await query<{ job_id: string }>(databaseUrl, "select job_id from campusgate_jobs order by job_id")
  expect(rows.map((row) => row.job_id)).toEqual([...jobs].sort())
  for (const jobId of jobs) {
    const deadline = Date.now() + 30_000
    for (;;) {
      const { body } = await call(daemons[0]!, "GET", `/api/v1/jobs/${jobId}`, { key })
      if (body.status === "completed") break
      if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${body.status}`)
      await sleep(200)
    }
  }
}

describePostgres("daemons on PostgreSQL while it is cut off and comes back (the fault proxy)", () => {
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let proxy: FaultProxy
  let daemons: Array<Daemon> = []
  let key = ""
  beforeAll(async () => {
    database = await makeTestDatabase()
    const server = new URL(testPostgresUrl)
    proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) })
    ;({ key, daemons } = await deploy(proxy.url(database.url)))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    await proxy?.close()
    await database?.drop()
  })

  it("answers 503 while it is away, serves again once it is back, and loses nothing acknowledged", async () => {
    await outage(
      daemons,
      key,
      database.url,
      async () => proxy.partition(),
      async () => {
        await sleep(3000)
        proxy.heal()
      }
    )
  }, 90_000)
})

describeWithPostgresServer("daemons on a PostgreSQL server of the test's own, restarted mid-traffic", () => {
  let server: PostgresServer
  let daemons: Array<Daemon> = []
  let key = ""
  beforeAll(async () => {
    server = await startPostgresServer()
    ;({ key, daemons } = await deploy(server.url))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    await server?.stop()
  })

  it("answers 503 while it restarts, serves again once it is up, and loses nothing acknowledged", async () => {
    let restarted: Promise<void> = Promise.resolve()
    await outage(
      daemons,
      key,
      server.url,
      async () => {
        // Stopped as a crash would; started again 3 s later (the test carries on meanwhile).
        restarted = server.restart(3000)
        await sleep(300)
      },
      () => restarted
    )
  }, 90_000)
})
