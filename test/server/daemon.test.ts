import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { ExplainedCriterion } from "../../src/domain/Explanation.ts"
import { call, makeKey, sharedDaemon } from "./daemon.ts"

let acme: string
let acmeOffersOnly: string
let globex: string

const daemon = sharedDaemon((dirs) => {
  acme = makeKey(dirs, "acme", allScopes)
  acmeOffersOnly = makeKey(dirs, "acme", ["validate:offers"])
  globex = makeKey(dirs, "globex", allScopes)
})

const validateGroup = (email: string, targetGroupId: string, key = acme) =>
  call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId } })

describe("validation endpoints", () => {
  it("validates one email against a target group, explaining the result, with the request id", async () => {
    const ok = await validateGroup("jane@ox.ac.uk", "uk-students")
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({
      isValid: true,
      targetGroup: { id: "uk-students" },
      matchedDomain: "ox.ac.uk",
      validationDetails: { domain: { status: "passed", rule: "listed-domain" } },
      requestId: ok.headers.get("x-request-id")
    })
    const no = await validateGroup("bob@mit.edu", "uk-students")
    expect(no.status).toBe(200)
    expect(no.body).toMatchObject({ isValid: false, reasonCode: "COUNTRY_NOT_ALLOWED", reason: expect.any(String) })
  })

  it("explains the result per criterion with explain: true, the answer otherwise unchanged", async () => {
    const plain = await validateGroup("bob@mit.edu", "uk-students")
    const explained = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: "bob@mit.edu", targetGroupId: "uk-students", explain: true }
    })
    expect(explained.status).toBe(200)
    const { explanation, requestId, ...result } = explained.body
    const { requestId: _, ...plainResult } = plain.body
    expect(result).toEqual(plainResult)
    expect(requestId).toBe(explained.headers.get("x-request-id"))
    expect(explanation.criteria.map((entry: { criterion: string }) => entry.criterion)).toEqual(
      ExplainedCriterion.literals
    )
    expect(explanation.criteria.find((entry: { criterion: string }) => entry.criterion === "geography")).toEqual({
      criterion: "geography",
      outcome: "fail",
      detail: plain.body.reason
    })
    expect(explanation.institution).toMatchObject({
      name: "Massachusetts Institute of Technology",
      country: "US",
      matchedDomain: "mit.edu"
    })
    // explain: false is the plain answer; the offer endpoint takes no explain.
    const unexplained = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: "bob@mit.edu", targetGroupId: "uk-students", explain: false }
    })
    expect(unexplained.body.explanation).toBeUndefined()
    const offer = await call(daemon, "POST", "/api/v1/validate/offer", {
      key: acme,
      body: { email: "bob@mit.edu", offerId: "acme-student-discount", explain: true }
    })
    expect(offer).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
  })

  it("answers INVALID_EMAIL_FORMAT as a 400 with the field error", async () => {
    const bad = await validateGroup("jane.ox.ac.uk", "uk-students")
    expect(bad.status).toBe(400)
    expect(bad.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(bad.body).toMatchObject({
      status: 400,
      code: "INVALID_EMAIL_FORMAT",
      errors: [{ field: "/email", code: "MISSING_AT" }]
    })
  })

  it("validates against an offer: eligible when any of its target groups matches", async () => {
    const result = await call(daemon, "POST", "/api/v1/validate/offer", {
      key: acme,
      body: { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }
    })
    expect(result.status).toBe(200)
    expect(result.body).toMatchObject({ isValid: true, offer: { id: "acme-student-discount", status: "active" } })
    expect(result.body.matchedTargetGroups.length).toBeGreaterThan(0)
  })

  it("validates in bulk, in input order, with per-item failures and a summary", async () => {
    const emails = ["jane@ox.ac.uk", "not an email", "bob@mit.edu"]
    const result = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails, targetGroupId: "uk-students" }
    })
    expect(result.status).toBe(200)
    expect(result.body.results.map((r: { email: string }) => r.email)).toEqual(emails)
    expect(result.body.summary).toMatchObject({ total: 3, valid: 1, invalid: 2, badFormat: 1 })
    // Compact rows by default: the verdict and the facts behind it, no per-criterion details.
    expect(result.body.results[0]).toEqual({
      email: "jane@ox.ac.uk",
      isValid: true,
      matchedDomain: "ox.ac.uk",
      institution: { id: expect.any(String), name: "University of Oxford", country: "GB" }
    })
    expect(result.body.results[1]).toMatchObject({ isValid: false, reasonCode: "INVALID_EMAIL_FORMAT" })
  })

  it("answers full validation results in bulk on request", async () => {
    const emails = ["Jane@OX.ac.uk", "bob@mit.edu"]
    const groups = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails, targetGroupId: "uk-students", details: true }
    })
    expect(groups.status).toBe(200)
    expect(groups.body.results[0]).toMatchObject({ isValid: true, validationDetails: { domain: { status: "passed" } } })
    const offers = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails, offerId: "acme-student-discount", details: true }
    })
    expect(offers.body.results[0]).toMatchObject({ isValid: true, offer: { id: "acme-student-discount" } })
    const rows = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails, offerId: "acme-student-discount" }
    })
    expect(rows.body.results[0]).toMatchObject({
      email: "Jane@OX.ac.uk",
      isValid: true,
      matchedTargetGroups: expect.any(Array)
    })
    expect(rows.body.results[0].validationDetails).toBeUndefined()
  })

  it("refuses more than 1000 emails, pointing to bulk-async", async () => {
    const emails = Array.from({ length: 1001 }, (_, i) => `s${i}@ox.ac.uk`)
    const result = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails, targetGroupId: "uk-students" }
    })
    expect(result.status).toBe(400)
    expect(result.body.errors[0]).toMatchObject({ field: "/emails", code: "TOO_MANY" })
    expect(result.body.errors[0].message).toMatch(/bulk-async/)
  })

  it("serves /v1 as an alias of /api/v1", async () => {
    const result = await call(daemon, "POST", "/v1/validate/target-group", {
      key: acme,
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
    })
    expect(result.status).toBe(200)
    expect(result.body.isValid).toBe(true)
    // An error answered through the alias, and an endpoint only the full pipeline serves.
    const bad = await call(daemon, "POST", "/v1/validate/target-group", { key: acme, rawBody: "{" })
    expect(bad).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } })
    const offers = await call(daemon, "GET", "/v1/offers", { key: acme })
    expect(offers.status).toBe(200)
    expect(offers.body.data.length).toBeGreaterThan(0)
  })
})

describe("authentication and authorisation", () => {
  it("needs a key, a valid one, with the endpoint's scope", async () => {
    const missing = await call(daemon, "POST", "/api/v1/validate/target-group", {
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
    })
    expect(missing).toMatchObject({ status: 401, body: { code: "MISSING_API_KEY" } })
    const invalid = await validateGroup("jane@ox.ac.uk", "uk-students", "cgk_not-a-real-key")
    expect(invalid).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    const scope = await validateGroup("jane@ox.ac.uk", "uk-students", acmeOffersOnly)
    expect(scope).toMatchObject({
      status: 403,
      body: { code: "INSUFFICIENT_SCOPE", requiredScope: "validate:target-groups" }
    })
  })

  it("keeps teams apart: another team's offer or target group is 404", async () => {
    const offer = await call(daemon, "POST", "/api/v1/validate/offer", {
      key: globex,
      body: { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }
    })
    expect(offer).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } })
    const group = await validateGroup("jane@tum.de", "acme-bavaria", globex)
    expect(group).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } })
    // Shared target groups are visible to every team.
    expect((await validateGroup("jane@ox.ac.uk", "uk-students", globex)).status).toBe(200)
  })
})

describe("the 401 challenge", () => {
  it("names the bearer scheme on every 401, the fast path's and the Effect app's, and says when a key was refused", async () => {
    const missing = 'Bearer realm="campusgate"'
    const refused = 'Bearer realm="campusgate", error="invalid_token"'
    const fast = await call(daemon, "POST", "/api/v1/validate/target-group", {
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
    })
    expect(fast.status).toBe(401)
    expect(fast.headers.get("www-authenticate")).toBe(missing)
    const app = await call(daemon, "GET", "/api/v1/offers")
    expect(app.headers.get("www-authenticate")).toBe(missing)
    const bad = await call(daemon, "GET", "/api/v1/offers", { key: "cgk_not-a-key" })
    expect(bad).toMatchObject({ status: 401, body: { code: "INVALID_API_KEY" } })
    expect(bad.headers.get("www-authenticate")).toBe(refused)
    const badFast = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: "cgk_not-a-key",
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
    })
    expect(badFast.headers.get("www-authenticate")).toBe(refused)
  })
})

describe("malformed and hostile requests", () => {
  it("answers MALFORMED_JSON for a body that does not parse, and for non-UTF-8 bytes", async () => {
    const broken = await call(daemon, "POST", "/api/v1/validate/target-group", { key: acme, rawBody: '{"email": ' })
    expect(broken).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } })
    const bytes = new Uint8Array([0x7b, 0x22, 0x65, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])
    const binary = await call(daemon, "POST", "/api/v1/validate/target-group", { key: acme, rawBody: bytes })
    expect(binary.status).toBe(400)
    expect(["MALFORMED_JSON", "VALIDATION_ERROR"]).toContain(binary.body.code)
  })

  it("answers VALIDATION_ERROR with a field error per problem: wrong types, missing and unknown fields", async () => {
    const result = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: 42, extra: true }
    })
    expect(result.status).toBe(400)
    expect(result.body.code).toBe("VALIDATION_ERROR")
    expect(result.body.errors).toEqual(
      expect.arrayContaining([
        { field: "/email", code: "INVALID_TYPE", message: expect.any(String) },
        { field: "/targetGroupId", code: "REQUIRED", message: "this field is required" },
        { field: "/extra", code: "UNKNOWN_FIELD", message: "unknown field" }
      ])
    )
  })

  it("survives deep nesting and huge arrays with a 400, not a crash", async () => {
    const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`
    const nested = await call(daemon, "POST", "/api/v1/validate/target-group", { key: acme, rawBody: deep })
    expect(nested.status).toBe(400)
    const huge = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key: acme,
      body: { emails: Array.from({ length: 20_000 }, () => 1), targetGroupId: "uk-students" }
    })
    expect(huge.status).toBe(400)
    expect((await validateGroup("jane@ox.ac.uk", "uk-students")).status).toBe(200)
  })

  it("answers 404, 405 and 415 as problems", async () => {
    expect(await call(daemon, "GET", "/nowhere")).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } })
    const wrongMethod = await call(daemon, "GET", "/api/v1/validate/target-group", { key: acme })
    expect(wrongMethod).toMatchObject({ status: 405, body: { code: "METHOD_NOT_ALLOWED" } })
    expect(wrongMethod.headers.get("allow")).toBe("POST")
    const text = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      rawBody: "hello",
      headers: { "content-type": "text/plain" }
    })
    expect(text).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } })
  })
})

describe("request ids, logs and docs", () => {
  it("says each step of its start at info level, in order, with the time since the process began", () => {
    const steps = [
      "opening the stores",
      "loading the configuration",
      "configuration loaded and engine built",
      "starting",
      "listening"
    ]
    const lines = steps.map((msg) => daemon.lines.find((line) => line.msg === msg))
    expect(lines.map((line) => line?.level)).toEqual(steps.map(() => "info"))
    const times = lines.slice(0, 3).map((line) => line!.sinceStartMs as number)
    expect(times).toEqual([...times].sort((a, b) => a - b))
    expect(lines[2]).toMatchObject({ targetGroups: expect.any(Number), offers: expect.any(Number) })
    expect(daemon.lines.indexOf(lines[3]!)).toBeLessThan(daemon.lines.indexOf(lines[4]!))
  })

  it("sums its start up in one line after listening: each phase's milliseconds, the index's load and CPU", () => {
    const listening = daemon.lines.findIndex((line) => line.msg === "listening")
    const summary = daemon.lines[listening + 1]
    expect(summary).toMatchObject({
      level: "info",
      msg: "start phases",
      modules: expect.any(Number),
      settings: expect.any(Number),
      stores: expect.any(Number),
      configuration: expect.any(Number),
      watching: expect.any(Number),
      listen: expect.any(Number),
      institutionIndex: expect.any(Number),
      institutionIndexForm: expect.stringMatching(/^(built-in|imported|cached|compiled)$/),
      cpuMs: expect.any(Number)
    })
    // The index loads within the configuration's phase; the phases add up to the time since the process began.
    expect(summary!.institutionIndex).toBeLessThanOrEqual(summary!.configuration as number)
    const phases = ["modules", "settings", "stores", "configuration", "watching", "listen"]
    const total = phases.reduce((sum, name) => sum + (summary![name] as number), 0)
    expect(Math.abs(total - (summary!.sinceStartMs as number))).toBeLessThan(5)
  })

  it("keeps a sane inbound X-Request-Id and replaces an insane one", async () => {
    const kept = await call(daemon, "GET", "/nowhere", { headers: { "x-request-id": "checkout-1234" } })
    expect(kept.headers.get("x-request-id")).toBe("checkout-1234")
    expect(kept.body.requestId).toBe("checkout-1234")
    const replaced = await call(daemon, "GET", "/nowhere", { headers: { "x-request-id": "bad id\twith spaces" } })
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("logs one JSON line per request with the key id, never the key or the email", async () => {
    await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: "logged.person@ox.ac.uk", targetGroupId: "uk-students" },
      headers: { "x-request-id": "log-check-1" }
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const line = daemon.lines.find((entry) => entry.requestId === "log-check-1")
    expect(line).toMatchObject({ msg: "request", method: "POST", path: "/api/v1/validate/target-group", status: 200 })
    expect(line!.keyId).toMatch(/^key_/)
    const all = JSON.stringify(daemon.lines)
    expect(all).not.toContain(acme)
    expect(all).not.toContain("logged.person")
  })

  it("serves the OpenAPI document, the docs page and health checks", async () => {
    const openapi = await call(daemon, "GET", "/openapi.json")
    expect(openapi.status).toBe(200)
    expect(openapi.body.openapi).toMatch(/^3\.1/)
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(["/api/v1/validate/target-group", "/api/v1/validate/offer", "/api/v1/validate/bulk"])
    )
    expect((await fetch(`${daemon.url}/docs`)).status).toBe(200)
    expect(await call(daemon, "GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } })
    expect(await call(daemon, "GET", "/livez")).toMatchObject({ status: 200, body: { status: "ok" } })
    expect(await call(daemon, "GET", "/readyz")).toMatchObject({ status: 200, body: { config: { stale: false } } })
  })
})
