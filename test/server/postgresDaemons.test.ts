/**
 * Three daemons on one PostgreSQL database, each with a data directory of
 * its own (as on three hosts without a shared volume), through the built
 * daemon as operators run it (`store.kind: postgres`): a rate limit holds
 * across them, a resource created on one serves on the others within a
 * second, a key made or revoked on one is accepted or refused by the others
 * within a second, a verification started on one is confirmed on another,
 * usage counted on all adds up, and a job whose daemon is killed mid-run is
 * finished by another and downloaded from a third (its bytes are in the
 * database, no daemon sees another's files).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describePostgres, makeTestDatabase } from "../postgresTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, waitForLine, within } from "./daemon.ts"

let database: { readonly url: string; readonly drop: () => Promise<void> }
let daemons: Array<Daemon> = []
let key: string

const createGroup = (daemon: Daemon, id: string) =>
  call(daemon, "POST", "/api/v1/target-groups", {
    key,
    body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
  })

describePostgres("three daemons on one PostgreSQL database, each with its own data directory", () => {
  beforeAll(async () => {
    database = await makeTestDatabase()
    const base = copyConfig()
    setSettings(base, [
      [["store"], { kind: "postgres", url: database.url }],
      [["statistics", "flushIntervalMs"], 200]
    ])
    key = makeKey(base, "acme", [
      "validate:target-groups",
      "validate:offers",
      "validate:bulk",
      "offers:read",
      "target-groups:read",
      "target-groups:write",
      "keys:read",
      "keys:write",
      "jobs:read"
    ])
    // The same config on each, a data directory each: nothing shared but the database.
    daemons = await Promise.all(
      [0, 1, 2].map(() =>
        startDaemon({ configDir: base.configDir, dataDir: mkdtempSync(join(tmpdir(), "campusgate-pg-data-")) })
      )
    )
  }, 90_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
    await database?.drop()
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
    expect((await createGroup(daemons[0]!, "pg-group")).status).toBe(201)
    for (const other of [daemons[1]!, daemons[2]!]) {
      const took = await within(
        async () =>
          (
            await call(other, "POST", "/api/v1/validate/target-group", {
              key,
              body: { email: "ann@pg-group.samples.edu", targetGroupId: "pg-group" }
            })
          ).status === 200,
        1000
      )
      expect(took).toBeLessThan(1000)
    }
  })

  it("accepts a key made on one daemon on the others within a second, and refuses it once revoked", async () => {
    const made = await call(daemons[0]!, "POST", "/api/v1/keys", {
      key,
      body: { name: "pg", scopes: ["validate:target-groups"] }
    })
    expect(made.status).toBe(201)
    const validateWith = (daemon: Daemon) =>
      call(daemon, "POST", "/api/v1/validate/target-group", {
        key: made.body.key,
        body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
      })
    for (const other of [daemons[1]!, daemons[2]!]) {
      expect(await within(async () => (await validateWith(other)).status === 200, 1000)).toBeLessThan(1000)
    }
    expect((await call(daemons[1]!, "DELETE", `/api/v1/keys/${made.body.id}`, { key })).status).toBe(200)
    for (const other of [daemons[0]!, daemons[2]!]) {
      expect(await within(async () => (await validateWith(other)).status === 401, 1000)).toBeLessThan(1000)
    }
  })

  it("adds up the usage counted on every daemon", async () => {
    const offerId = "acme-winter-semester"
    const before = (await call(daemons[0]!, "GET", `/api/v1/offers/${offerId}/status`, { key })).body.usage.validations
    for (let i = 0; i < 9; i++) {
      const answer = await call(daemons[i % 3]!, "POST", "/api/v1/validate/offer", {
        key,
        body: { email: `pg${i}@mit.edu`, offerId }
      })
      expect(answer.status).toBe(200)
    }
    await within(async () => {
      const { body } = await call(daemons[2]!, "GET", `/api/v1/offers/${offerId}/status`, { key })
      return body.usage.validations === before + 9
    }, 10_000)
  })

  it("finishes a job whose daemon was killed mid-run on another, every row and its usage once, downloaded from a third", async () => {
    const total = 300_000
    const offerId = "acme-winter-semester"
    const usage = async (daemon: Daemon) =>
      (await call(daemon, "GET", `/api/v1/offers/${offerId}/status`, { key })).body.usage.validations as number
    // The usage before, once every daemon's view agrees (each reads the database at its own pace).
    let before = 0
    await within(async () => {
      const views = await Promise.all(daemons.map(usage))
      before = views[0]!
      return views.every((view) => view === before)
    }, 10_000)
    const emails = Array.from({ length: total }, (_, i) => `user${i}@school${i % 50}.edu`)
    const accepted = await call(daemons[0]!, "POST", `/api/v1/validate/bulk-async?offerId=${offerId}`, {
      key,
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
    daemons = survivors
    const { body: atKill } = await call(survivors[0]!, "GET", `/api/v1/jobs/${jobId}`, { key })
    expect(atKill.status).toBe("running")
    expect(atKill.progress.processed).toBeLessThan(total)
    await within(async () => {
      const { body } = await call(survivors[1]!, "GET", `/api/v1/jobs/${jobId}`, { key })
      return body.status === "completed"
    }, 40_000)
    const resumedBy = survivors.find((daemon) =>
      daemon.lines.some((line) => line.msg === "job resumed" && line.jobId === jobId)
    )
    expect(resumedBy).toBeDefined()
    // Downloaded from the daemon that neither accepted nor finished it, when there is one.
    const reader = survivors.find((daemon) => daemon !== resumedBy && daemon !== daemons[0]) ?? survivors[0]!
    const download = await fetch(`${reader.url}/api/v1/jobs/${jobId}/results`, {
      headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" }
    })
    expect(download.status).toBe(200)
    const rows = (await download.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).email as string)
    expect(rows).toHaveLength(total)
    expect(rows).toEqual(emails)
    await within(async () => (await usage(survivors[0]!)) >= before + total, 10_000)
    expect(await usage(survivors[1]!)).toBe(before + total)
  }, 90_000)
})
