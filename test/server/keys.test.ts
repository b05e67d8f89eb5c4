/**
 * A team's API keys managed over the API, on the real daemon (files): a key
 * made through the API works on the next request, is listed without its
 * hash and, once revoked, is refused on the next request; a key never makes
 * more than it holds (scopes, lifetime); another team's key is not found;
 * bad input is answered with field errors; keys made at once all exist.
 */
import { describe, expect, it } from "vitest"
import { createApiKey } from "../../src/app/Keys.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { call, type Daemon, makeKey, sharedDaemon, waitForLine } from "./daemon.ts"

let admin = ""
let limited = ""
let readOnly = ""
let globex = ""
let expiring = ""
const expiringAt = new Date(Date.now() + 10 * 86_400_000).toISOString()

const daemon: Daemon = sharedDaemon((dirs) => {
  admin = makeKey(dirs, "acme", allScopes)
  limited = makeKey(dirs, "acme", ["keys:read", "keys:write", "validate:target-groups"])
  readOnly = makeKey(dirs, "acme", ["keys:read", "validate:target-groups"])
  globex = makeKey(dirs, "globex", allScopes)
  expiring = createApiKey({
    ...dirs,
    team: "acme" as TeamId,
    scopes: ["keys:write", "validate:target-groups"],
    expiresAt: expiringAt
  }).key
  return undefined
})

const validate = (key: string) =>
  call(daemon, "POST", "/api/v1/validate/target-group", {
    key,
    body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
  })

const create = (key: string, body: unknown) => call(daemon, "POST", "/api/v1/keys", { key, body })
const revoke = (key: string, id: string) => call(daemon, "DELETE", `/api/v1/keys/${id}`, { key })
const list = (key: string, query = "") => call(daemon, "GET", `/api/v1/keys${query}`, { key })

describe("API keys over the API", () => {
  it("makes a key that works at once, lists it without its hash, and refuses it at once once revoked", async () => {
    const made = await create(admin, { name: "shop backend", scopes: ["validate:target-groups"], expiresInDays: 30 })
    expect(made.status).toBe(201)
    expect(made.headers.get("cache-control")).toBe("no-store")
    expect(made.body).toMatchObject({
      name: "shop backend",
      team: "acme",
      scopes: ["validate:target-groups"],
      revokedAt: null,
      status: "active"
    })
    expect(made.body.key).toMatch(/^cgk_[A-Za-z0-9_-]{43}$/)
    expect(made.body.id).toMatch(/^key_[a-z0-9]+$/)
    expect(Date.parse(made.body.expiresAt) - Date.parse(made.body.createdAt)).toBe(30 * 86_400_000)
    expect(made.body).not.toHaveProperty("hash")

    // The next request with it is accepted: no waiting for the watcher.
    expect((await validate(made.body.key)).status).toBe(200)

    const listed = await list(admin, "?limit=100")
    expect(listed.status).toBe(200)
    const entry = listed.body.data.find((key: { id: string }) => key.id === made.body.id)
    expect(entry).toEqual({ ...made.body, key: undefined })
    expect(JSON.stringify(listed.body)).not.toMatch(/sha256|hash|cgk_/)
    expect(listed.body.data.every((key: { team: string }) => key.team === "acme")).toBe(true)

    const revoked = await revoke(admin, made.body.id)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ id: made.body.id, status: "revoked" })
    expect(Date.parse(revoked.body.revokedAt)).toBeGreaterThan(Date.now() - 60_000)

    // The next request with it is refused.
    const refused = await validate(made.body.key)
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe("INVALID_API_KEY")

    // The log says who made and revoked which key, never the key itself.
    const madeLine = await waitForLine(daemon, (line) => line.msg === "API key made" && line.keyId === made.body.id)
    expect(madeLine).toMatchObject({ team: "acme", scopes: ["validate:target-groups"], madeBy: expect.any(String) })
    await waitForLine(daemon, (line) => line.msg === "API key revoked" && line.keyId === made.body.id)
    expect(JSON.stringify(daemon.lines)).not.toContain(made.body.key)

    const again = await revoke(admin, made.body.id)
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("CONFLICT")
    const after = (await list(admin, "?limit=100")).body.data.find((key: { id: string }) => key.id === made.body.id)
    expect(after).toMatchObject({ status: "revoked", revokedAt: revoked.body.revokedAt })
  })

  it("refuses a key with scopes the calling key does not hold, naming them (a key never makes more than it holds)", async () => {
    const refused = await create(limited, { scopes: ["validate:target-groups", "offers:write", "status:read"] })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({
      code: "INSUFFICIENT_SCOPE",
      missingScopes: ["offers:write", "status:read"],
      requiredScope: "offers:write status:read"
    })
    expect(refused.body.detail).toContain("offers:write, status:read")
    // What it holds, it may give.
    const made = await create(limited, { scopes: ["validate:target-groups", "keys:read"] })
    expect(made.status).toBe(201)
    expect(made.body.team).toBe("acme")
  })

  it("needs keys:write to make or revoke and keys:read to list", async () => {
    const listed = await list(readOnly)
    expect(listed.status).toBe(200)
    const made = await create(readOnly, { scopes: ["validate:target-groups"] })
    expect(made.status).toBe(403)
    expect(made.body.requiredScope).toBe("keys:write")
    expect((await revoke(readOnly, "key_aaaaaaaaaaaa")).status).toBe(403)
    const noRead = await list(expiring)
    expect(noRead.status).toBe(403)
    expect(noRead.body.requiredScope).toBe("keys:read")
  })

  it("makes keys of the caller's team only: another team's key is not listed and not found, as an unknown id is", async () => {
    const acmeKey = (await create(admin, { scopes: ["validate:target-groups"] })).body
    const theirs = await revoke(globex, acmeKey.id)
    const unknown = await revoke(globex, "key_zzzzzzzzzzzz")
    expect(theirs.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(theirs.body.detail).toBe(`There is no API key "${acmeKey.id}".`)
    expect(unknown.body.detail).toBe(`There is no API key "key_zzzzzzzzzzzz".`)
    const globexList = (await list(globex, "?limit=100")).body.data as Array<{ id: string; team: string }>
    expect(globexList.some((key) => key.id === acmeKey.id)).toBe(false)
    expect(globexList.every((key) => key.team === "globex")).toBe(true)
    // Still working: the other team's attempt changed nothing.
    expect((await validate(acmeKey.key)).status).toBe(200)
    const made = await create(globex, { scopes: ["validate:target-groups"] })
    expect(made.body.team).toBe("globex")
  })

  it("answers bad input with field errors", async () => {
    const unknownScope = await create(admin, { scopes: ["validate:target-groups", "everything"] })
    expect(unknownScope.status).toBe(400)
    expect(unknownScope.body.code).toBe("VALIDATION_ERROR")
    expect(unknownScope.body.errors.map((error: { field: string }) => error.field)).toEqual(["/scopes/1"])

    const several = await create(admin, { scopes: [], expiresInDays: 0, name: "", extra: 1 })
    expect(several.status).toBe(400)
    expect(several.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      "/expiresInDays",
      "/extra",
      "/name",
      "/scopes"
    ])

    const past = await create(admin, { scopes: ["validate:target-groups"], expiresAt: "2020-01-01T00:00:00Z" })
    expect(past.status).toBe(400)
    expect(past.body.errors).toEqual([
      { field: "/expiresAt", code: "NOT_IN_FUTURE", message: "expiresAt must lie in the future" }
    ])

    const both = await create(admin, {
      scopes: ["validate:target-groups"],
      expiresInDays: 3,
      expiresAt: "2099-01-01T00:00:00Z"
    })
    expect(both.status).toBe(400)
    expect(both.body.errors[0]).toMatchObject({ field: "/expiresAt", code: "CONFLICTING_EXPIRY" })

    const notADate = await create(admin, { scopes: ["validate:target-groups"], expiresAt: "tomorrow" })
    expect(notADate.status).toBe(400)
    expect(notADate.body.errors[0].field).toBe("/expiresAt")

    const cursor = await list(admin, "?cursor=nonsense!")
    expect(cursor.status).toBe(400)
    expect(cursor.body.errors[0]).toMatchObject({ field: "/query/cursor", code: "INVALID_CURSOR" })
  })

  it("never makes a key that outlives the key making it: none given, it takes its expiry", async () => {
    const inherits = await create(expiring, { scopes: ["validate:target-groups"] })
    expect(inherits.status).toBe(201)
    expect(inherits.body.expiresAt).toBe(expiringAt)
    const sooner = await create(expiring, { scopes: ["validate:target-groups"], expiresInDays: 2 })
    expect(sooner.status).toBe(201)
    const later = await create(expiring, { scopes: ["validate:target-groups"], expiresInDays: 30 })
    expect(later.status).toBe(400)
    expect(later.body.errors[0]).toMatchObject({ field: "/expiresInDays", code: "OUTLIVES_KEY" })
    const never = await create(admin, { scopes: ["validate:target-groups"] })
    expect(never.body.expiresAt).toBeNull()
  })

  it("lets a key revoke itself: that answer is its last", async () => {
    const own = (await create(admin, { name: "short-lived", scopes: ["keys:write", "validate:target-groups"] })).body
    const revoked = await revoke(own.key, own.id)
    expect(revoked.status).toBe(200)
    expect(revoked.body.status).toBe("revoked")
    expect((await revoke(own.key, own.id)).status).toBe(401)
    expect((await validate(own.key)).status).toBe(401)
  })

  it("pages the list by id with the opaque cursor, as the other lists", async () => {
    const all: Array<string> = []
    let cursor: string | null = null
    do {
      const page = await list(admin, `?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`)
      expect(page.status).toBe(200)
      expect(page.body.data.length).toBeLessThanOrEqual(2)
      all.push(...page.body.data.map((key: { id: string }) => key.id))
      cursor = page.body.nextCursor
    } while (cursor !== null)
    expect(all).toEqual([...all].sort())
    expect(new Set(all).size).toBe(all.length)
    const whole = (await list(admin, "?limit=100")).body.data.map((key: { id: string }) => key.id)
    expect(all).toEqual(whole)
  })

  it("makes 20 keys asked for at once: all made, distinct, each working", async () => {
    const started = performance.now()
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create(admin, { name: `worker ${i}`, scopes: ["validate:target-groups"] }))
    )
    const elapsed = performance.now() - started
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(201))
    const ids = new Set(answers.map((answer) => answer.body.id))
    expect(ids.size).toBe(20)
    const checks = await Promise.all(answers.map((answer) => validate(answer.body.key)))
    expect(checks.map((check) => check.status)).toEqual(Array(20).fill(200))
    const listed = new Set((await list(admin, "?limit=100")).body.data.map((key: { id: string }) => key.id))
    for (const id of ids) expect(listed.has(id)).toBe(true)
    console.log(`20 concurrent creates answered in ${Math.round(elapsed)} ms`)
  })
})
