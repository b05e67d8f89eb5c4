/**
 * The institution review queue end to end, on the real daemon (files):
 * an unknown domain met by a validation is listed with its counts and
 * candidate; approving it makes the team's next validation at the domain
 * valid within a second (another team's stays refused), writes
 * `datasets/reviewed.yaml` and survives a restart; rejecting ends it.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { call, copyConfig, type Daemon, makeKey, startDaemon, waitForJob, within } from "./daemon.ts"

/** A domain no source lists, named like a college. */
const DOMAIN = "hochschule-musterstadt.de"

let dirs: { configDir: string; dataDir: string }
let daemon: Daemon
let acme = ""
let globex = ""
let validateOnly = ""

const validate = (email: string, key = acme, targetGroupId = "universities") =>
  call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId } })

const approve = (
  domain: string,
  key = acme,
  body: unknown = { name: "Hochschule Musterstadt", type: "university", country: "DE" }
) => call(daemon, "POST", `/api/v1/institution-reviews/${domain}/approve`, { key, body })

const reject = (domain: string, reason = "not an institution", key = acme) =>
  call(daemon, "POST", `/api/v1/institution-reviews/${domain}/reject`, { key, body: { reason } })

describe("the institution review queue (files)", () => {
  beforeAll(async () => {
    dirs = copyConfig()
    const scopes = [
      "validate:target-groups",
      "validate:offers",
      "validate:bulk",
      "jobs:read",
      "institutions:review"
    ] as const
    acme = makeKey(dirs, "acme", scopes)
    globex = makeKey(dirs, "globex", scopes)
    validateOnly = makeKey(dirs, "acme", ["validate:target-groups"])
    daemon = await startDaemon(dirs)
  }, 30_000)

  afterAll(async () => {
    await daemon?.stop("SIGKILL")
  })

  it("lists an unknown domain a validation refused, with its counts and candidate, domain only", async () => {
    const refused = await validate(`jane.doe@${DOMAIN}`)
    expect(refused.status).toBe(200)
    expect(refused.body.isValid).toBe(false)
    expect(refused.body.reasonCode).toBe("UNKNOWN_INSTITUTION")
    await validate(`john@${DOMAIN}`)
    const list = await call(daemon, "GET", "/api/v1/institution-reviews", { key: acme })
    expect(list.status).toBe(200)
    const item = list.body.data.find((review: { domain: string }) => review.domain === DOMAIN)
    expect(item).toMatchObject({ domain: DOMAIN, status: "pending", count: 2, accepted: 0 })
    expect(item.days).toEqual([{ day: new Date().toISOString().slice(0, 10), count: 2 }])
    expect(item.candidate).toEqual(refused.body.validationDetails.domain.candidate)
    expect(item.nearest.length).toBeLessThanOrEqual(5)
    expect(
      item.decisions.find((decision: { targetGroup: string }) => decision.targetGroup === "universities")
    ).toMatchObject({
      isValid: false,
      reasonCode: "UNKNOWN_INSTITUTION"
    })
    expect(list.body.dropped).toBe(0)
    expect(JSON.stringify(list.body)).not.toContain("jane.doe")
    // Another team's queue does not hold it.
    const other = await call(daemon, "GET", "/api/v1/institution-reviews", { key: globex })
    expect(other.body.data.map((review: { domain: string }) => review.domain)).not.toContain(DOMAIN)
    const one = await call(daemon, "GET", `/api/v1/institution-reviews/${DOMAIN}`, { key: acme })
    expect(one.status).toBe(200)
    expect(one.body.count).toBe(2)
  })

  it("answers 400 with field errors for a bad payload, 403 without the scope, 404 for a domain never met, 409 for a listed one", async () => {
    const bad = await approve(DOMAIN, acme, { name: "", type: "castle" })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("VALIDATION_ERROR")
    expect(bad.body.errors.length).toBeGreaterThan(0)
    expect(bad.body.errors.map((error: { field: string }) => error.field).join(" ")).toMatch(/name|type/)
    const noReason = await call(daemon, "POST", `/api/v1/institution-reviews/${DOMAIN}/reject`, { key: acme, body: {} })
    expect(noReason.status).toBe(400)
    const badDomain = await approve("not a domain")
    expect(badDomain.status).toBe(400)
    expect((await call(daemon, "GET", "/api/v1/institution-reviews", { key: validateOnly })).status).toBe(403)
    expect((await approve(DOMAIN, validateOnly)).status).toBe(403)
    expect((await call(daemon, "GET", "/api/v1/institution-reviews/never-met-college.de", { key: acme })).status).toBe(
      404
    )
    const listed = await approve("ox.ac.uk")
    expect(listed.status).toBe(409)
  })

  it("serves an approval to the team within a second, not to another team, and writes datasets/reviewed.yaml", async () => {
    const answer = await approve(DOMAIN)
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      domain: DOMAIN,
      status: "approved",
      approval: { domain: DOMAIN, team: "acme", name: "Hochschule Musterstadt", type: "university", country: "DE" }
    })
    const took = await within(async () => (await validate(`jane@${DOMAIN}`)).body.isValid === true, 1000)
    expect(took).toBeLessThan(1000)
    expect((await validate(`jane@${DOMAIN}`, globex)).body.isValid).toBe(false)
    const file = join(dirs.configDir, "datasets", "reviewed.yaml")
    expect(parse(readFileSync(file, "utf8"))).toEqual([
      expect.objectContaining({ name: "Hochschule Musterstadt", domains: [DOMAIN], team: "acme", type: "university" })
    ])
    const approved = await call(daemon, "GET", "/api/v1/institution-reviews?status=approved", { key: acme })
    expect(approved.body.data.map((review: { domain: string }) => review.domain)).toEqual([DOMAIN])
  })

  it("keeps the approval across a restart", async () => {
    await daemon.stop("SIGTERM")
    daemon = await startDaemon(dirs)
    expect((await validate(`jane@${DOMAIN}`)).body.isValid).toBe(true)
    expect((await call(daemon, "GET", `/api/v1/institution-reviews/${DOMAIN}`, { key: acme })).body.status).toBe(
      "approved"
    )
  }, 30_000)

  it("leaves one consistent decision when approvals and rejections of a domain arrive at once", async () => {
    const domain = "kunstakademie-beispiel.de"
    await validate(`a@${domain}`)
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? approve(domain) : reject(domain)))
    )
    for (const answer of answers) expect(answer.status).toBe(200)
    const final = await call(daemon, "GET", `/api/v1/institution-reviews/${domain}`, { key: acme })
    expect(["approved", "rejected"]).toContain(final.body.status)
    expect(final.body.approval === undefined).toBe(final.body.status === "rejected")
    expect(final.body.rejection === undefined).toBe(final.body.status === "approved")
    const file = join(dirs.configDir, "datasets", "reviewed.yaml")
    const inFile = existsSync(file) && readFileSync(file, "utf8").includes(domain)
    expect(inFile).toBe(final.body.status === "approved")
    expect((await validate(`a@${domain}`)).body.isValid).toBe(final.body.status === "approved")
  })

  it("a rejection ends an approval and is listed with its reason", async () => {
    const answer = await reject(DOMAIN, "a private tutoring company")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ status: "rejected", rejection: { reason: "a private tutoring company" } })
    expect(answer.body.approval).toBeUndefined()
    await within(async () => (await validate(`jane@${DOMAIN}`)).body.isValid === false, 1000)
    const rejected = await call(daemon, "GET", "/api/v1/institution-reviews?status=rejected", { key: acme })
    expect(rejected.body.data.map((review: { domain: string }) => review.domain)).toContain(DOMAIN)
    expect(readFileSync(join(dirs.configDir, "datasets", "reviewed.yaml"), "utf8")).not.toContain(DOMAIN)
  })

  it("counts the unknown domains a job's rows met, each row once, for the job's team", async () => {
    const domain = "fachhochschule-jobtown.de"
    const emails = [
      "a@fachhochschule-jobtown.de",
      "b@fachhochschule-jobtown.de",
      "c@students.fachhochschule-jobtown.de"
    ]
    const submitted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { emails: [...emails, "d@ox.ac.uk"], targetGroupId: "universities" }
    })
    expect(submitted.status).toBe(202)
    const job = await waitForJob(daemon, acme, submitted.body.jobId)
    expect(job.status).toBe("completed")
    const counted = await within(async () => {
      const one = await call(daemon, "GET", `/api/v1/institution-reviews/${domain}`, { key: acme })
      return one.status === 200 && one.body.count === 3
    }, 5000)
    expect(counted).toBeLessThan(5000)
    const other = await call(daemon, "GET", `/api/v1/institution-reviews/${domain}`, { key: globex })
    expect(other.status).toBe(404)
  })
})
