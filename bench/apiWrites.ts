/**
 * `npm run bench:writes`: what an API write costs the configuration of
 * every daemon (issue 48), on each store kind — files (one daemon), Redis
 * and PostgreSQL (two daemons, each its own data directory, on the
 * machine's servers: CAMPUSGATE_TEST_REDIS_URL, CAMPUSGATE_TEST_DATABASE_URL
 * or their defaults). Through the first daemon, 100 writes (target groups
 * created, changed and deleted, offers on them likewise, keys made and
 * revoked), after `BENCH_EXISTING` target groups with an offer each
 * (default 200) were created, as a deployment grows; after each, the second daemon (or, with files, the first) is
 * asked until it serves the change — through a list, or the new key itself,
 * which ask no store — and the time from the write's answer is taken.
 * Reported per kind: the full reloads each daemon made per 100 writes (its
 * `config reloaded` lines that are not `change: "incremental"`), the CPU
 * seconds each spent meanwhile per 100 writes (its main thread and the
 * config loader's; the reads polling it included), and the write→visible
 * times (median, p90, max, ms).
 *
 * BENCH_BEFORE_TREE=<checkout> runs that checkout's built daemon instead
 * (`npm run build` there), for the figures before. Progress goes to
 * standard error; the final line on standard output is JSON.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeTree, cpuSeconds, type DaemonProcess, prepareConfig, startDaemon } from "./daemonProcess.ts"

const WRITES = Number(process.env.BENCH_WRITES ?? 100)
/** Target groups (each with an offer) created through the API before the measured writes: a deployment that has grown. */
const EXISTING = Number(process.env.BENCH_EXISTING ?? 200)
const redisUrl = process.env.CAMPUSGATE_TEST_REDIS_URL || "redis://127.0.0.1:6379"
const postgresUrl = process.env.CAMPUSGATE_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const log = (message: string) => console.error(message)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-writes-"))

interface Running {
  readonly daemon: DaemonProcess
  readonly logFile: string
}

const ask = async (daemon: DaemonProcess, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${daemon.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

const listed = async (daemon: DaemonProcess, key: string, collection: string, id: string) => {
  const answer = await ask(daemon, key, "GET", `/api/v1/${collection}?limit=100`)
  return ((answer.body?.data ?? []) as Array<{ id: string; name: string }>).find((item) => item.id === id)
}

/** Milliseconds until `check` holds (polled every 2 ms), or Infinity after 10 s. */
const until = async (check: () => Promise<boolean>): Promise<number> => {
  const started = performance.now()
  while (performance.now() - started < 10_000) {
    if (await check()) return performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return Number.POSITIVE_INFINITY
}

/** Full reloads in a daemon's log: `config reloaded` lines that are not incremental changes. */
const fullReloads = (logFile: string): number =>
  readFileSync(logFile, "utf8")
    .split("\n")
    .filter((line) => line.includes('"msg":"config reloaded"') && !line.includes('"change":"incremental"')).length

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! * 10) / 10
}

const measure = async (kind: "files" | "redis" | "postgres", store: Record<string, unknown>, daemons: number) => {
  const dir = join(root, kind)
  mkdirSync(dir)
  const config = prepareConfig(
    dir,
    ["target-groups:read", "target-groups:write", "offers:read", "offers:write", "keys:read", "keys:write"],
    [
      [["store"], store],
      [["limits", "resourcesPerTeam"], 2 * EXISTING + 10]
    ],
    beforeTree
  )
  const running: Array<Running> = []
  for (let i = 0; i < daemons; i++) {
    const logFile = join(dir, `daemon-${i}.log`)
    const dataDir = i === 0 ? config.dataDir : mkdtempSync(join(dir, "data-"))
    running.push({ daemon: await startDaemon({ ...config, dataDir }, logFile), logFile })
  }
  try {
    const writer = running[0]!.daemon
    const reader = running[running.length - 1]!.daemon
    const key = config.key
    for (let i = 0; i < EXISTING; i++) {
      const id = `existing-${i}`
      const group = { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
      const offer = { id: `${id}-deal`, name: "Deal", status: "active", targetGroups: [id] }
      if ((await ask(writer, key, "POST", "/api/v1/target-groups", group)).status !== 201)
        throw new Error(`creating ${id}`)
      if ((await ask(writer, key, "POST", "/api/v1/offers", offer)).status !== 201)
        throw new Error(`creating ${id}-deal`)
    }
    if (EXISTING > 0) log(`${kind}: ${EXISTING} target groups and offers created`)
    // Settle: the start's own work and the creations' done.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const before = running.map((one) => fullReloads(one.logFile))
    const cpuBefore = running.map((one) => cpuSeconds(one.daemon.child.pid) ?? 0)
    const latencies: Array<number> = []
    let writes = 0
    const write = async (method: string, path: string, body: unknown, visible: () => Promise<boolean>) => {
      const answer = await ask(writer, key, method, path, body)
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
      writes++
      latencies.push(await until(visible))
      return answer
    }
    for (let i = 0; writes < WRITES; i++) {
      const id = `bench-${i}`
      const group = { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
      await write(
        "POST",
        "/api/v1/target-groups",
        group,
        async () => (await listed(reader, key, "target-groups", id)) !== undefined
      )
      await write(
        "PATCH",
        `/api/v1/target-groups/${id}`,
        { name: `${id}+` },
        async () => (await listed(reader, key, "target-groups", id))?.name === `${id}+`
      )
      const offer = { id: `${id}-deal`, name: "Deal", status: "active", targetGroups: [id] }
      await write(
        "POST",
        "/api/v1/offers",
        offer,
        async () => (await listed(reader, key, "offers", `${id}-deal`)) !== undefined
      )
      await write(
        "PATCH",
        `/api/v1/offers/${id}-deal`,
        { name: "Deal+" },
        async () => (await listed(reader, key, "offers", `${id}-deal`))?.name === "Deal+"
      )
      await write(
        "DELETE",
        `/api/v1/offers/${id}-deal`,
        undefined,
        async () => (await listed(reader, key, "offers", `${id}-deal`)) === undefined
      )
      await write(
        "DELETE",
        `/api/v1/target-groups/${id}`,
        undefined,
        async () => (await listed(reader, key, "target-groups", id)) === undefined
      )
      const made = await write("POST", "/api/v1/keys", { scopes: ["target-groups:read"], name: id }, async () => true)
      const madeKey = made.body?.key as string
      // The key's own latency: until the reader accepts it.
      latencies[latencies.length - 1] = await until(
        async () => (await ask(reader, madeKey, "GET", "/api/v1/target-groups?limit=1")).status === 200
      )
      await write(
        "DELETE",
        `/api/v1/keys/${made.body?.id as string}`,
        undefined,
        async () => (await ask(reader, madeKey, "GET", "/api/v1/target-groups?limit=1")).status === 401
      )
    }
    // Every announcement of the writes arrived, and the watcher's debounce ran out.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const per100 = (value: number) => Math.round((value * 100 * 10) / writes) / 10
    const reloads = running.map((one, i) => per100(fullReloads(one.logFile) - before[i]!))
    // The CPU each daemon spent while the writes ran (the writes, the reads asking after them, the changes applied).
    const cpu = running.map((one, i) => per100((cpuSeconds(one.daemon.child.pid) ?? 0) - cpuBefore[i]!))
    const result = {
      writes,
      fullReloadsPer100Writes: reloads,
      cpuSecondsPer100Writes: cpu,
      visibleMs: { median: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), max: percentile(latencies, 1) }
    }
    log(`${kind}: ${JSON.stringify(result)}`)
    return result
  } finally {
    for (const { daemon } of running) {
      daemon.child.kill("SIGTERM")
      await daemon.exited
    }
  }
}

const redisPrefix = `cgbench:${randomBytes(4).toString("hex")}:`
const database = `cgbench_${randomBytes(4).toString("hex")}`
const databaseUrl = (() => {
  const url = new URL(postgresUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
execFileSync("psql", [postgresUrl, "-qc", `create database ${database}`])
try {
  const figures = {
    tree: beforeTree ?? "this checkout",
    files: await measure("files", { kind: "files" }, 1),
    redis: await measure("redis", { kind: "redis", url: redisUrl, keyPrefix: redisPrefix }, 2),
    postgres: await measure("postgres", { kind: "postgres", url: databaseUrl }, 2)
  }
  console.log(JSON.stringify(figures))
} finally {
  execFileSync("psql", [postgresUrl, "-qc", `drop database ${database} with (force)`])
  const keys = execFileSync("redis-cli", ["-u", redisUrl, "--scan", "--pattern", `${redisPrefix}*`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((line) => line !== "")
  if (keys.length > 0) execFileSync("redis-cli", ["-u", redisUrl, "DEL", ...keys])
}
