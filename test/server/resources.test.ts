import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { call, copyConfig, makeKey, sharedDaemon, startDaemon, waitForLine } from "./daemon.ts"

let acme: string
let acmeReadOnly: string
let globex: string

const daemon = sharedDaemon((dirs) => {
  acme = makeKey(dirs, "acme", allScopes)
  acmeReadOnly = makeKey(dirs, "acme", ["offers:read", "target-groups:read"])
  globex = makeKey(dirs, "globex", allScopes)
})

const offer = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  name: `Offer ${id}`,
  targetGroups: ["universities"],
  status: "active",
  ...fields
})

const createOffer = (body: unknown, key = acme) => call(daemon, "POST", "/api/v1/offers", { key, body })
const patchOffer = (id: string, status: string, key = acme) =>
  call(daemon, "PATCH", `/api/v1/offers/${id}`, { key, body: { status } })
const validateOffer = (email: string, offerId: string, key = acme) =>
  call(daemon, "POST", "/api/v1/validate/offer", { key, body: { email, offerId } })
const ids = (page: { data: Array<{ id: string }> }) => page.data.map((item) => item.id)

describe("POST /offers", () => {
  it("creates an offer of the caller's team that serves at once and is stored in the data directory", async () => {
    const created = await createOffer(offer("api-created", { description: "made over HTTP" }))
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: "api-created",
      team: "acme",
      name: "Offer api-created",
      description: "made over HTTP",
      targetGroups: ["universities"],
      status: "active",
      effectiveStatus: "active",
      source: "api"
    })
    expect(existsSync(join(daemon.dataDir, "offers", "api-created.yaml"))).toBe(true)
    const eligible = await validateOffer("jane@mit.edu", "api-created")
    expect(eligible).toMatchObject({ status: 200, body: { isValid: true, offer: { id: "api-created" } } })
    expect((await call(daemon, "GET", "/api/v1/offers/api-created", { key: acme })).body).toEqual(created.body)
  })

  it("answers 409 CONFLICT for an id that exists, in the config directory, the data directory or another team", async () => {
    await createOffer(offer("api-taken"))
    for (const id of ["api-taken", "acme-student-discount", "globex-campus-pass"]) {
      const again = await createOffer(offer(id))
      expect(again).toMatchObject({ status: 409, body: { code: "CONFLICT", requestId: expect.any(String) } })
      expect(again.body.detail).toContain(id)
    }
    const fromConfig = await createOffer(offer("acme-student-discount"))
    expect(fromConfig.body.detail).toBe(
      'An offer "acme-student-discount" is already defined in the config directory; choose another id.'
    )
  })

  it("refuses another team and target groups the team cannot use, with field paths", async () => {
    const result = await createOffer(offer("api-bad-refs", { team: "globex", targetGroups: ["nope", "globex-campus"] }))
    expect(result.status).toBe(400)
    expect(result.body.code).toBe("VALIDATION_ERROR")
    expect(result.body.errors).toEqual([
      { field: "/team", code: "WRONG_TEAM", message: expect.stringContaining('"acme"') },
      { field: "/targetGroups/0", code: "UNKNOWN_TARGET_GROUP", message: expect.stringContaining('"nope"') },
      { field: "/targetGroups/1", code: "UNKNOWN_TARGET_GROUP", message: expect.stringContaining('"globex-campus"') }
    ])
    expect((await call(daemon, "GET", "/api/v1/offers/api-bad-refs", { key: acme })).status).toBe(404)
    // The caller's own team may be spelled out; a shared and an own target group are both usable.
    const own = await createOffer(
      offer("api-own-team", { team: "acme", targetGroups: ["uk-students", "acme-bavaria"] })
    )
    expect(own.status).toBe(201)
  })

  it("reports every problem of the body with its field path", async () => {
    const result = await createOffer({
      id: "Not A Slug",
      targetGroups: [],
      status: "live",
      startsAt: "2027-01-01T00:00:00Z",
      endsAt: "2026-01-01T00:00:00Z",
      colour: "red"
    })
    expect(result.status).toBe(400)
    const fields = result.body.errors.map((error: { field: string }) => error.field)
    expect(fields).toEqual(expect.arrayContaining(["/id", "/name", "/targetGroups", "/status", "/colour"]))
    const window = await createOffer(offer("api-window", { startsAt: "2027-01-01T00:00:00Z", endsAt: "2026-01-01Z" }))
    expect(window.body.errors).toEqual([expect.objectContaining({ field: "/endsAt" })])
    const order = await createOffer(
      offer("api-window", { startsAt: "2027-01-01T00:00:00Z", endsAt: "2026-01-01T00:00:00Z" })
    )
    expect(order.body.errors).toEqual([
      { field: "/endsAt", code: "INVALID_VALUE", message: "endsAt must be after startsAt" }
    ])
  })

  it("needs the offers:write scope", async () => {
    const result = await createOffer(offer("api-no-scope"), acmeReadOnly)
    expect(result).toMatchObject({ status: 403, body: { code: "INSUFFICIENT_SCOPE", requiredScope: "offers:write" } })
  })
})

describe("GET /offers", () => {
  it("lists only the caller's team's offers, ordered by id, with effectiveStatus and source", async () => {
    const globexList = await call(daemon, "GET", "/api/v1/offers", { key: globex })
    expect(globexList.status).toBe(200)
    expect(ids(globexList.body)).toEqual(["globex-campus-pass", "globex-uk-launch"])
    expect(globexList.body.nextCursor).toBeNull()
    expect(globexList.body.data[0]).toMatchObject({ status: "paused", effectiveStatus: "paused", source: "config" })
    const acmeList = await call(daemon, "GET", "/api/v1/offers?limit=100", { key: acmeReadOnly })
    expect(acmeList.body.data.every((item: { team: string }) => item.team === "acme")).toBe(true)
    expect(ids(acmeList.body)).toEqual([...ids(acmeList.body)].sort())
  })

  it("pages with limit and an opaque cursor, never repeating or skipping", async () => {
    for (const n of [1, 2, 3, 4, 5]) await createOffer(offer(`api-page-${n}`))
    const all = ids((await call(daemon, "GET", "/api/v1/offers?limit=100", { key: acme })).body)
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${cursor}`
      const page = await call(daemon, "GET", `/api/v1/offers?${query}`, { key: acme })
      expect(page.status).toBe(200)
      expect(page.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...ids(page.body))
      cursor = page.body.nextCursor
      pages++
    } while (cursor !== null && pages < 50)
    expect(seen).toEqual(all)
    expect(pages).toBe(Math.ceil(all.length / 2))
  })

  it("rejects a bad limit or cursor with the query field", async () => {
    for (const limit of ["0", "101", "2.5", "ten"]) {
      const result = await call(daemon, "GET", `/api/v1/offers?limit=${limit}`, { key: acme })
      expect(result.status).toBe(400)
      expect(result.body.errors[0]).toMatchObject({
        field: "/query/limit",
        message: "limit is a whole number from 1 to 100"
      })
    }
    const cursor = await call(daemon, "GET", "/api/v1/offers?cursor=!!!", { key: acme })
    expect(cursor).toMatchObject({
      status: 400,
      body: { errors: [{ field: "/query/cursor", code: "INVALID_CURSOR" }] }
    })
  })

  it("filters by effective status", async () => {
    await createOffer(offer("api-future", { startsAt: "2099-01-01T00:00:00Z" }))
    await createOffer(offer("api-past", { startsAt: "2000-01-01T00:00:00Z", endsAt: "2001-01-01T00:00:00Z" }))
    const scheduled = await call(daemon, "GET", "/api/v1/offers?status=scheduled", { key: acme })
    expect(ids(scheduled.body)).toContain("api-future")
    expect(scheduled.body.data.every((item: { effectiveStatus: string }) => item.effectiveStatus === "scheduled")).toBe(
      true
    )
    const expired = await call(daemon, "GET", "/api/v1/offers?status=expired", { key: acme })
    expect(ids(expired.body)).toEqual(["api-past"])
    const draft = await call(daemon, "GET", "/api/v1/offers?status=draft", { key: globex })
    expect(ids(draft.body)).toEqual(["globex-uk-launch"])
    const bad = await call(daemon, "GET", "/api/v1/offers?status=live", { key: acme })
    expect(bad).toMatchObject({ status: 400, body: { errors: [{ field: "/query/status" }] } })
  })
})

describe("GET /offers/{id} and /offers/{id}/status", () => {
  it("keeps teams apart: another team's offer is 404, like an unknown one", async () => {
    for (const path of ["/api/v1/offers/acme-student-discount", "/api/v1/offers/acme-student-discount/status"]) {
      expect(await call(daemon, "GET", path, { key: globex })).toMatchObject({
        status: 404,
        body: { code: "NOT_FOUND" }
      })
      expect((await call(daemon, "GET", path, { key: acme })).status).toBe(200)
    }
    expect((await call(daemon, "GET", "/api/v1/offers/no-such-offer", { key: acme })).status).toBe(404)
  })

  it("answers the effective status, why, and the window", async () => {
    await createOffer(offer("api-status-future", { startsAt: "2099-12-01T00:00:00Z", endsAt: "2100-01-01T00:00:00Z" }))
    const future = await call(daemon, "GET", "/api/v1/offers/api-status-future/status", { key: acmeReadOnly })
    expect(future).toMatchObject({ status: 200 })
    expect(future.body).toEqual({
      id: "api-status-future",
      status: "scheduled",
      statusReason: "starts 2099-12-01T00:00:00Z",
      window: { startsAt: "2099-12-01T00:00:00Z", endsAt: "2100-01-01T00:00:00Z" },
      usage: expect.objectContaining({ validations: 0, eligible: 0, firstValidatedAt: null })
    })
    const open = await call(daemon, "GET", "/api/v1/offers/acme-student-discount/status", { key: acme })
    expect(open.body).toMatchObject({ status: "active", window: { startsAt: null, endsAt: null } })
    expect(open.body.statusReason).toEqual(expect.any(String))
    const paused = await call(daemon, "GET", "/api/v1/offers/globex-campus-pass/status", { key: globex })
    expect(paused.body).toMatchObject({ status: "paused", statusReason: expect.stringMatching(/paused/) })
  })
})

describe("PATCH /offers/{id}", () => {
  it("pauses, resumes and archives an API-created offer; archived is final", async () => {
    await createOffer(offer("api-lifecycle"))
    const paused = await patchOffer("api-lifecycle", "paused")
    expect(paused).toMatchObject({ status: 200, body: { status: "paused", effectiveStatus: "paused", source: "api" } })
    expect((await validateOffer("jane@mit.edu", "api-lifecycle")).body).toMatchObject({
      isValid: false,
      reasonCode: "OFFER_NOT_ACTIVE"
    })
    expect((await patchOffer("api-lifecycle", "active")).body.status).toBe("active")
    expect((await validateOffer("jane@mit.edu", "api-lifecycle")).body.isValid).toBe(true)
    const draft = await patchOffer("api-lifecycle", "draft")
    expect(draft).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect((await patchOffer("api-lifecycle", "archived")).body.status).toBe("archived")
    for (const status of ["active", "paused", "draft"]) {
      const back = await patchOffer("api-lifecycle", status)
      expect(back).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
      expect(back.body.detail).toMatch(/archiving is final/)
    }
    // Setting the status it has changes nothing.
    expect(await patchOffer("api-lifecycle", "archived")).toMatchObject({ status: 200, body: { status: "archived" } })
  })

  it("publishes a draft", async () => {
    await createOffer(offer("api-draft", { status: "draft" }))
    expect((await validateOffer("jane@mit.edu", "api-draft")).body.reasonCode).toBe("OFFER_NOT_ACTIVE")
    expect((await patchOffer("api-draft", "active")).body).toMatchObject({ status: "active" })
    expect((await validateOffer("jane@mit.edu", "api-draft")).body.isValid).toBe(true)
  })

  it("leaves config-directory offers to git (409) and other teams' offers alone (404)", async () => {
    const config = await patchOffer("acme-student-discount", "paused")
    expect(config).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect(config.body.detail).toMatch(/offers\/acme-student-discount\.yaml.*git/)
    expect((await call(daemon, "GET", "/api/v1/offers/acme-student-discount", { key: acme })).body.status).toBe(
      "active"
    )
    await createOffer(offer("api-acme-only"))
    expect(await patchOffer("api-acme-only", "paused", globex)).toMatchObject({ status: 404 })
    expect(await patchOffer("api-acme-only", "paused", acmeReadOnly)).toMatchObject({ status: 403 })
    const bad = await call(daemon, "PATCH", "/api/v1/offers/api-acme-only", {
      key: acme,
      body: { status: "expired", nmae: "x" }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(["/nmae", "/status"])
  })
})

describe("changing and deleting offers", () => {
  const patch = (id: string, body: unknown, headers: Record<string, string> = {}, key = acme) =>
    call(daemon, "PATCH", `/api/v1/offers/${id}`, { key, body, headers })

  it("answers 201 with Location and ETag; GET gives the same ETag", async () => {
    const created = await createOffer(offer("api-located"))
    expect(created.status).toBe(201)
    expect(created.headers.get("location")).toBe("/api/v1/offers/api-located")
    const etag = created.headers.get("etag")
    expect(etag).toMatch(/^"[\w.-]+"$/)
    const read = await call(daemon, "GET", created.headers.get("location")!, { key: acme })
    expect(read.headers.get("etag")).toBe(etag)
  })

  it("answers 304 Not Modified to a read whose If-None-Match names the current version, 200 once it changed", async () => {
    const created = await createOffer(offer("api-cached"))
    const etag = created.headers.get("etag")!
    const cached = await call(daemon, "GET", "/api/v1/offers/api-cached", {
      key: acme,
      headers: { "if-none-match": etag }
    })
    expect(cached.status).toBe(304)
    expect(cached.headers.get("etag")).toBe(etag)
    expect(cached.body).toBeUndefined()
    // Weak comparison, lists and * (RFC 9110, 13.1.2).
    for (const ifNoneMatch of [`W/${etag}`, `"other", ${etag}`, "*"]) {
      const answer = await call(daemon, "GET", "/api/v1/offers/api-cached", {
        key: acme,
        headers: { "if-none-match": ifNoneMatch }
      })
      expect(answer.status, ifNoneMatch).toBe(304)
    }
    expect((await patch("api-cached", { name: "Renamed" }, { "if-match": etag })).status).toBe(200)
    const changed = await call(daemon, "GET", "/api/v1/offers/api-cached", {
      key: acme,
      headers: { "if-none-match": etag }
    })
    expect(changed).toMatchObject({ status: 200, body: { name: "Renamed" } })
  })

  it("changes any field with JSON merge patch semantics: given fields replace, null removes, the rest stays", async () => {
    await createOffer(
      offer("api-merge", { description: "before", startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z" })
    )
    const changed = await patch("api-merge", {
      name: "Renamed",
      description: null,
      targetGroups: ["uk-students"],
      endsAt: null,
      effectiveStatus: "ignored",
      source: "ignored"
    })
    expect(changed.status).toBe(200)
    expect(changed.body).toEqual({
      id: "api-merge",
      team: "acme",
      name: "Renamed",
      targetGroups: ["uk-students"],
      status: "active",
      startsAt: "2026-01-01T00:00:00Z",
      effectiveStatus: "active",
      source: "api"
    })
    // It serves at once: uk-students only now.
    expect((await validateOffer("jane@mit.edu", "api-merge")).body.isValid).toBe(false)
    expect((await validateOffer("jane@ox.ac.uk", "api-merge")).body.isValid).toBe(true)
    // application/merge-patch+json is the patch's own media type.
    const typed = await call(daemon, "PATCH", "/api/v1/offers/api-merge", {
      key: acme,
      rawBody: JSON.stringify({ description: "after" }),
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(typed).toMatchObject({ status: 200, body: { description: "after", name: "Renamed" } })
  })

  it("checks the changed offer as a new one: id and team stay, target groups must be usable, the window ordered", async () => {
    await createOffer(offer("api-checked"))
    const moved = await patch("api-checked", { id: "api-other", team: "globex" })
    expect(moved.status).toBe(400)
    expect(moved.body.errors).toEqual([
      expect.objectContaining({ field: "/id", code: "IMMUTABLE" }),
      expect.objectContaining({ field: "/team", code: "IMMUTABLE" })
    ])
    const unusable = await patch("api-checked", { targetGroups: ["globex-campus"] })
    expect(unusable.body.errors).toEqual([
      expect.objectContaining({ field: "/targetGroups/0", code: "UNKNOWN_TARGET_GROUP" })
    ])
    const window = await patch("api-checked", { startsAt: "2027-01-01T00:00:00Z", endsAt: "2026-01-01T00:00:00Z" })
    expect(window.status).toBe(400)
    const required = await patch("api-checked", { name: null })
    expect(required.body.errors).toEqual([expect.objectContaining({ field: "/name" })])
    expect((await call(daemon, "GET", "/api/v1/offers/api-checked", { key: acme })).body.name).toBe("Offer api-checked")
  })

  it("refuses a stale write with 412 PRECONDITION_FAILED when If-Match names an older version", async () => {
    const created = await createOffer(offer("api-versioned"))
    const first = created.headers.get("etag")!
    const changed = await patch("api-versioned", { name: "First change" }, { "if-match": first })
    expect(changed.status).toBe(200)
    const second = changed.headers.get("etag")!
    expect(second).not.toBe(first)
    // A second operator still holding the first version loses, and is told to read again.
    const stale = await patch("api-versioned", { name: "Lost change" }, { "if-match": first })
    expect(stale).toMatchObject({ status: 412, body: { code: "PRECONDITION_FAILED", status: 412 } })
    expect(stale.body.detail).toMatch(/read it again/)
    expect((await call(daemon, "GET", "/api/v1/offers/api-versioned", { key: acme })).body.name).toBe("First change")
    // A list of tags, or *, matches; a weak tag never does (If-Match compares strongly).
    expect((await patch("api-versioned", { name: "Third" }, { "if-match": `"x", ${second}` })).status).toBe(200)
    expect((await patch("api-versioned", { name: "Any" }, { "if-match": "*" })).status).toBe(200)
    const current = (await call(daemon, "GET", "/api/v1/offers/api-versioned", { key: acme })).headers.get("etag")!
    expect((await patch("api-versioned", { name: "Weak" }, { "if-match": `W/${current}` })).status).toBe(412)
    const deleteStale = await call(daemon, "DELETE", "/api/v1/offers/api-versioned", {
      key: acme,
      headers: { "if-match": first }
    })
    expect(deleteStale.status).toBe(412)
  })

  it("deletes an API-created offer (204); validations then answer 404; config offers stay (409)", async () => {
    await createOffer(offer("api-deleted"))
    const deleted = await call(daemon, "DELETE", "/api/v1/offers/api-deleted", { key: acme })
    expect(deleted.status).toBe(204)
    expect(existsSync(join(daemon.dataDir, "offers", "api-deleted.yaml"))).toBe(false)
    expect((await call(daemon, "GET", "/api/v1/offers/api-deleted", { key: acme })).status).toBe(404)
    expect((await validateOffer("jane@mit.edu", "api-deleted")).status).toBe(404)
    expect((await call(daemon, "DELETE", "/api/v1/offers/api-deleted", { key: acme })).status).toBe(404)
    const config = await call(daemon, "DELETE", "/api/v1/offers/acme-student-discount", { key: acme })
    expect(config).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect(config.body.detail).toMatch(/config directory \(offers\/acme-student-discount\.yaml\).*git/)
    await createOffer(offer("api-not-theirs"))
    expect((await call(daemon, "DELETE", "/api/v1/offers/api-not-theirs", { key: globex })).status).toBe(404)
    expect((await call(daemon, "DELETE", "/api/v1/offers/api-not-theirs", { key: acmeReadOnly })).status).toBe(403)
  })
})

describe("target groups", () => {
  const group = (id: string, fields: Record<string, unknown> = {}) => ({
    id,
    name: `Group ${id}`,
    criteria: { domains: { allow: ["api-college.samples"] } },
    ...fields
  })
  const createGroup = (body: unknown, key = acme) => call(daemon, "POST", "/api/v1/target-groups", { key, body })

  it("creates a target group of the caller's team that can be validated against at once", async () => {
    const created = await createGroup(group("api-group"))
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ id: "api-group", team: "acme", source: "api" })
    expect(existsSync(join(daemon.dataDir, "target-groups", "api-group.yaml"))).toBe(true)
    const result = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: "kim@api-college.samples", targetGroupId: "api-group" }
    })
    expect(result).toMatchObject({ status: 200, body: { isValid: true } })
    // An offer can use it right away, and another team cannot see it.
    expect((await createOffer(offer("api-with-group", { targetGroups: ["api-group"] }))).status).toBe(201)
    expect((await call(daemon, "GET", "/api/v1/target-groups/api-group", { key: globex })).status).toBe(404)
    const globexOffer = await createOffer(offer("api-globex-steal", { targetGroups: ["api-group"] }), globex)
    expect(globexOffer.body.errors).toEqual([expect.objectContaining({ field: "/targetGroups/0" })])
  })

  it("answers 409 for an existing id and refuses another team, with field paths", async () => {
    for (const id of ["uk-students", "acme-bavaria", "globex-campus"]) {
      expect(await createGroup(group(id))).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    }
    await createGroup(group("api-group-twice"))
    expect((await createGroup(group("api-group-twice"))).status).toBe(409)
    const team = await createGroup(group("api-group-team", { team: "globex" }))
    expect(team.body.errors).toEqual([expect.objectContaining({ field: "/team", code: "WRONG_TEAM" })])
    const bad = await createGroup(group("api-group-bad", { criteria: { domains: { allow: ["Not A Domain"] } } }))
    expect(bad.status).toBe(400)
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: "/criteria/domains/allow/0" })])
    const scope = await createGroup(group("api-group-scope"), acmeReadOnly)
    expect(scope).toMatchObject({ status: 403, body: { requiredScope: "target-groups:write" } })
  })

  it("lists the team's own and the shared groups, paged", async () => {
    const acmeList = ids((await call(daemon, "GET", "/api/v1/target-groups?limit=100", { key: acmeReadOnly })).body)
    expect(acmeList).toEqual(expect.arrayContaining(["acme-bavaria", "acme-partners", "uk-students", "universities"]))
    expect(acmeList).not.toContain("globex-campus")
    expect(acmeList).toEqual([...acmeList].sort())
    const globexList = ids((await call(daemon, "GET", "/api/v1/target-groups", { key: globex })).body)
    expect(globexList).toEqual(["globex-campus", "uk-students", "universities"])
    const first = await call(daemon, "GET", "/api/v1/target-groups?limit=2", { key: globex })
    expect(ids(first.body)).toEqual(["globex-campus", "uk-students"])
    const second = await call(daemon, "GET", `/api/v1/target-groups?limit=2&cursor=${first.body.nextCursor}`, {
      key: globex
    })
    expect(second.body).toMatchObject({ data: [{ id: "universities" }], nextCursor: null })
  })

  it("changes an API-created group with merge patch semantics: criteria merged member by member", async () => {
    const created = await createGroup(group("api-patched", { description: "before" }))
    expect(created.headers.get("location")).toBe("/api/v1/target-groups/api-patched")
    const changed = await call(daemon, "PATCH", "/api/v1/target-groups/api-patched", {
      key: acme,
      body: {
        description: null,
        criteria: { patterns: { allow: ["*.patched.samples"] }, email: { rejectFreeMail: true } }
      },
      headers: { "if-match": created.headers.get("etag")! }
    })
    expect(changed.status).toBe(200)
    expect(changed.body.description).toBeUndefined()
    expect(changed.body.criteria).toMatchObject({
      domains: { allow: ["api-college.samples"] },
      patterns: { allow: ["*.patched.samples"] },
      email: { rejectFreeMail: true, rejectDisposable: true }
    })
    expect(changed.headers.get("etag")).not.toBe(created.headers.get("etag"))
    const valid = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key: acme,
      body: { email: "kim@cs.patched.samples", targetGroupId: "api-patched" }
    })
    expect(valid.body.isValid).toBe(true)
    const bad = await call(daemon, "PATCH", "/api/v1/target-groups/api-patched", {
      key: acme,
      body: { criteria: { domains: { allow: ["Not A Domain"] }, emial: {} } }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      "/criteria/domains/allow/0",
      "/criteria/emial"
    ])
    // Config-defined and shared groups are changed in git; another team's is not found.
    const config = await call(daemon, "PATCH", "/api/v1/target-groups/acme-bavaria", { key: acme, body: { name: "x" } })
    expect(config).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect(config.body.detail).toMatch(/target-groups\/acme-bavaria\.yaml.*git/)
    expect(
      (await call(daemon, "PATCH", "/api/v1/target-groups/uk-students", { key: acme, body: { name: "x" } })).status
    ).toBe(409)
    expect(
      (await call(daemon, "PATCH", "/api/v1/target-groups/api-patched", { key: globex, body: { name: "x" } })).status
    ).toBe(404)
  })

  it("deletes an API-created group; while offers use it, 409 names them", async () => {
    await createGroup(group("api-in-use"))
    await createOffer(offer("api-user-one", { targetGroups: ["api-in-use"] }))
    await createOffer(offer("api-user-two", { targetGroups: ["universities", "api-in-use"] }))
    const inUse = await call(daemon, "DELETE", "/api/v1/target-groups/api-in-use", { key: acme })
    expect(inUse).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    expect(inUse.body.detail).toMatch(/"api-user-one", "api-user-two"/)
    await call(daemon, "DELETE", "/api/v1/offers/api-user-one", { key: acme })
    await call(daemon, "PATCH", "/api/v1/offers/api-user-two", { key: acme, body: { targetGroups: ["universities"] } })
    const deleted = await call(daemon, "DELETE", "/api/v1/target-groups/api-in-use", { key: acme })
    expect(deleted.status).toBe(204)
    expect(existsSync(join(daemon.dataDir, "target-groups", "api-in-use.yaml"))).toBe(false)
    expect((await call(daemon, "GET", "/api/v1/target-groups/api-in-use", { key: acme })).status).toBe(404)
    const config = await call(daemon, "DELETE", "/api/v1/target-groups/uk-students", { key: acme })
    expect(config.status).toBe(409)
  })

  it("reads one: its own and shared ones, not another team's", async () => {
    const shared = await call(daemon, "GET", "/api/v1/target-groups/uk-students", { key: globex })
    expect(shared).toMatchObject({ status: 200, body: { id: "uk-students", source: "config" } })
    expect(shared.body.team).toBeUndefined()
    expect((await call(daemon, "GET", "/api/v1/target-groups/acme-bavaria", { key: globex })).status).toBe(404)
    expect((await call(daemon, "GET", "/api/v1/target-groups/acme-bavaria", { key: acme })).body).toMatchObject({
      team: "acme",
      criteria: { institutions: { regions: ["DE-BY"] } }
    })
  })
})

describe("POST /offers/bulk-process", () => {
  it("answers every request in input order, with per-item errors and a summary", async () => {
    const requests = [
      { offerId: "acme-student-discount", email: "jane@mit.edu" },
      { offerId: "acme-student-discount", email: "someone@gmail.com" },
      { offerId: "no-such-offer", email: "jane@mit.edu" },
      { offerId: "acme-student-discount", email: "not an email" },
      { offerId: "globex-campus-pass", email: "jo@cs.ox.ac.uk" },
      { offerId: "acme-partners", email: "kim@partner-college.org" }
    ]
    const result = await call(daemon, "POST", "/api/v1/offers/bulk-process", { key: acme, body: { requests } })
    expect(result.status).toBe(200)
    const results = result.body.results
    expect(results.map((item: { email: string }) => item.email)).toEqual(requests.map((request) => request.email))
    expect(results[0]).toMatchObject({ isValid: true, offer: { id: "acme-student-discount" } })
    expect(results[1]).toMatchObject({ isValid: false, reasonCode: expect.any(String) })
    expect(results[2]).toEqual({
      offerId: "no-such-offer",
      email: "jane@mit.edu",
      error: { code: "NOT_FOUND", message: expect.stringContaining("no-such-offer") }
    })
    expect(results[3]).toMatchObject({ isValid: false, reasonCode: "INVALID_EMAIL_FORMAT" })
    expect(results[4]).toMatchObject({ offerId: "globex-campus-pass", error: { code: "NOT_FOUND" } })
    expect(results[5]).toMatchObject({ offerId: "acme-partners", error: { code: "NOT_FOUND" } })
    expect(result.body.summary).toEqual({ total: 6, eligible: 1, ineligible: 2, errors: 3 })
    expect(result.body.requestId).toBe(result.headers.get("x-request-id"))
  })

  it("refuses more than 1000 requests, pointing to bulk-async, and needs validate:offers", async () => {
    const requests = Array.from({ length: 1001 }, (_, i) => ({
      offerId: "acme-student-discount",
      email: `s${i}@mit.edu`
    }))
    const tooMany = await call(daemon, "POST", "/api/v1/offers/bulk-process", { key: acme, body: { requests } })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.errors[0]).toMatchObject({ field: "/requests", code: "TOO_MANY" })
    expect(tooMany.body.errors[0].message).toMatch(/bulk-async/)
    const empty = await call(daemon, "POST", "/api/v1/offers/bulk-process", { key: acme, body: { requests: [] } })
    expect(empty).toMatchObject({ status: 400, body: { errors: [{ field: "/requests" }] } })
    const scope = await call(daemon, "POST", "/api/v1/offers/bulk-process", {
      key: acmeReadOnly,
      body: { requests: requests.slice(0, 1) }
    })
    expect(scope).toMatchObject({ status: 403, body: { requiredScope: "validate:offers" } })
  })
})

describe("resources created through the API", () => {
  it("answer 503 with Retry-After, changing nothing, when the data directory cannot be written", async () => {
    const offers = join(daemon.dataDir, "offers")
    renameSync(offers, `${offers}.away`)
    writeFileSync(offers, "not a directory")
    try {
      const refused = await createOffer(offer("api-unwritable"))
      expect(refused).toMatchObject({ status: 503, body: { code: "SERVICE_ERROR" } })
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    } finally {
      rmSync(offers)
      renameSync(`${offers}.away`, offers)
    }
    expect((await call(daemon, "GET", "/api/v1/offers/api-unwritable", { key: acme })).status).toBe(404)
    expect((await createOffer(offer("api-unwritable"))).status).toBe(201)
  })

  it("can be copied to another deployment as GET returns them, and survive its restart", async () => {
    await call(daemon, "POST", "/api/v1/target-groups", {
      key: acme,
      body: { id: "api-copied-group", name: "Copied", criteria: { patterns: { allow: ["*.copied.samples"] } } }
    })
    await createOffer(offer("api-copied", { targetGroups: ["api-copied-group", "universities"], status: "paused" }))
    const group = (await call(daemon, "GET", "/api/v1/target-groups/api-copied-group", { key: acme })).body
    const copied = (await call(daemon, "GET", "/api/v1/offers/api-copied", { key: acme })).body

    const dirs = copyConfig()
    const key = makeKey(dirs, "acme", allScopes)
    let other = await startDaemon(dirs)
    try {
      const postedGroup = await call(other, "POST", "/api/v1/target-groups", { key, body: group })
      expect(postedGroup).toMatchObject({ status: 201, body: group })
      const postedOffer = await call(other, "POST", "/api/v1/offers", { key, body: copied })
      expect(postedOffer).toMatchObject({ status: 201, body: copied })
      await other.stop()
      other = await startDaemon(dirs)
      expect((await call(other, "GET", "/api/v1/offers/api-copied", { key })).body).toEqual(copied)
      expect((await call(other, "GET", "/api/v1/target-groups/api-copied-group", { key })).body).toEqual(group)
      expect(
        (await call(other, "PATCH", "/api/v1/offers/api-copied", { key, body: { status: "active" } })).status
      ).toBe(200)
      const valid = await call(other, "POST", "/api/v1/validate/offer", {
        key,
        body: { email: "pat@cs.copied.samples", offerId: "api-copied" }
      })
      expect(valid).toMatchObject({ status: 200, body: { isValid: true, matchedTargetGroups: ["api-copied-group"] } })
    } finally {
      await other.stop()
    }
  }, 60_000)

  it("are not half-applied when the config cannot be reloaded: 500, and nothing is written", async () => {
    const dirs = copyConfig()
    const key = makeKey(dirs, "acme", allScopes)
    const broken = await startDaemon(dirs)
    try {
      // A bad edit in the config directory: the last good config keeps serving, but no reload can succeed.
      // Once the daemon has seen it, an API write is applied by a full reload (not as its one item), which fails.
      writeFileSync(join(dirs.configDir, "offers", "broken.yaml"), "id: broken\nteam: acme\n")
      await waitForLine(broken, (line) => String(line.msg).startsWith("config change rejected"))
      const result = await call(broken, "POST", "/api/v1/offers", { key, body: offer("api-not-applied") })
      expect(result).toMatchObject({ status: 500, body: { code: "SERVICE_ERROR", requestId: expect.any(String) } })
      expect(existsSync(join(dirs.dataDir, "offers", "api-not-applied.yaml"))).toBe(false)
      expect((await call(broken, "GET", "/api/v1/offers/api-not-applied", { key })).status).toBe(404)
      const group = await call(broken, "POST", "/api/v1/target-groups", {
        key,
        body: { id: "api-not-applied", name: "Not applied", criteria: { domains: { allow: ["x.samples"] } } }
      })
      expect(group.status).toBe(500)
      expect(existsSync(join(dirs.dataDir, "target-groups", "api-not-applied.yaml"))).toBe(false)
      // The validation endpoints keep serving from the last good config.
      expect((await call(broken, "GET", "/api/v1/offers/acme-student-discount", { key })).status).toBe(200)
    } finally {
      await broken.stop()
    }
  }, 60_000)

  it("are in the OpenAPI document with their scopes", async () => {
    const openapi = (await call(daemon, "GET", "/openapi.json")).body
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/offers",
        "/api/v1/offers/{id}",
        "/api/v1/offers/{id}/status",
        "/api/v1/offers/bulk-process",
        "/api/v1/target-groups",
        "/api/v1/target-groups/{id}"
      ])
    )
  })
})
