/**
 * Read-your-writes across daemons sharing a store: a target group created
 * through one daemon is read, changed and deleted at once through another
 * (no waiting for the change's announcement), 20 times in a row; and a
 * flood of reads of ids that exist nowhere costs no reload.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeRedis, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemonsSharing } from "./daemon.ts"

let daemons: Array<Daemon> = []
let key: string

describeRedis("read-your-writes across two daemons on one Redis", () => {
  beforeAll(async () => {
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "redis", url: testRedisUrl, keyPrefix: testPrefix() }]])
    key = makeKey(base, "acme", ["target-groups:read", "target-groups:write"])
    daemons = await startDaemonsSharing(base, 2)
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
  })

  it("reads, changes and deletes through one daemon what another created a moment before", async () => {
    const [one, other] = [daemons[0]!, daemons[1]!]
    for (let i = 0; i < 20; i++) {
      const id = `ryw-${i}`
      const created = await call(one, "POST", "/api/v1/target-groups", {
        key,
        body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
      })
      expect(created.status).toBe(201)
      const read = await call(other, "GET", `/api/v1/target-groups/${id}`, { key })
      expect(read.status, `read ${id}`).toBe(200)
      if (i % 5 === 0) {
        const changed = await call(other, "PATCH", `/api/v1/target-groups/${id}`, {
          key,
          body: { name: `${id} changed` },
          headers: { "if-match": read.headers.get("etag")! }
        })
        expect(changed.status, `change ${id}`).toBe(200)
        expect((await call(other, "DELETE", `/api/v1/target-groups/${id}`, { key })).status).toBe(204)
      }
    }
  })

  it("answers reads of ids that exist nowhere without reloading the configuration", async () => {
    const reloads = () => daemons[1]!.lines.filter((line) => line.msg === "config reloaded").length
    // Settle: any reload the writes above caused has happened.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const before = reloads()
    for (let i = 0; i < 50; i++) {
      expect((await call(daemons[1]!, "GET", `/api/v1/target-groups/nowhere-${i}`, { key })).status).toBe(404)
    }
    expect(reloads() - before).toBeLessThanOrEqual(1)
  })
})
