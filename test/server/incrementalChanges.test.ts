/**
 * API writes change the configuration by the one item they wrote, on the
 * daemon that made them and on every other, for each store kind (issue 48):
 * target groups, offers and keys created, changed and deleted through one
 * daemon cost no full reload on any daemon (the `config reloaded` lines say
 * `change: "incremental"`), and each is served by the others within a
 * second without a read there asking for it. A gap in the change feed (its
 * entries gone, as when trimmed) or a file written by hand is one full
 * reload, after which the daemons serve what the store holds.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describePostgres, makeTestDatabase } from "../postgresTesting.ts"
import { describeRedis, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, within } from "./daemon.ts"

const scopes = [
  "target-groups:read",
  "target-groups:write",
  "offers:read",
  "offers:write",
  "keys:read",
  "keys:write"
] as const

/** The `config reloaded` lines a daemon wrote from `from` on, by how the change applied. */
const reloadLines = (daemon: Daemon, from: number) => {
  const lines = daemon.lines.slice(from).filter((line) => line.msg === "config reloaded")
  return {
    full: lines.filter((line) => line.change !== "incremental").length,
    incremental: lines.filter((line) => line.change === "incremental").length
  }
}

/** Whether `daemon` lists the caller's target group `id` (named `name`): a list reads the snapshot, asking no store. */
const listsGroup = async (daemon: Daemon, key: string, id: string, name?: string) => {
  const listed = await call(daemon, "GET", "/api/v1/target-groups?limit=100", { key })
  const group = (listed.body.data as Array<{ id: string; name: string }>).find((one) => one.id === id)
  return group !== undefined && (name === undefined || group.name === name)
}

const listsOffer = async (daemon: Daemon, key: string, id: string, name?: string) => {
  const listed = await call(daemon, "GET", "/api/v1/offers?limit=100", { key })
  const offer = (listed.body.data as Array<{ id: string; name: string }>).find((one) => one.id === id)
  return offer !== undefined && (name === undefined || offer.name === name)
}

/** Whether `key` is accepted by `daemon`. */
const accepts = async (daemon: Daemon, key: string) =>
  (await call(daemon, "GET", "/api/v1/target-groups?limit=1", { key })).status === 200

interface Setup {
  readonly daemons: () => ReadonlyArray<Daemon>
  readonly key: () => string
}

/**
 * Writes through the first daemon (`rounds` of: a target group created and
 * changed, an offer on it created, changed and deleted, the group deleted,
 * a key made and revoked), each seen by every daemon within a second.
 */
const writeAndFollow = async ({ daemons, key }: Setup, rounds: number, prefix: string) => {
  const [writer] = daemons()
  const visible = async (check: (daemon: Daemon) => Promise<boolean>, what: string) => {
    for (const daemon of daemons()) {
      const took = await within(() => check(daemon), 1000)
      expect(took, `${what} on ${daemon.url}`).toBeLessThan(1000)
    }
  }
  const write = async (method: string, path: string, body?: unknown) => {
    const answer = await call(writer!, method, path, { key: key(), ...(body === undefined ? {} : { body }) })
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300)
    return answer
  }
  for (let i = 0; i < rounds; i++) {
    const id = `${prefix}-${i}`
    await write("POST", "/api/v1/target-groups", {
      id,
      name: id,
      team: "acme",
      criteria: { domains: { allow: [`${id}.samples.edu`] } }
    })
    await visible((daemon) => listsGroup(daemon, key(), id), `group ${id} created`)
    await write("PATCH", `/api/v1/target-groups/${id}`, { name: `${id} changed` })
    await visible((daemon) => listsGroup(daemon, key(), id, `${id} changed`), `group ${id} changed`)
    await write("POST", "/api/v1/offers", { id: `${id}-deal`, name: "Deal", status: "active", targetGroups: [id] })
    await visible((daemon) => listsOffer(daemon, key(), `${id}-deal`), `offer ${id}-deal created`)
    await write("PATCH", `/api/v1/offers/${id}-deal`, { name: "Deal changed" })
    await visible((daemon) => listsOffer(daemon, key(), `${id}-deal`, "Deal changed"), `offer ${id}-deal changed`)
    await write("DELETE", `/api/v1/offers/${id}-deal`)
    await visible(async (daemon) => !(await listsOffer(daemon, key(), `${id}-deal`)), `offer ${id}-deal deleted`)
    await write("DELETE", `/api/v1/target-groups/${id}`)
    await visible(async (daemon) => !(await listsGroup(daemon, key(), id)), `group ${id} deleted`)
    const made = await write("POST", "/api/v1/keys", { scopes: ["target-groups:read"], name: id })
    const madeKey = made.body.key as string
    await visible((daemon) => accepts(daemon, madeKey), `key ${id} made`)
    await write("DELETE", `/api/v1/keys/${made.body.id as string}`)
    await visible(async (daemon) => !(await accepts(daemon, madeKey)), `key ${id} revoked`)
  }
  return rounds * 8
}

/** The tests every store kind passes; `makeGap` breaks the change feed (or changes a file by hand) and returns the group it added. */
const incrementalSuite = (setup: Setup, makeGap: () => string | Promise<string>) => {
  it("applies API writes as the items they changed: no full reload on any daemon, each seen everywhere within a second", async () => {
    const from = setup.daemons().map((daemon) => daemon.lines.length)
    const writes = await writeAndFollow(setup, 3, "inc")
    // Let every announcement of the writes arrive.
    await new Promise((resolve) => setTimeout(resolve, 1200))
    setup.daemons().forEach((daemon, i) => {
      const counted = reloadLines(daemon, from[i]!)
      expect(counted.full, `full reloads on daemon ${i}`).toBe(0)
      expect(counted.incremental, `incremental changes on daemon ${i}`).toBeGreaterThanOrEqual(writes)
    })
  }, 120_000)

  it("reloads in full once after a gap in the change feed, and serves what the store holds", async () => {
    const from = setup.daemons().map((daemon) => daemon.lines.length)
    const added = await makeGap()
    for (const daemon of setup.daemons()) {
      expect(await within(() => listsGroup(daemon, setup.key(), added), 2000)).toBeLessThan(2000)
    }
    await new Promise((resolve) => setTimeout(resolve, 1200))
    setup.daemons().forEach((daemon, i) => {
      expect(reloadLines(daemon, from[i]!).full, `full reloads on daemon ${i}`).toBe(1)
    })
    // And the feed serves again: the next write is incremental everywhere.
    const after = setup.daemons().map((daemon) => daemon.lines.length)
    await writeAndFollow(setup, 1, "after-gap")
    await new Promise((resolve) => setTimeout(resolve, 1200))
    setup.daemons().forEach((daemon, i) => {
      expect(reloadLines(daemon, after[i]!).full).toBe(0)
    })
  }, 60_000)
}

const groupYaml = (id: string) =>
  `id: ${id}\nname: ${id}\nteam: acme\ncriteria:\n  domains:\n    allow: [${id}.samples.edu]\n`

describe("API writes on the files store", () => {
  let daemon: Daemon
  let key: string
  beforeAll(async () => {
    const base = copyConfig()
    key = makeKey(base, "acme", [...scopes])
    daemon = await startDaemon(base)
  }, 60_000)
  afterAll(async () => {
    await daemon?.stop()
  })
  incrementalSuite({ daemons: () => [daemon], key: () => key }, () => {
    // A file written by hand (no API write named it): the watcher reloads.
    writeFileSync(join(daemon.dataDir, "target-groups", "by-hand.yaml"), groupYaml("by-hand"))
    return "by-hand"
  })
})

describeRedis("API writes on Redis, two daemons", () => {
  let daemons: Array<Daemon> = []
  let key: string
  const prefix = testPrefix()
  const redis = (...args: Array<string>) =>
    execFileSync("redis-cli", ["-u", testRedisUrl, ...args], { encoding: "utf8" })
  beforeAll(async () => {
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }]])
    key = makeKey(base, "acme", [...scopes])
    daemons = await Promise.all(
      [0, 1].map(() =>
        startDaemon({ configDir: base.configDir, dataDir: mkdtempSync(join(tmpdir(), "campusgate-inc-data-")) })
      )
    )
  }, 60_000)
  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
  })
  incrementalSuite({ daemons: () => daemons, key: () => key }, async () => {
    // A version whose entry the feed does not hold (trimmed away, or a change of no one item).
    redis("HSET", `${prefix}resources:targetGroup`, "gap-group", groupYaml("gap-group"))
    redis("INCR", `${prefix}config:version`)
    return "gap-group"
  })
})

describePostgres("API writes on PostgreSQL, two daemons", () => {
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let daemons: Array<Daemon> = []
  let key: string
  const psql = (statement: string) => execFileSync("psql", [database.url, "-qc", statement], { encoding: "utf8" })
  beforeAll(async () => {
    database = await makeTestDatabase()
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "postgres", url: database.url }]])
    key = makeKey(base, "acme", [...scopes])
    daemons = await Promise.all(
      [0, 1].map(() =>
        startDaemon({ configDir: base.configDir, dataDir: mkdtempSync(join(tmpdir(), "campusgate-inc-data-")) })
      )
    )
  }, 90_000)
  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
    await database?.drop()
  })
  incrementalSuite({ daemons: () => daemons, key: () => key }, async () => {
    // A version whose row the feed does not hold (pruned away, or a change of no one item).
    psql(
      `insert into campusgate_resources (kind, id, text) values ('targetGroup', 'gap-group', '${groupYaml("gap-group")}'); update campusgate_config_version set version = version + 1`
    )
    return "gap-group"
  })
})
