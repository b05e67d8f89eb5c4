/**
 * The Promise client (`createCampusgateClient`) against the real daemon:
 * the contract's types and problem classes without Effect, lists without an
 * options object and iterated page after page, versions on resources, a
 * streamed job followed with `waitForJob`, the team's API keys, and examples/promise-client.ts
 * run with the built package.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import {
  Conflict,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  TooManyRequests,
  Unauthorized
} from "../../src/api/problems.ts"
import { CampusgateClientError, createCampusgateClient } from "../../src/api/promiseClient.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { freePort, makeKey, setSettings, sharedDaemon } from "./daemon.ts"

let key: string
let limitedKey: string
let client: ReturnType<typeof createCampusgateClient>

const daemon = sharedDaemon((dirs) => {
  setSettings(dirs, [
    [["server", "maxBodyBytes"], 4096],
    [["rateLimits", "jobs", "requests"], 1000],
    // One bulk call a second per key: the retry test waits for the next.
    [["rateLimits", "bulk"], { requests: 1, windowSeconds: 1 }]
  ])
  key = makeKey(dirs, "acme", allScopes)
  limitedKey = makeKey(dirs, "acme", allScopes)
})

beforeAll(async () => {
  client = createCampusgateClient({ baseUrl: daemon.url, apiKey: key })
}, 30_000)

describe("the Promise client", () => {
  it("validates and rejects with the contract's problem classes", async () => {
    const result = await client.validation.targetGroup({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })
    expect(result).toMatchObject({ isValid: true, matchedDomain: "ox.ac.uk" })
    const missing = await client.validation
      .targetGroup({ email: "jane@ox.ac.uk", targetGroupId: "no-such-group" })
      .catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(NotFound)
    expect(missing).toMatchObject({ code: "NOT_FOUND", status: 404, requestId: expect.any(String) })
    // A problem the endpoint does not declare (a body over server.maxBodyBytes) is still its class.
    const emails = Array.from({ length: 200 }, (_, i) => `student${i}@ox.ac.uk`)
    const tooLarge = await client.validation.bulk({ emails, targetGroupId: "uk-students" }).catch((e: unknown) => e)
    expect(tooLarge).toBeInstanceOf(PayloadTooLarge)
    expect(tooLarge).toMatchObject({ code: "PAYLOAD_TOO_LARGE" })
  })

  it("tries a call answered 429 again after its Retry-After when asked to, and rejects at once otherwise", async () => {
    const request = { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
    const plain = createCampusgateClient({ baseUrl: daemon.url, apiKey: limitedKey })
    await plain.validation.bulk(request)
    await expect(plain.validation.bulk(request)).rejects.toBeInstanceOf(TooManyRequests)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const patient = createCampusgateClient({ baseUrl: daemon.url, apiKey: limitedKey, retry: { retries: 2 } })
    await patient.validation.bulk(request)
    const started = performance.now()
    const second = await patient.validation.bulk(request)
    expect(second.summary.total).toBe(1)
    expect(performance.now() - started).toBeGreaterThan(500)
    // A wait longer than it is allowed to take rejects at once.
    const hasty = createCampusgateClient({ baseUrl: daemon.url, apiKey: limitedKey, retry: { maxDelayMs: 100 } })
    await expect(hasty.validation.bulk(request)).rejects.toBeInstanceOf(TooManyRequests)
  })

  it("rejects with CampusgateClientError when the daemon cannot be reached", async () => {
    const nowhere = createCampusgateClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: key })
    await expect(nowhere.offers.list()).rejects.toBeInstanceOf(CampusgateClientError)
  })

  it("lists without an options object, and iterates every page", async () => {
    const page = await client.offers.list()
    expect(page.data.length).toBeGreaterThan(0)
    for (let i = 0; i < 4; i++) {
      await client.offers.create({
        id: `paged-${i}`,
        name: `Paged ${i}`,
        targetGroups: ["universities"],
        status: "draft"
      })
    }
    const ids: Array<string> = []
    for await (const offer of client.offers.all({ limit: 2 })) ids.push(offer.id)
    expect(ids).toEqual(expect.arrayContaining(["paged-0", "paged-1", "paged-2", "paged-3", "acme-student-discount"]))
    expect(new Set(ids).size).toBe(ids.length)
    expect((await client.targetGroups.list()).data.map((group) => group.id)).toContain("uk-students")
  })

  it("reads and writes resources with their versions; a stale write is PreconditionFailed", async () => {
    const created = await client.targetGroups.create({
      id: "client-group",
      name: "Client group",
      criteria: { domains: { allow: ["client.example"] } } as never
    })
    expect(created.etag).toMatch(/^"/)
    const changed = await client.targetGroups.update(
      "client-group",
      { criteria: { email: { rejectFreeMail: true } } },
      { ifMatch: created.etag }
    )
    expect(changed.resource.criteria.email.rejectFreeMail).toBe(true)
    const stale = await client.targetGroups
      .update("client-group", { name: "Lost" }, { ifMatch: created.etag })
      .catch((error: unknown) => error)
    expect(stale).toBeInstanceOf(PreconditionFailed)
    expect((await client.targetGroups.get("client-group")).etag).toBe(changed.etag)
    await client.targetGroups.delete("client-group", { ifMatch: changed.etag })
    await expect(client.targetGroups.get("client-group")).rejects.toBeInstanceOf(NotFound)
  })

  it("streams a job from an async iterable, waits for it with progress, and iterates its results", async () => {
    async function* lines() {
      for (let i = 0; i < 2500; i++) yield `${JSON.stringify({ email: `s${i % 2000}@ox.ac.uk`, row: i })}\n`
    }
    const accepted = await client.jobs.submitStream({ format: "ndjson", body: lines(), targetGroupId: "uk-students" })
    expect(accepted.status).toBe("queued")
    const seen: Array<string> = []
    const job = await client.jobs.waitForJob(accepted.jobId, {
      initialDelayMs: 10,
      onProgress: (current) => seen.push(current.status)
    })
    expect(job).toMatchObject({ status: "completed", counts: { valid: 2500, duplicates: 500 }, inputColumns: ["row"] })
    expect(seen.at(-1)).toBe("completed")
    let count = 0
    let duplicates = 0
    for await (const row of client.jobs.results(job.jobId, { pageSize: 700 })) {
      expect(row.columns).toEqual({ row: count })
      if (row.duplicateOf !== undefined) {
        duplicates++
        expect(row.duplicateOf).toBe(count - 2000 + 1)
      }
      count++
    }
    expect(count).toBe(2500)
    expect(duplicates).toBe(500)
    const listed: Array<string> = []
    for await (const each of client.jobs.all({ status: "completed" })) listed.push(each.jobId)
    expect(listed).toContain(job.jobId)
  })

  it("searches institutions and reviews an unknown domain, approving it for the team", async () => {
    const found = await client.institutions.search({ q: "oxford", country: "GB" })
    expect(found.data.some((institution) => institution.domains.includes("ox.ac.uk"))).toBe(true)
    expect((await client.institutions.get("cs.ox.ac.uk")).matchedDomain).toBe("ox.ac.uk")
    await expect(client.institutions.get("no-institution-here.com")).rejects.toBeInstanceOf(NotFound)
    const domain = "promise-client-college.de"
    const refused = await client.validation.targetGroup({ email: `jane@${domain}`, targetGroupId: "universities" })
    expect(refused.reasonCode).toBe("UNKNOWN_INSTITUTION")
    const pending = await client.institutionReviews.list({ status: "pending", sort: "recent" })
    expect(pending.data.map((review) => review.domain)).toContain(domain)
    const approved = await client.institutionReviews.approve(domain, {
      name: "Promise Client College",
      type: "college",
      country: "DE"
    })
    expect(approved).toMatchObject({ domain, status: "approved", approval: { team: "acme" } })
    expect((await client.institutionReviews.get(domain)).status).toBe("approved")
    const rejected = await client.institutionReviews.reject(domain, { reason: "a test school" })
    expect(rejected.rejection).toMatchObject({ reason: "a test school" })
  })

  it("makes, lists and revokes the team's keys; a key asking for more than it holds is Forbidden", async () => {
    const made = await client.keys.create({ name: "from the client", scopes: ["validate:target-groups", "keys:write"] })
    expect(made.key).toMatch(/^cgk_/)
    const withIt = createCampusgateClient({ baseUrl: daemon.url, apiKey: made.key })
    expect(
      (await withIt.validation.targetGroup({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })).isValid
    ).toBe(true)
    const more = await withIt.keys.create({ scopes: ["offers:write"] }).catch((error: unknown) => error)
    expect(more).toBeInstanceOf(Forbidden)
    expect(more).toMatchObject({ code: "INSUFFICIENT_SCOPE", missingScopes: ["offers:write"] })
    const listed: Array<string> = []
    for await (const entry of client.keys.all({ limit: 2 })) listed.push(entry.id)
    expect(listed).toContain(made.id)
    const revoked = await client.keys.revoke(made.id)
    expect(revoked).toMatchObject({ id: made.id, status: "revoked" })
    await expect(
      withIt.validation.targetGroup({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })
    ).rejects.toBeInstanceOf(Unauthorized)
    await expect(client.keys.revoke(made.id)).rejects.toBeInstanceOf(Conflict)
  })

  it("stops waiting when the signal aborts", async () => {
    const accepted = await client.jobs.submit({ emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" })
    const controller = new AbortController()
    controller.abort(new Error("stop"))
    await expect(client.jobs.waitForJob(accepted.jobId, { signal: controller.signal })).rejects.toThrow()
  })
})

describe("examples/promise-client.ts", () => {
  it("runs against the daemon with the built package", async () => {
    const example = fileURLToPath(new URL("../../examples/promise-client.ts", import.meta.url))
    const { stdout } = await promisify(execFile)(process.execPath, [example], {
      env: { ...process.env, CAMPUSGATE_URL: daemon.url, CAMPUSGATE_API_KEY: key }
    })
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
    expect(lines[0]).toEqual({ step: "validate", isValid: true, reasonCode: null })
    expect(lines[1]).toMatchObject({ step: "job", status: "completed", counts: { duplicates: 1 } })
    expect(lines.filter((line) => line.step === "row")).toEqual([
      { step: "row", customerId: "c-41", isValid: true, duplicateOf: null },
      { step: "row", customerId: "c-42", isValid: false, duplicateOf: null },
      { step: "row", customerId: "c-43", isValid: true, duplicateOf: 1 }
    ])
    expect(lines.at(-1)).toMatchObject({ step: "offers", count: expect.any(Number) })
  }, 30_000)
})
