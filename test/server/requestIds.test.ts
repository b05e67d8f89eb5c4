/**
 * Every problem names its request: the id in the body is the one in the
 * `X-Request-Id` answer header, the client's own when it sent a sane one,
 * whoever made the problem (a handler, the authorisation, the request
 * decoding, the rate limiter, the router, the fast path).
 */
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { call, makeKey, setSettings, sharedDaemon } from "./daemon.ts"

let acme: string
let offersOnly: string

const daemon = sharedDaemon((dirs) => {
  acme = makeKey(dirs, "acme", allScopes)
  offersOnly = makeKey(dirs, "acme", ["offers:read"])
  setSettings(dirs, [[["rateLimits", "default"], { requests: 2, windowSeconds: 60 }]])
})

const single = { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }

type Options = NonNullable<Parameters<typeof call>[3]>

/** Each case's options are made when it runs, once the keys exist. */
const requests: ReadonlyArray<readonly [string, string, string, () => Options]> = [
  [
    "a handler's 404 (fast path)",
    "POST",
    "/api/v1/validate/target-group",
    () => ({ key: acme, body: { ...single, targetGroupId: "nope" } })
  ],
  [
    "a field error (fast path)",
    "POST",
    "/api/v1/validate/target-group",
    () => ({ key: acme, body: { ...single, extra: 1 } })
  ],
  ["a handler's 404", "GET", "/api/v1/offers/nope", () => ({ key: acme })],
  ["a handler's 400", "POST", "/api/v1/validate/bulk", () => ({ key: acme, body: { emails: ["a@b.edu"] } })],
  ["a decoding 400", "POST", "/api/v1/offers", () => ({ key: acme, body: { id: 3 } })],
  ["malformed JSON", "POST", "/api/v1/offers", () => ({ key: acme, rawBody: "{" })],
  [
    "a 409 of the resources",
    "PATCH",
    "/api/v1/offers/acme-student-discount",
    () => ({ key: acme, body: { status: "paused" } })
  ],
  ["a missing key", "GET", "/api/v1/offers", () => ({})],
  ["an unknown key", "GET", "/api/v1/offers", () => ({ key: "cgk_unknown" })],
  ["a missing scope", "GET", "/api/v1/target-groups", () => ({ key: offersOnly })],
  ["no route", "GET", "/api/v1/nothing-here", () => ({})],
  ["a method not allowed", "DELETE", "/api/v1/validate/bulk", () => ({})],
  ["a job not found", "GET", "/api/v1/jobs/job_nope", () => ({ key: acme })]
]

describe("problems", () => {
  it.each(requests)("carry the request id: %s", async (_name, method, path, makeOptions) => {
    const options = makeOptions()
    const generated = await call(daemon, method, path, options)
    expect(generated.status).toBeGreaterThanOrEqual(400)
    expect(generated.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(generated.body.requestId).toBe(generated.headers.get("x-request-id"))
    expect(generated.body.requestId).toMatch(/^[0-9a-f-]{36}$/)
    const chosen = await call(daemon, method, path, { ...options, headers: { "x-request-id": "client-chosen-1" } })
    expect(chosen.body.requestId).toBe("client-chosen-1")
  })

  it("carry the request id when the rate limit refuses, with Retry-After", async () => {
    const key = acme
    let refused: Awaited<ReturnType<typeof call>> | undefined
    for (let i = 0; i < 5 && refused === undefined; i++) {
      const answer = await call(daemon, "GET", "/api/v1/target-groups", {
        key,
        headers: { "x-request-id": `limited-${i}` }
      })
      if (answer.status === 429) refused = answer
    }
    expect(refused?.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", requestId: expect.stringMatching(/^limited-/) })
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})
