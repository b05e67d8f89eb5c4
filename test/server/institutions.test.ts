import { describe, expect, it } from "vitest"
import { call, makeKey, sharedDaemon } from "./daemon.ts"

let key: string

const daemon = sharedDaemon((dirs) => {
  // The institution index is open data: a key with any one scope may read it.
  key = makeKey(dirs, "acme", ["jobs:read"])
})

const get = (path: string, options: { readonly anonymous?: boolean } = {}) =>
  call(daemon, "GET", path, options.anonymous === true ? {} : { key })

describe("GET /api/v1/institutions", () => {
  it("finds institutions by word prefixes, accents and case aside, and by acronym", async () => {
    const oxford = await get("/api/v1/institutions?q=univ%20oxf&limit=3")
    expect(oxford.status).toBe(200)
    expect(oxford.body.data[0]).toMatchObject({
      name: "University of Oxford",
      country: "GB",
      type: "university",
      ror: expect.any(String),
      evidence: { type: { source: "ror" } }
    })
    expect(oxford.body.data[0].domains).toContain("ox.ac.uk")
    // The shipped config's dataset names tum.de "Technische Universität München".
    const accents = await get("/api/v1/institutions?q=MUNCHEN%20technische&limit=5")
    expect(accents.body.data.flatMap((i: { domains: Array<string> }) => i.domains)).toContain("tum.de")
    const acronym = await get("/api/v1/institutions?q=ucla&limit=3")
    expect(acronym.body.data[0].domains).toContain("ucla.edu")
  })

  it("filters by country and type, and pages with a cursor", async () => {
    const first = await get("/api/v1/institutions?q=universidad&country=ES&type=university&limit=5")
    expect(first.status).toBe(200)
    expect(first.body.data).toHaveLength(5)
    for (const institution of first.body.data) expect(institution).toMatchObject({ country: "ES", type: "university" })
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const second = await get(
      `/api/v1/institutions?q=universidad&country=ES&type=university&limit=5&cursor=${first.body.nextCursor}`
    )
    expect(second.body.data).toHaveLength(5)
    const ids = new Set([...first.body.data, ...second.body.data].map((i: { id: string }) => i.id))
    expect(ids.size).toBe(10)
  })

  it("answers 400 for a bad filter or cursor and 401 without a key", async () => {
    expect(await get("/api/v1/institutions?country=UK")).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_ERROR" }
    })
    expect(await get("/api/v1/institutions?q=x&cursor=nope")).toMatchObject({
      status: 400,
      body: { errors: [{ field: "/query/cursor" }] }
    })
    expect((await get("/api/v1/institutions?q=oxford", { anonymous: true })).status).toBe(401)
  })
})

describe("GET /api/v1/institutions/{domain}", () => {
  it("answers the institution of a host, with the match, the role and the evidence", async () => {
    const answer = await get("/api/v1/institutions/students.ox.ac.uk")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      domain: "students.ox.ac.uk",
      matchedDomain: "ox.ac.uk",
      rule: "listed-domain",
      role: "student",
      institution: { name: "University of Oxford", country: "GB", evidence: { country: { confidence: "high" } } }
    })
  })

  it("answers a zone's facts and policy for a host known only by its suffix", async () => {
    const answer = await get("/api/v1/institutions/someplace.cc.tx.us")
    expect(answer.body).toMatchObject({
      rule: "academic-suffix",
      institution: { type: "college", country: "US", region: "US-TX" },
      zone: { suffix: "cc.tx.us", reference: expect.stringContaining("RFC 1480") }
    })
  })

  it("answers 404 saying why for a non-institution, and 400 for what is not a domain", async () => {
    const network = await get("/api/v1/institutions/jisc.ac.uk")
    expect(network).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } })
    expect(network.body.detail).toContain("research and education network")
    expect((await get("/api/v1/institutions/not_a_domain")).status).toBe(400)
  })
})
