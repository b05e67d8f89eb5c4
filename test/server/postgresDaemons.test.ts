/**
 * Three daemons on one PostgreSQL database, each with a data directory of
 * its own (as on three hosts without a shared volume), through the built
 * daemon as operators run it (`store.kind: postgres`): a rate limit holds
 * across them, a resource created on one serves on the others within a
 * second, a key made or revoked on one is accepted or refused by the others
 * within a second, a verification started on one is confirmed on another,
 * and usage counted on all adds up.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describePostgres, makeTestDatabase } from "../postgresTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, within } from "./daemon.ts"

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
      "keys:write"
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
})
