/**
 * `limits.bulkMaxEmails` bounds bulk validation and batch offer processing,
 * and the served OpenAPI document says the bound in force, after a reload too.
 */
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { call, makeKey, setSettings, sharedDaemon } from "./daemon.ts"

let key: string
let dirs: { configDir: string; dataDir: string }

const daemon = sharedDaemon((copied) => {
  dirs = copied
  key = makeKey(dirs, "acme", allScopes)
  setSettings(dirs, [
    [["limits", "bulkMaxEmails"], 3],
    [["rateLimits", "bulk"], { requests: 1000, windowSeconds: 60 }],
    [["rateLimits", "jobs"], { requests: 1000, windowSeconds: 60 }]
  ])
})

const emails = (count: number) => Array.from({ length: count }, (_, i) => `s${i}@ox.ac.uk`)
const bulk = (count: number) =>
  call(daemon, "POST", "/api/v1/validate/bulk", { key, body: { emails: emails(count), targetGroupId: "uk-students" } })
const batch = (count: number) =>
  call(daemon, "POST", "/api/v1/offers/bulk-process", {
    key,
    body: { requests: emails(count).map((email) => ({ offerId: "acme-student-discount", email })) }
  })

const documentedBound = async () => {
  const spec = (await call(daemon, "GET", "/openapi.json")).body
  const bulkOperation = spec.paths["/api/v1/validate/bulk"].post
  const batchOperation = spec.paths["/api/v1/offers/bulk-process"].post
  return {
    emails: bulkOperation.requestBody.content["application/json"].schema.properties.emails.maxItems,
    requests: batchOperation.requestBody.content["application/json"].schema.properties.requests.maxItems,
    summary: bulkOperation.summary
  }
}

describe("limits.bulkMaxEmails", () => {
  it("bounds bulk requests and batches, and the OpenAPI document says so", async () => {
    expect((await bulk(3)).status).toBe(200)
    const tooMany = await bulk(4)
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.errors[0]).toMatchObject({ field: "/emails", code: "TOO_MANY" })
    expect(tooMany.body.errors[0].message).toMatch(/at most 3 emails/)
    expect((await batch(3)).status).toBe(200)
    expect((await batch(4)).body.errors[0]).toMatchObject({ field: "/requests", code: "TOO_MANY" })
    expect(await documentedBound()).toEqual({
      emails: 3,
      requests: 3,
      summary: "Validate up to 3 emails against a target group or an offer"
    })
  })

  it("follows a reload of campusgate.yaml", async () => {
    setSettings(dirs, [[["limits", "bulkMaxEmails"], 5]])
    const deadline = Date.now() + 10_000
    while ((await documentedBound()).emails !== 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect((await bulk(5)).status).toBe(200)
    expect((await bulk(6)).status).toBe(400)
    expect((await documentedBound()).emails).toBe(5)
  })
})
