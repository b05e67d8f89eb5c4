/**
 * What the real daemon writes to its log: a line for each event of its
 * life, under the minimum level of `logging.level` (`CAMPUSGATE_LOG_LEVEL`
 * winning), and never an API key, a raw path or (unless
 * `logging.logEmails`) a full address, whatever a client or a config file
 * puts there.
 */
import { once } from "node:events"
import { rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import {
  call,
  copyConfig,
  type Daemon,
  freePort,
  makeKey,
  setSettings,
  sharedDaemon,
  startDaemon,
  waitForLine
} from "./daemon.ts"

let key: string

const daemon = sharedDaemon((dirs) => {
  // The callback receiver below listens on loopback, which callbacks reach only when allowed.
  setSettings(dirs, [[["jobs", "callbacks", "allowPrivateNetworks"], true]])
  key = makeKey(dirs, "acme", allScopes)
})

describe("request log lines", () => {
  it("hold the route template, never an API key or an address written in the path", async () => {
    const address = "leaky.person@ox.ac.uk"
    const sent = [
      [`/api/v1/offers/${key}/status`, "leak-key"],
      [`/v1/offers/${key}/status?x=${key}`, "leak-key-alias"],
      [`/api/v1/offers/${address}`, "leak-email"],
      [`/api/v1/target-groups/${encodeURIComponent(address)}`, "leak-email-encoded"],
      [`/nowhere/${address}/${key}`, "leak-unmatched"]
    ] as const
    for (const [path, requestId] of sent) {
      const answer = await call(daemon, "GET", path, { key, headers: { "x-request-id": requestId } })
      expect(answer.status).toBe(404)
    }
    // A key sent as the request id is not kept (a client's mistake must not reach the log either).
    const misplaced = await call(daemon, "GET", "/healthz", { headers: { "x-request-id": key } })
    expect(misplaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const logged = await Promise.all(
      sent.map(([, requestId]) => waitForLine(daemon, (line) => line.requestId === requestId))
    )
    expect(logged.map((line) => line.path)).toEqual([
      "/api/v1/offers/{id}/status",
      "/api/v1/offers/{id}/status",
      "/api/v1/offers/{id}",
      "/api/v1/target-groups/{id}",
      "unmatched"
    ])
    const all = JSON.stringify(daemon.lines)
    expect(all).not.toContain(key)
    expect(all).not.toContain(key.slice(4))
    expect(all).not.toContain("leaky.person")
    expect(all).not.toContain(encodeURIComponent(address))
  })
})

/** An offer file with a key that is an address: the loader names the key in its problem. */
const breakConfig = (daemon: Daemon) =>
  writeFileSync(
    join(daemon.configDir, "offers", "broken.yaml"),
    "id: broken\nteam: acme\nname: X\nstatus: active\ntargetGroups: [uk-students]\npasted.person@ox.ac.uk: yes\n"
  )
const repairConfig = (daemon: Daemon) => rmSync(join(daemon.configDir, "offers", "broken.yaml"))

describe("event lines", () => {
  it("say each step of the start, that the daemon is starting, with its directories, then where it listens", () => {
    expect(daemon.lines.slice(0, 3).map((line) => line.msg)).toEqual([
      "opening the stores",
      "loading the configuration",
      "configuration loaded and engine built"
    ])
    expect(daemon.lines[3]).toMatchObject({
      level: "info",
      msg: "starting",
      configDir: daemon.configDir,
      dataDir: daemon.dataDir,
      generation: 1
    })
    expect(daemon.lines[3]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(daemon.lines[4]).toMatchObject({ level: "info", msg: "listening", url: daemon.url })
  })

  it("report a rejected config change with each problem as file:line:col path: message, and the next applied one", async () => {
    const from = daemon.lines.length
    breakConfig(daemon)
    const rejected = await waitForLine(daemon, (line) => String(line.msg).startsWith("config change rejected"))
    expect(rejected.level).toBe("warn")
    expect(rejected.problems).toEqual([
      expect.stringMatching(/offers\/broken\.yaml:6:1 \*\*\*@ox\.ac\.uk: unknown key/)
    ])
    expect(JSON.stringify(daemon.lines)).not.toContain("pasted.person")
    repairConfig(daemon)
    const applied = await waitForLine(
      daemon,
      (line) => line.msg === "config reloaded" && daemon.lines.indexOf(line) >= from
    )
    expect(applied).toMatchObject({ level: "info", generation: expect.any(Number) })
  })

  it("follow a job from start to end, and every failed callback attempt with the callback's origin only", async () => {
    const receiver = createServer((_, response) => response.writeHead(500).end())
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    try {
      const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
      const callbackUrl = `${origin}/hooks?token=s3cret&to=hook.owner@samples.com`
      const submitted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key,
        body: { emails: ["jane@ox.ac.uk", "job.person@mit.edu"], targetGroupId: "uk-students", callbackUrl }
      })
      expect(submitted.status).toBe(202)
      const jobId = submitted.body.jobId
      const started = await waitForLine(daemon, (line) => line.msg === "job started" && line.jobId === jobId)
      expect(started).toMatchObject({ level: "info", team: "acme", targetGroupId: "uk-students", total: 2 })
      const finished = await waitForLine(daemon, (line) => line.msg === "job finished" && line.jobId === jobId)
      expect(finished).toMatchObject({ status: "completed", counts: { valid: 1, invalid: 1 } })
      const attempt = await waitForLine(
        daemon,
        (line) => line.msg === "job callback attempt failed" && line.jobId === jobId
      )
      expect(attempt).toMatchObject({ level: "warn", callback: origin, attempt: 1, reason: "http" })
      // Effect's logging went through the daemon's log: every line is one JSON object.
      expect(daemon.lines.filter((line) => "raw" in line)).toEqual([])
      const all = JSON.stringify(daemon.lines)
      expect(all).not.toContain("s3cret")
      expect(all).not.toContain("hook.owner")
      expect(all).not.toContain("job.person")
    } finally {
      receiver.close()
    }
  })
})

describe("logging settings", () => {
  it("drop lines below logging.level, and write full addresses with logging.logEmails", async () => {
    const dirs = copyConfig()
    const own = makeKey(dirs, "acme", allScopes)
    setSettings(dirs, [
      [["logging", "level"], "warn"],
      [["logging", "logEmails"], true]
    ])
    const quiet = await startDaemon(dirs, {}, { port: await freePort() })
    try {
      const answer = await call(quiet, "GET", "/api/v1/offers", { key: own, headers: { "x-request-id": "at-warn" } })
      expect(answer.status).toBe(200)
      breakConfig(quiet)
      const rejected = await waitForLine(quiet, (line) => String(line.msg).startsWith("config change rejected"))
      expect(rejected.problems).toEqual([expect.stringContaining("pasted.person@ox.ac.uk: unknown key")])
    } finally {
      expect(await quiet.stop()).toBe(0)
    }
    // Start, listening, the request, stopping and stopped are info lines: only the warning is left.
    expect(quiet.lines.map((line) => line.msg)).toEqual(["config change rejected; the last good config keeps serving"])
  }, 30_000)

  it("take CAMPUSGATE_LOG_LEVEL over logging.level, and end with stopping and stopped", async () => {
    const dirs = copyConfig()
    const own = makeKey(dirs, "acme", allScopes)
    setSettings(dirs, [[["logging", "level"], "error"]])
    const loud = await startDaemon(dirs, { CAMPUSGATE_LOG_LEVEL: "info" })
    const answer = await call(loud, "GET", "/api/v1/offers", { key: own, headers: { "x-request-id": "env-info" } })
    expect(answer.status).toBe(200)
    await waitForLine(loud, (line) => line.requestId === "env-info")
    expect(await loud.stop()).toBe(0)
    await waitForLine(loud, (line) => line.msg === "stopped")
    expect(loud.lines.slice(-2).map((line) => line.msg)).toEqual(["stopping", "stopped"])
  }, 30_000)
})
