/**
 * What hostile or unlucky clients met on the built daemon, end to end on a
 * loopback port: callbacks aimed at the daemon's own network, answers that
 * amplify their input, declared sizes and stalled bodies, bytes that are
 * not UTF-8, broken percent-encoding, ids of resources the caller cannot
 * see, and what readiness tells anyone.
 */
import { once } from "node:events"
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { createApiKey, revokeApiKey } from "../../src/app/Keys.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { call, makeKey, setSettings, sharedDaemon, waitForJob } from "./daemon.ts"

let acme: string
let globex: string
let offersReader: string
/** Keys expiring soon: acme's two that still work, soonest first, and globex's. */
let expiring: { acme: Array<{ id: string; name?: string; expiresAt: string }>; globex: string }

const daemon = sharedDaemon((dirs) => {
  setSettings(dirs, [
    [["server", "bodyTimeoutSeconds"], 1],
    [["rateLimits", "bulk", "requests"], 1000],
    [["rateLimits", "jobs", "requests"], 1000]
  ])
  acme = makeKey(dirs, "acme", allScopes)
  globex = makeKey(dirs, "globex", allScopes)
  offersReader = makeKey(dirs, "acme", ["offers:read"])
  const key = (team: string, days: number, name?: string) => {
    const expiresAt = new Date(Date.now() + days * 86_400_000).toISOString()
    const { id } = createApiKey({
      ...dirs,
      team: team as TeamId,
      scopes: ["offers:read"],
      expiresAt,
      ...(name === undefined ? {} : { name })
    })
    return { id, expiresAt, ...(name === undefined ? {} : { name }) }
  }
  const later = key("acme", 10)
  const soon = key("acme", 3, "nightly export")
  key("acme", 30)
  revokeApiKey({ ...dirs, id: key("acme", 2).id })
  expiring = { acme: [soon, later], globex: key("globex", 1).id }
})

/** Sends `head` (and `body`) on a raw connection; resolves with what came back and whether the server closed it. */
const raw = async (head: string, body = "", waitMs = 5000) => {
  const { port } = new URL(daemon.url)
  const socket = connect(Number(port), "127.0.0.1")
  await once(socket, "connect")
  let received = ""
  socket.on("data", (chunk) => {
    received += String(chunk)
  })
  socket.write(head + body)
  const started = performance.now()
  const closed = await Promise.race([
    once(socket, "close").then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs))
  ])
  socket.destroy()
  return { received, closed, ms: performance.now() - started }
}

const utf8Broken = (email: Uint8Array, rest: string): Uint8Array =>
  Buffer.concat([Buffer.from('{"email":"'), email, Buffer.from(`",${rest}}`)])
/** `a`, the bytes ff fe (not UTF-8), then `@ox.ac.uk`. */
const brokenEmail = Buffer.concat([Buffer.from("a"), Buffer.from([0xff, 0xfe]), Buffer.from("@ox.ac.uk")])

describe("callbacks aimed at the daemon's own network", () => {
  it("are refused when the job is submitted, in the query or the body, and the receiver is never called", async () => {
    let hits = 0
    const receiver = createServer((_, response) => {
      hits++
      response.writeHead(204).end()
    })
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    const { port } = receiver.address() as AddressInfo
    try {
      for (const host of [
        "127.0.0.1",
        "localhost",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "0x7f000001",
        "[::1]",
        "169.254.169.254",
        "10.0.0.1"
      ]) {
        const callbackUrl = `http://${host}:${port}/hook`
        const inBody = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
          key: acme,
          body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students", callbackUrl }
        })
        expect(inBody, host).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
        expect(inBody.body.errors[0]).toMatchObject({ field: "/callbackUrl", code: "CALLBACK_NOT_ALLOWED" })
        const inQuery = await call(
          daemon,
          "POST",
          `/api/v1/validate/bulk-async?targetGroupId=uk-students&callbackUrl=${encodeURIComponent(callbackUrl)}`,
          { key: acme, rawBody: '"jane@ox.ac.uk"\n', headers: { "content-type": "application/x-ndjson" } }
        )
        expect(inQuery.body.errors[0], host).toMatchObject({
          field: "/query/callbackUrl",
          code: "CALLBACK_NOT_ALLOWED"
        })
      }
      expect(hits).toBe(0)
    } finally {
      receiver.close()
    }
  })
})

describe("answers that cannot amplify their input", () => {
  it("stops at the first problem of a large body of 50,000 unknown fields, in a small answer", async () => {
    for (const path of ["/api/v1/validate/target-group", "/api/v1/target-groups"]) {
      const body: Record<string, unknown> = { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
      for (let i = 0; i < 50_000; i++) body[`unknown${i}`] = i
      const answer = await fetch(`${daemon.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${acme}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await answer.text()
      expect(answer.status).toBe(400)
      expect(text.length).toBeLessThan(64 * 1024)
      const problem = JSON.parse(text)
      expect(problem.code).toBe("VALIDATION_ERROR")
      expect(problem.errors.length).toBeGreaterThan(0)
      expect(problem.errors.length).toBeLessThanOrEqual(20)
      expect(problem.detail).toMatch(/too large to list every problem/)
    }
  })

  it("lists the first 20 problems of a small body, with the count", async () => {
    for (const path of ["/api/v1/validate/target-group", "/api/v1/offers"]) {
      const body: Record<string, unknown> = {}
      for (let i = 0; i < 30; i++) body[`unknown${i}`] = i
      const answer = await call(daemon, "POST", path, { key: acme, body })
      expect(answer.status).toBe(400)
      expect(answer.body.errors).toHaveLength(20)
      expect(answer.body.detail).toMatch(/problems; the first 20 are listed/)
    }
  })

  it("still lists every problem of a small body", async () => {
    const result = await call(daemon, "POST", "/api/v1/target-groups", {
      key: acme,
      body: { id: 42, name: false, extra: true, criteria: { nonsense: 1 } }
    })
    expect(result.status).toBe(400)
    expect(result.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      "/criteria/nonsense",
      "/extra",
      "/id",
      "/name"
    ])
  })
})

describe("bytes that are not UTF-8", () => {
  it("are MALFORMED_JSON on the single-validation fast path, never another address", async () => {
    const answer = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      rawBody: utf8Broken(brokenEmail, '"targetGroupId":"uk-students"')
    })
    expect(answer).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } })
  })

  it("are MALFORMED_JSON in bulk and on every other JSON endpoint", async () => {
    const bulk = Buffer.concat([
      Buffer.from('{"emails":["'),
      brokenEmail,
      Buffer.from('"],"targetGroupId":"uk-students"}')
    ])
    expect(await call(daemon, "POST", "/api/v1/validate/bulk", { key: acme, rawBody: bulk })).toMatchObject({
      status: 400,
      body: { code: "MALFORMED_JSON" }
    })
    const group = Buffer.concat([Buffer.from('{"id":"x'), Buffer.from([0xc3]), Buffer.from('","name":"n"}')])
    expect(await call(daemon, "POST", "/api/v1/target-groups", { key: acme, rawBody: group })).toMatchObject({
      status: 400,
      body: { code: "MALFORMED_JSON" }
    })
  })

  it("leave a body that holds U+FFFD as UTF-8 alone", async () => {
    const answer = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails: ["a\uFFFD@ox.ac.uk"], targetGroupId: "uk-students" }
    })
    expect(answer.status).toBe(200)
  })
})

describe("declared sizes and stalled bodies", () => {
  it("answers 413 from a Content-Length above the limit, without waiting for the body", async () => {
    for (const path of ["/api/v1/validate/target-group", "/api/v1/validate/bulk"]) {
      const head =
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`
      const answer = await raw(head, '{"emails": [', 3000)
      expect(answer.received).toMatch(/^HTTP\/1\.1 413 /)
      expect(answer.received).toContain('"code":"PAYLOAD_TOO_LARGE"')
      expect(answer.received).toContain("use bulk-async for large batches")
    }
    // A job upload over its own limit is told to split the job, not to use the endpoint it is on.
    const upload =
      `POST /api/v1/validate/bulk-async?targetGroupId=uk-students HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme}\r\n` +
      `Content-Type: text/csv\r\nContent-Length: ${2 * 1024 * 1024 * 1024}\r\n\r\n`
    const job = await raw(upload, "email\n", 3000)
    expect(job.received).toMatch(/^HTTP\/1\.1 413 /)
    expect(job.received).toContain("split it into several jobs")
  })

  it("answers Expect: 100-continue with the 413 alone when the declared body is too large, else asks for it", async () => {
    const head = (path: string, length: number) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`
    const tooLarge = await raw(head("/api/v1/validate/bulk", 50 * 1024 * 1024), "", 3000)
    expect(tooLarge.received).toMatch(/^HTTP\/1\.1 413 /)
    expect(tooLarge.received).not.toContain("100 Continue")
    const body = '{"email":"jane@ox.ac.uk","targetGroupId":"uk-students"}'
    const fits = await raw(head("/api/v1/validate/target-group", Buffer.byteLength(body)), "", 1000)
    expect(fits.received).toMatch(/^HTTP\/1\.1 100 Continue\r\n/)
  })

  it("drops a connection whose body stalls longer than server.bodyTimeoutSeconds", async () => {
    const head =
      `POST /api/v1/validate/bulk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    const answer = await raw(head, '{"emails": [', 8000)
    expect(answer.closed).toBe(true)
    expect(answer.ms).toBeLessThan(6000)
  })
})

describe("paths and ids", () => {
  it("answers broken percent-encoding in a path with 400, not 405", async () => {
    for (const path of ["/api/v1/offers/%ZZ/status", "/api/v1/offers/%FF", "/api/v1/jobs/%E0%A4%A"]) {
      const answer = await call(daemon, "GET", path, { key: acme })
      expect(answer).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
      expect(answer.body.errors[0].field).toBe("/path")
    }
  })

  it("does not tell a caller that an id it cannot see exists in another team", async () => {
    const taken = await call(daemon, "POST", "/api/v1/offers", {
      key: acme,
      body: { id: "globex-campus-pass", name: "Mine", targetGroups: ["universities"], status: "active" }
    })
    expect(taken).toMatchObject({
      status: 409,
      body: { detail: 'The offer id "globex-campus-pass" is not available; choose another id.' }
    })
    const group = await call(daemon, "POST", "/api/v1/target-groups", {
      key: globex,
      body: { id: "acme-bavaria", name: "Mine", criteria: { domains: { allow: ["x.example"] } } }
    })
    expect(group).toMatchObject({
      status: 409,
      body: { detail: 'The target group id "acme-bavaria" is not available; choose another id.' }
    })
    expect((await call(daemon, "GET", "/api/v1/target-groups/acme-bavaria", { key: globex })).status).toBe(404)
  })
})

describe("readiness", () => {
  it("tells anyone only whether the daemon is ready; the detail needs a key with status:read", async () => {
    const ready = await call(daemon, "GET", "/readyz")
    expect(ready).toMatchObject({ status: 200, body: { status: "ready" } })
    expect(JSON.stringify(ready.body)).not.toMatch(/problems|\/tmp|configDir|yaml/)
    expect((await call(daemon, "GET", "/api/v1/status")).status).toBe(401)
    const detail = await call(daemon, "GET", "/api/v1/status", { key: acme })
    expect(detail).toMatchObject({
      status: 200,
      body: { status: "ready", config: { generation: 1, stale: false, problems: [] } }
    })
    expect((await call(daemon, "GET", "/api/v1/status", { key: offersReader })).status).toBe(403)
  })

  it("shows a rejected change's problems to the team they concern, files relative to the config directory", async () => {
    const file = join(daemon.configDir, "offers", "globex-broken.yaml")
    writeFileSync(
      file,
      "id: globex-broken\nteam: globex\nname: Broken\ntargetGroups: [no-such-group]\nstatus: active\n"
    )
    try {
      await eventually(async () => (await call(daemon, "GET", "/api/v1/status", { key: globex })).body.config.stale)
      const theirs = (await call(daemon, "GET", "/api/v1/status", { key: globex })).body.config.problems
      expect(theirs).toEqual([
        expect.objectContaining({ file: "offers/globex-broken.yaml", team: "globex", path: "targetGroups[0]" })
      ])
      const acmeView = (await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config
      expect(acmeView).toMatchObject({ stale: true, problems: [] })
      // A problem of the deployment's own files concerns every team, named without the host's paths.
      const settings = join(daemon.configDir, "campusgate.yaml")
      const original = readFileSync(settings, "utf8")
      writeFileSync(settings, `${original}\nnoSuchSetting: 1\n`)
      try {
        await eventually(async () =>
          (await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config.problems.some(
            (problem: { file?: string }) => problem.file === "campusgate.yaml"
          )
        )
        const body = JSON.stringify((await call(daemon, "GET", "/api/v1/status", { key: acme })).body)
        expect(body).not.toContain(daemon.configDir)
        expect(body).not.toContain("globex-broken")
      } finally {
        writeFileSync(settings, original)
      }
    } finally {
      rmSync(file)
    }
    await eventually(async () => !(await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config.stale)
  }, 30_000)

  it("gives the rate limits in force and the caller's team's keys that expire within 14 days", async () => {
    const detail = await call(daemon, "GET", "/api/v1/status", { key: acme })
    expect(detail.body.rateLimits).toEqual({
      bulk: { requests: 1000, windowSeconds: 60 },
      jobs: { requests: 1000, windowSeconds: 60 },
      validate: { requests: 6000, windowSeconds: 60 },
      verifications: { requests: 600, windowSeconds: 60 },
      default: { requests: 1200, windowSeconds: 60 },
      signIn: { requests: 10, windowSeconds: 60 }
    })
    // Not the key due in 30 days, nor the revoked one, nor another team's.
    expect(detail.body.keys).toEqual(expiring.acme)
    const other = await call(daemon, "GET", "/api/v1/status", { key: globex })
    expect(other.body.keys.map((key: { id: string }) => key.id)).toEqual([expiring.globex])
  })
})

describe("config files that would stall the daemon", () => {
  /** 20,000 keys of anchored lists under one mapping, about 600 KB: 5 s of parsing on the event loop before. */
  const heavy = (): string => {
    const lines = ["id: heavy", "name: Heavy", "criteria: {}", "extra:"]
    for (let i = 0; i < 20_000; i++) lines.push(`  key${i}: &a${i} [1, 2, 3]`)
    return `${lines.join("\n")}\n`
  }

  it("are parsed beside the daemon: it keeps answering while the reload runs, and the problem is reported", async () => {
    const file = join(daemon.configDir, "target-groups", "heavy.yaml")
    const before = (await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config.reloads.rejected
    writeFileSync(file, heavy())
    const latencies: Array<number> = []
    let reported = false
    const probe = (async () => {
      while (!reported) {
        const sent = performance.now()
        await call(daemon, "GET", "/healthz")
        latencies.push(performance.now() - sent)
      }
    })()
    try {
      await eventually(async () => {
        const status = (await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config
        reported = status.reloads.rejected > before
        if (reported)
          expect(status.problems[0]).toMatchObject({
            path: "extra",
            message: expect.stringMatching(/^unknown key "extra"/)
          })
        return reported
      }, 15_000)
    } finally {
      reported = true
      await probe
    }
    rmSync(file)
    expect(reported).toBe(true)
    // Parsed on the event loop this file blocked it for about 5 s; 1 s leaves room for a loaded machine.
    expect(Math.max(...latencies)).toBeLessThan(1_000)
  }, 30_000)

  it("are refused above 1 MiB, with a problem naming the file", async () => {
    const file = join(daemon.configDir, "target-groups", "huge.yaml")
    writeFileSync(file, `id: huge\nname: Huge\ncriteria: {}\ndescription: "${"x".repeat(1_100_000)}"\n`)
    try {
      await eventually(async () => {
        const status = (await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config
        return (
          status.stale && status.problems.some((problem: { message: string }) => /larger than/.test(problem.message))
        )
      })
    } finally {
      rmSync(file)
    }
    await eventually(async () => !(await call(daemon, "GET", "/api/v1/status", { key: acme })).body.config.stale)
  }, 30_000)
})

const eventually = async (holds: () => Promise<boolean>, ms = 10_000) => {
  const started = Date.now()
  while (!(await holds())) {
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("the data directory", () => {
  /** Every file and directory under `root`, with its permission bits. */
  const modes = (root: string): Array<{ path: string; mode: number; directory: boolean }> =>
    readdirSync(root, { recursive: true, withFileTypes: true }).map((entry) => {
      const path = join(entry.parentPath, entry.name)
      return { path: relative(root, path), mode: statSync(path).mode & 0o777, directory: entry.isDirectory() }
    })

  it("keeps what holds addresses, codes and tokens private: files 0600 in directories 0700", async () => {
    const started = await call(daemon, "POST", "/api/v1/verifications", {
      key: acme,
      body: { email: "private@ox.ac.uk", offerId: "acme-student-discount" }
    })
    expect(started.status).toBe(201)
    const job = await call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
      key: acme,
      rawBody: "email\njane@ox.ac.uk\n",
      headers: { "content-type": "text/csv" }
    })
    expect(job.status).toBe(202)
    await waitForJob(daemon, acme, job.body.jobId)
    await eventually(
      async () => existsSync(join(daemon.dataDir, "outbox")) && readdirSync(join(daemon.dataDir, "outbox")).length > 0
    )
    const entries = modes(daemon.dataDir)
    for (const where of ["verifications", "jobs", "outbox"]) expect(entries.map((entry) => entry.path)).toContain(where)
    const open = entries.filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600))
    expect(open.map((entry) => `${entry.path} ${entry.mode.toString(8)}`)).toEqual([])
  })
})
