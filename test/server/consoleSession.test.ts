/**
 * The console's session end to end, against the real daemon: an API key
 * exchanged for an HttpOnly, SameSite=Strict cookie; the cookie acting as
 * its key on /api/v1 (team, scopes; the fast path's routes and the Effect
 * app's alike); changes refused without the CSRF token or from another
 * origin; revocation ending the session as soon as the key stops working;
 * another team's session seeing nothing of the first team's; sign-out; the
 * sign-in rate limit per client address.
 */
import { statSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { createApiKey, revokeApiKey } from "../../src/app/Keys.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { CONSOLE_CSP } from "../../src/server/console.ts"
import { call, makeKey, setSettings, sharedDaemon } from "./daemon.ts"

let dirs: { configDir: string; dataDir: string }
let acme: string
let globex: string

const daemon = sharedDaemon((copied) => {
  dirs = copied
  setSettings(dirs, [[["rateLimits", "signIn"], { requests: 3, windowSeconds: 60 }]])
  acme = makeKey(dirs, "acme", allScopes)
  globex = makeKey(dirs, "globex", allScopes)
})

beforeAll(async () => {
  const created = await call(daemon, "POST", "/api/v1/offers", {
    key: acme,
    body: { id: "api-console-offer", name: "Console offer", targetGroups: ["universities"], status: "active" }
  })
  expect(created.status).toBe(201)
}, 30_000)

interface Session {
  readonly cookie: string
  readonly setCookie: string
  readonly body: { team: string; scopes: Array<string>; keyId: string; expiresAt: string; csrfToken: string }
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  // biome-ignore lint/suspicious/noExplicitAny: tests read answer bodies field by field
  readonly body: any
}

let addresses = 0
/** A loopback address no sign-in came from yet: sign-ins are limited per client address. */
const freshAddress = () => {
  addresses++
  return `127.0.${1 + Math.floor(addresses / 250)}.${1 + (addresses % 250)}`
}

/** `POST /console/session` from a chosen loopback address (fetch cannot choose it). */
const postSession = (
  body: string,
  options: { localAddress?: string; headers?: Record<string, string> } = {}
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const url = new URL(daemon.url)
    const sent = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        localAddress: options.localAddress ?? freshAddress(),
        method: "POST",
        path: "/console/session",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...options.headers }
      },
      (response) => {
        let text = ""
        response.on("data", (chunk) => {
          text += String(chunk)
        })
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: text === "" ? undefined : JSON.parse(text)
          })
        )
      }
    )
    sent.on("error", reject)
    sent.end(body)
  })

const signIn = async (key: string, headers: Record<string, string> = {}): Promise<Session> => {
  const answer = await postSession(JSON.stringify({ key }), { headers })
  expect(answer.status).toBe(200)
  const setCookie = String(answer.headers["set-cookie"])
  return { setCookie, cookie: setCookie.split(";")[0]!, body: answer.body }
}

/** A request with the session's cookie and no Authorization header. */
const withSession = (
  session: Session,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: boolean; headers?: Record<string, string> } = {}
) =>
  call(daemon, method, path, {
    ...(options.body === undefined ? {} : { body: options.body }),
    headers: {
      cookie: session.cookie,
      ...(options.csrf === true ? { "x-csrf-token": session.body.csrfToken } : {}),
      ...options.headers
    }
  })

const eventually = async (check: () => Promise<boolean>) => {
  const deadline = Date.now() + 10_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("not within 10 s")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("signing in", () => {
  it("exchanges a key for an HttpOnly, SameSite=Strict session cookie and says whose it is", async () => {
    const before = Date.now()
    const response = await postSession(JSON.stringify({ key: acme }))
    expect(response.status).toBe(200)
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(response.headers["content-security-policy"]).toBe(CONSOLE_CSP)
    const body = response.body
    expect(body).toEqual({
      team: "acme",
      scopes: [...allScopes],
      keyId: expect.stringMatching(/^key_/),
      expiresAt: expect.any(String),
      csrfToken: expect.stringMatching(/^[\w-]{43}$/)
    })
    // console.sessionMinutes: 60 by default.
    const lasts = Date.parse(body.expiresAt) - before
    expect(lasts).toBeGreaterThan(59 * 60_000)
    expect(lasts).toBeLessThanOrEqual(60 * 60_000 + 1000)
    const cookie = String(response.headers["set-cookie"])
    expect(cookie).toMatch(/^campusgate_console=[\w.-]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=(3599|3600)$/)
    // The key itself is in neither the cookie nor the answer.
    expect(cookie).not.toContain(acme)
    expect(JSON.stringify(body)).not.toContain(acme)
  })

  it("signs sessions with a secret kept in the data directory, readable by its owner only", async () => {
    await signIn(acme)
    expect(statSync(join(dirs.dataDir, "console-secret")).mode & 0o777).toBe(0o600)
  })

  it("marks the cookie Secure when a TLS-terminating proxy says the browser came over https", async () => {
    const session = await signIn(acme, { "x-forwarded-proto": "https" })
    expect(session.setCookie).toMatch(/; Secure$/)
  })

  it("refuses a bad key with a 401 problem, and a body without a key with a 400", async () => {
    const bad = await postSession(JSON.stringify({ key: `${acme.slice(0, -2)}xx` }))
    expect(bad).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    expect(bad.headers["set-cookie"]).toBeUndefined()
    expect(await postSession(JSON.stringify({ token: acme }))).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_ERROR" }
    })
    expect(await postSession("{")).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } })
  })

  it("answers 413 to a body past the size limit, sent in chunks with no length declared", async () => {
    const url = new URL(daemon.url)
    const answer = await new Promise<{ status: number; body: { code?: string } }>((resolve, reject) => {
      const sent = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          localAddress: freshAddress(),
          method: "POST",
          path: "/console/session",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" }
        },
        (response) => {
          let text = ""
          response.on("data", (chunk) => {
            text += String(chunk)
          })
          response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text) }))
        }
      )
      // The server may stop reading once it has answered: the rest of the body has nowhere to go.
      sent.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error)
      })
      const chunk = Buffer.alloc(64 * 1024, "a")
      sent.write('{"key":"')
      for (let written = 0; written < 10 * 1024 * 1024; written += chunk.length) sent.write(chunk)
      sent.end('"}')
    })
    expect(answer).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } })
  })

  it("answers the live session again for a reload, and 401 without one", async () => {
    const session = await signIn(acme)
    const again = await withSession(session, "GET", "/console/session")
    expect(again.status).toBe(200)
    expect(again.body).toEqual(session.body)
    expect((await call(daemon, "GET", "/console/session")).status).toBe(401)
    // A cookie that was tampered with is no session, and is removed.
    const [name, token] = session.cookie.split("=")
    const tampered = `${name}=${token!.slice(0, -1)}${token!.endsWith("A") ? "B" : "A"}`
    const refused = await call(daemon, "GET", "/console/session", { headers: { cookie: tampered } })
    expect(refused).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    expect(refused.headers.get("set-cookie")).toMatch(/^campusgate_console=; .*Max-Age=0/)
  })
})

describe("the session on /api/v1", () => {
  it("reads with the cookie alone, as the key's team", async () => {
    const session = await signIn(acme)
    const offers = await withSession(session, "GET", "/api/v1/offers?limit=100")
    expect(offers.status).toBe(200)
    const ids = offers.body.data.map((offer: { id: string }) => offer.id)
    expect(ids).toContain("acme-student-discount")
    expect(ids).toContain("api-console-offer")
    expect(ids).not.toContain("globex-campus-pass")
  })

  it("refuses a change without the CSRF token (403 CSRF_FAILED), on the fast path's routes and the others", async () => {
    const session = await signIn(acme)
    for (const [method, path, body] of [
      ["POST", "/api/v1/validate/target-group", { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }],
      ["POST", "/api/v1/validate/offer", { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }],
      ["PATCH", "/api/v1/offers/api-console-offer", { status: "paused" }]
    ] as const) {
      const refused = await withSession(session, method, path, { body })
      expect(refused.status, path).toBe(403)
      expect(refused.body).toMatchObject({
        code: "CSRF_FAILED",
        type: "https://campusgate.dev/problems/csrf-failed",
        requestId: expect.any(String)
      })
      const wrong = await withSession(session, method, path, { body, headers: { "x-csrf-token": "x".repeat(43) } })
      expect(wrong.status).toBe(403)
    }
    expect((await call(daemon, "GET", "/api/v1/offers/api-console-offer", { key: acme })).body.status).toBe("active")
  })

  it("makes the change with the token, from the daemon's own origin or with no Origin", async () => {
    const session = await signIn(acme)
    const validated = await withSession(session, "POST", "/api/v1/validate/target-group", {
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" },
      csrf: true,
      headers: { origin: daemon.url }
    })
    expect(validated).toMatchObject({ status: 200, body: { isValid: true } })
    // Drawn on the key's own budget, as with the key.
    expect(validated.headers.get("ratelimit-policy")).toBe('"validate";q=6000;w=60')
    const paused = await withSession(session, "PATCH", "/api/v1/offers/api-console-offer", {
      body: { status: "paused" },
      csrf: true
    })
    expect(paused).toMatchObject({ status: 200, body: { status: "paused" } })
    const resumed = await withSession(session, "PATCH", "/api/v1/offers/api-console-offer", {
      body: { status: "active" },
      csrf: true
    })
    expect(resumed).toMatchObject({ status: 200, body: { status: "active" } })
  })

  it("is answered alike by the fast path (a body of declared length) and the Effect app (a chunked body)", async () => {
    const session = await signIn(acme)
    const body = JSON.stringify({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })
    const send = (whole: boolean, csrf: boolean): Promise<Answer> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = { cookie: session.cookie, "content-type": "application/json" }
        if (csrf) headers["x-csrf-token"] = session.body.csrfToken
        if (whole) headers["content-length"] = String(Buffer.byteLength(body))
        const url = new URL("/api/v1/validate/target-group", daemon.url)
        const outgoing = httpRequest(url, { method: "POST", headers }, (response) => {
          let text = ""
          response.on("data", (chunk) => {
            text += String(chunk)
          })
          response.on("end", () => {
            const { requestId: _, ...answer } = JSON.parse(text)
            resolve({ status: response.statusCode!, headers: response.headers, body: answer })
          })
        })
        outgoing.on("error", reject)
        if (whole) outgoing.end(body)
        else {
          outgoing.write(body.slice(0, 10))
          setTimeout(() => outgoing.end(body.slice(10)), 20)
        }
      })
    for (const csrf of [true, false]) {
      const fast = await send(true, csrf)
      const effect = await send(false, csrf)
      expect(fast.status).toBe(csrf ? 200 : 403)
      expect(effect.status).toBe(fast.status)
      expect(effect.body).toEqual(fast.body)
      expect(effect.headers["ratelimit-policy"]).toEqual(fast.headers["ratelimit-policy"])
    }
  })

  it("refuses a change from another origin even with the token", async () => {
    const session = await signIn(acme)
    for (const origin of ["https://evil.samples.com", daemon.url.replace("http:", "https:"), "null"]) {
      const refused = await withSession(session, "POST", "/api/v1/validate/target-group", {
        body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" },
        csrf: true,
        headers: { origin }
      })
      expect(refused.status, origin).toBe(403)
      expect(refused.body.code).toBe("CSRF_FAILED")
    }
  })

  it("keeps the key's scopes", async () => {
    const reader = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: ["offers:read"] })
    await eventually(async () => (await call(daemon, "GET", "/api/v1/offers", { key: reader.key })).status === 200)
    const session = await signIn(reader.key)
    expect(session.body.scopes).toEqual(["offers:read"])
    const refused = await withSession(session, "POST", "/api/v1/validate/target-group", {
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" },
      csrf: true
    })
    expect(refused).toMatchObject({ status: 403, body: { code: "INSUFFICIENT_SCOPE" } })
  })

  it("leaves requests with an Authorization header to the header", async () => {
    const session = await signIn(acme)
    const badKey = await withSession(session, "GET", "/api/v1/offers", {
      headers: { authorization: "Bearer cgk_not-a-key" }
    })
    expect(badKey).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    // With a key, a change needs no CSRF token whatever cookie comes along.
    const withKey = await withSession(session, "POST", "/api/v1/validate/target-group", {
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" },
      headers: { authorization: `Bearer ${acme}` }
    })
    expect(withKey.status).toBe(200)
  })

  it("shows another team's session none of the first team's offers", async () => {
    const session = await signIn(globex)
    expect(session.body.team).toBe("globex")
    const offers = await withSession(session, "GET", "/api/v1/offers?limit=100")
    expect(offers.status).toBe(200)
    const ids: Array<string> = offers.body.data.map((offer: { id: string }) => offer.id)
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.filter((id) => id.startsWith("acme") || id === "api-console-offer")).toEqual([])
    expect((await withSession(session, "GET", "/api/v1/offers/api-console-offer")).status).toBe(404)
    expect((await withSession(session, "GET", "/api/v1/offers/acme-student-discount/status")).status).toBe(404)
  })

  it("ends a session as soon as its key is revoked", async () => {
    const doomed = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: ["offers:read"] })
    await eventually(async () => (await call(daemon, "GET", "/api/v1/offers", { key: doomed.key })).status === 200)
    const session = await signIn(doomed.key)
    expect((await withSession(session, "GET", "/api/v1/offers")).status).toBe(200)
    revokeApiKey({ ...dirs, id: doomed.id })
    await eventually(async () => (await call(daemon, "GET", "/api/v1/offers", { key: doomed.key })).status === 401)
    const refused = await withSession(session, "GET", "/api/v1/offers")
    expect(refused).toMatchObject({
      status: 401,
      body: { code: "INVALID_API_KEY", detail: expect.stringMatching(/revoked/) }
    })
    expect((await withSession(session, "GET", "/console/session")).status).toBe(401)
  })
})

describe("signing out", () => {
  it("needs the CSRF token to end a live session, then removes the cookie", async () => {
    const session = await signIn(acme)
    const refused = await withSession(session, "DELETE", "/console/session")
    expect(refused).toMatchObject({ status: 403, body: { code: "CSRF_FAILED" } })
    const ended = await withSession(session, "DELETE", "/console/session", { csrf: true })
    expect(ended.status).toBe(204)
    expect(ended.headers.get("set-cookie")).toBe("campusgate_console=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0")
    // Without a session there is nothing to protect: the cookie is removed all the same.
    expect((await call(daemon, "DELETE", "/console/session")).status).toBe(204)
  })

  it("ends the session itself: a copy of the cookie taken before is refused afterwards, by either path", async () => {
    const session = await signIn(acme)
    const validation = { body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }, csrf: true }
    expect((await withSession(session, "GET", "/api/v1/offers")).status).toBe(200)
    expect((await withSession(session, "POST", "/api/v1/validate/target-group", validation)).status).toBe(200)
    expect((await withSession(session, "DELETE", "/console/session", { csrf: true })).status).toBe(204)
    // The copy: same cookie, same CSRF token, sent after the browser dropped its own.
    const read = await withSession(session, "GET", "/api/v1/offers")
    expect(read).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    // A body of declared length, which the fast path takes when the credentials hold.
    const change = await withSession(session, "POST", "/api/v1/validate/target-group", validation)
    expect(change).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    expect((await withSession(session, "GET", "/console/session")).status).toBe(401)
    // Other sessions of the same key go on.
    expect((await withSession(await signIn(acme), "GET", "/api/v1/offers")).status).toBe(200)
  })
})

describe("the sign-in rate limit", () => {
  it("counts sign-ins per client address, good keys and bad, and answers 429 with Retry-After past the budget", async () => {
    const body = JSON.stringify({ key: "cgk_wrong" })
    const localAddress = freshAddress()
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await postSession(body, { localAddress }))
    // A good key counts as well, and is refused past the budget like a bad one.
    answers.push(await postSession(JSON.stringify({ key: acme }), { localAddress }))
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 429])
    expect(Number(answers[3]!.headers["retry-after"])).toBeGreaterThan(0)
    // Another address has its own budget.
    expect(answers[3]!.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" })
    // Another address has its own budget.
    expect((await postSession(JSON.stringify({ key: acme }))).status).toBe(200)
  })
})
