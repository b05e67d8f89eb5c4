import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import { describe, expect, it } from "vitest"
import { apiEndpoints } from "../../src/api/Api.ts"
import { rateLimitBucketOf } from "../../src/api/rateLimits.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { call, makeKey, sharedDaemon } from "./daemon.ts"

const keyNames = ["bulk", "otherBulk", "validate", "mixed", "headers", "reload", "jobs", "refused"] as const
const keys = {} as Record<(typeof keyNames)[number], string>

/** The shipped config with single validations lowered from 6000 to 5 per minute; bulk keeps the spec's 10. */
const withValidateLimit = (configDir: string, requests: number) => {
  const file = join(configDir, "campusgate.yaml")
  const text = readFileSync(file, "utf8").replace(
    /validate:\n {4}requests: \d+/,
    `validate:\n    requests: ${requests}`
  )
  writeFileSync(file, text)
}

const daemon = sharedDaemon((dirs) => {
  withValidateLimit(dirs.configDir, 5)
  for (const name of keyNames) {
    keys[name] = makeKey(dirs, "acme", allScopes)
  }
})

const bulk = (key: string) =>
  call(daemon, "POST", "/api/v1/validate/bulk", {
    key,
    body: { emails: ["jane@ox.ac.uk", "bob@mit.edu"], targetGroupId: "uk-students" }
  })

const validate = (key: string) =>
  call(daemon, "POST", "/api/v1/validate/target-group", {
    key,
    body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
  })

describe("rate limits per API key", () => {
  it("answers the 11th bulk call in a minute with 429, Retry-After, the RateLimit fields and the problem", async () => {
    for (let i = 1; i <= 10; i++) {
      const ok = await bulk(keys.bulk)
      expect(ok.status).toBe(200)
      expect(ok.headers.get("ratelimit-policy")).toBe('"bulk";q=10;w=60')
      expect(ok.headers.get("ratelimit")).toMatch(new RegExp(`^"bulk";r=${10 - i};t=\\d+$`))
    }
    const refused = await bulk(keys.bulk)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(refused.body).toMatchObject({
      status: 429,
      code: "RATE_LIMIT_EXCEEDED",
      requestId: refused.headers.get("x-request-id"),
      retryAfterSeconds: expect.any(Number)
    })
    const retryAfter = refused.body.retryAfterSeconds as number
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get("retry-after")).toBe(String(retryAfter))
    expect(refused.headers.get("ratelimit-policy")).toBe('"bulk";q=10;w=60')
    expect(refused.headers.get("ratelimit")).toBe(`"bulk";r=0;t=${retryAfter}`)
    // Still refused: a refusal does not count, nor does it reset the window.
    expect((await bulk(keys.bulk)).status).toBe(429)
  })

  it("gives job submissions a budget apart from synchronous bulk calls", async () => {
    for (let i = 0; i < 10; i++) expect((await bulk(keys.jobs)).status).toBe(200)
    expect((await bulk(keys.jobs)).status).toBe(429)
    const submit = () =>
      call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key: keys.jobs,
        body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
      })
    const accepted = await submit()
    expect(accepted.status).toBe(202)
    expect(accepted.headers.get("ratelimit-policy")).toBe('"jobs";q=10;w=60')
    for (let i = 1; i < 10; i++) expect((await submit()).status).toBe(202)
    const refused = await submit()
    expect(refused).toMatchObject({ status: 429, body: { code: "RATE_LIMIT_EXCEEDED" } })
    expect(refused.headers.get("ratelimit")).toMatch(/^"jobs";r=0;t=\d+$/)
  })

  it("counts accepted jobs only: refused submissions and idempotent replays give their unit back", async () => {
    const submit = (body: unknown, headers: Record<string, string> = {}) =>
      call(daemon, "POST", "/api/v1/validate/bulk-async", { key: keys.refused, body, headers })
    const good = { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
    // Refused: no target, an unknown target group, another media type.
    for (let i = 0; i < 4; i++) expect((await submit({ emails: ["jane@ox.ac.uk"] })).status).toBe(400)
    for (let i = 0; i < 4; i++) {
      expect((await submit({ emails: ["jane@ox.ac.uk"], targetGroupId: "no-such-group" })).status).toBe(404)
    }
    for (let i = 0; i < 4; i++) {
      const answer = await call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
        key: keys.refused,
        rawBody: "jane@ox.ac.uk",
        headers: { "content-type": "application/pdf" }
      })
      expect(answer.status).toBe(415)
    }
    // Replays of one accepted job.
    const first = await submit(good, { "idempotency-key": "one-job" })
    expect(first.status).toBe(202)
    for (let i = 0; i < 4; i++) {
      const again = await submit(good, { "idempotency-key": "one-job" })
      expect(again).toMatchObject({ status: 202, body: { jobId: first.body.jobId } })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
    }
    // Nine more jobs fit the budget of ten; the eleventh does not.
    for (let i = 1; i < 10; i++) expect((await submit(good)).status).toBe(202)
    expect((await submit(good)).status).toBe(429)
  })

  it("gives each key its own budget", async () => {
    for (let i = 0; i < 10; i++) await bulk(keys.otherBulk)
    expect((await bulk(keys.otherBulk)).status).toBe(429)
    const another = await bulk(keys.mixed)
    expect(another.status).toBe(200)
    expect(another.headers.get("ratelimit")).toMatch(/^"bulk";r=9;t=\d+$/)
  })

  it("counts single validations in their own bucket, with their own limit from the config", async () => {
    // The key's bulk budget is spent; its single validations are not affected.
    for (let i = 0; i < 10; i++) await bulk(keys.validate)
    expect((await bulk(keys.validate)).status).toBe(429)
    for (let i = 1; i <= 5; i++) {
      const ok =
        i % 2 === 0
          ? await call(daemon, "POST", "/api/v1/validate/offer", {
              key: keys.validate,
              body: { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }
            })
          : await validate(keys.validate)
      expect(ok.status).toBe(200)
      expect(ok.headers.get("ratelimit-policy")).toBe('"validate";q=5;w=60')
      expect(ok.headers.get("ratelimit")).toMatch(new RegExp(`^"validate";r=${5 - i};t=\\d+$`))
    }
    const refused = await validate(keys.validate)
    expect(refused).toMatchObject({ status: 429, body: { code: "RATE_LIMIT_EXCEEDED" } })
    expect(refused.headers.get("ratelimit-policy")).toBe('"validate";q=5;w=60')
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("sends the RateLimit fields on every answer to an authenticated request, errors included", async () => {
    const invalid = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: keys.headers,
      body: { email: 42 }
    })
    expect(invalid.status).toBe(400)
    expect(invalid.headers.get("ratelimit")).toMatch(/^"validate";r=4;t=\d+$/)
    const notFound = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: keys.headers,
      body: { email: "jane@ox.ac.uk", targetGroupId: "no-such-group" }
    })
    expect(notFound.status).toBe(404)
    expect(notFound.headers.get("ratelimit-policy")).toBe('"validate";q=5;w=60')
    // Without a valid key there is no budget to report.
    const anonymous = await validate("cgk_not-a-real-key")
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("ratelimit")).toBeNull()
  })

  it("takes limits from the live config: a reload changes them", async () => {
    expect((await validate(keys.reload)).headers.get("ratelimit-policy")).toBe('"validate";q=5;w=60')
    withValidateLimit(daemon.configDir, 50)
    const deadline = Date.now() + 10_000
    let policy: string | null = null
    while (Date.now() < deadline) {
      policy = (await validate(keys.reload)).headers.get("ratelimit-policy")
      if (policy === '"validate";q=50;w=60') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(policy).toBe('"validate";q=50;w=60')
  })
})

describe("rate-limit buckets of the contract", () => {
  const endpoints = apiEndpoints

  it("puts synchronous bulk endpoints in the bulk bucket, job submissions in jobs, single validations in validate", () => {
    const bulkEndpoints = endpoints.filter((endpoint) => endpoint.path.includes("bulk"))
    expect(bulkEndpoints.length).toBeGreaterThan(0)
    for (const endpoint of bulkEndpoints) {
      const bucket = endpoint.path.endsWith("/bulk-async") ? "jobs" : "bulk"
      expect([endpoint.path, rateLimitBucketOf(endpoint.annotations)]).toEqual([endpoint.path, bucket])
    }
    for (const path of ["/validate/target-group", "/validate/offer"]) {
      const endpoint = endpoints.find((candidate) => candidate.path.endsWith(path))
      expect(rateLimitBucketOf(endpoint!.annotations)).toBe("validate")
    }
  })

  it("uses the default bucket for an endpoint that names none", () => {
    expect(rateLimitBucketOf(Context.empty())).toBe("default")
  })
})
