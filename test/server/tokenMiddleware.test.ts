/**
 * The shop-side middleware examples (`examples/require-eligibility-fetch.ts`,
 * `examples/require-eligibility-express.ts`) as a shop runs them: tokens
 * signed by the project's own verification (the library, mail captured in
 * memory), checked offline against its JWKS; the fetch handler called with
 * real `Request`s, the Express-style middleware mounted on a `node:http`
 * server and called over loopback. A valid token reaches the handler with
 * its claims; none is a 401; another offer's, another team's, a tampered or
 * an expired one is a 403 with the reason, and the handler never runs.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { EligibleRequest } from "../../examples/require-eligibility-express.ts"
import { requireEligibility as expressMiddleware } from "../../examples/require-eligibility-express.ts"
import { requireEligibility as fetchMiddleware } from "../../examples/require-eligibility-fetch.ts"
import { type Campusgate, createCampusgate, type OutgoingMail } from "../../src/index.ts"

let campusgate: Campusgate
let jwks: Awaited<ReturnType<Campusgate["verifications"]["jwks"]>>
/** A token for `offerId`, of team acme or globex. */
const tokens: Record<string, string> = {}

/** The messages of the verification under way. */
let sending: Array<OutgoingMail> = []

const verify = async (email: string, offerId: string): Promise<string> => {
  const sent: Array<OutgoingMail> = []
  sending = sent
  const started = await campusgate.verifications.start({ email, offerId })
  if (!("started" in started)) throw new Error(`${email} should be eligible for ${offerId}`)
  while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  const code = /^\s*(\d{6,10})\s*$/m.exec(sent[0]!.text)![1]!
  return (await campusgate.verifications.confirm(started.started.id, code)).eligibility!.token
}

beforeAll(async () => {
  campusgate = await createCampusgate({
    targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }],
    offers: [
      { id: "spring-sale", team: "acme", name: "Spring sale", targetGroups: ["uk"], status: "active" },
      { id: "other-sale", team: "acme", name: "Other sale", targetGroups: ["uk"], status: "active" },
      { id: "globex-sale", team: "globex", name: "Globex sale", targetGroups: ["uk"], status: "active" }
    ],
    verification: { send: async (mail) => void sending.push(mail) }
  })
  for (const offer of ["spring-sale", "other-sale", "globex-sale"]) tokens[offer] = await verify("jane@ox.ac.uk", offer)
  jwks = await campusgate.verifications.jwks()
}, 30_000)

afterAll(async () => {
  await campusgate?.close()
})

const tampered = (token: string) => {
  const [header, payload, signature] = token.split(".")
  const claims = JSON.parse(Buffer.from(payload!, "base64url").toString())
  claims.institution = { name: "Anywhere", country: "GB", type: "university" }
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`
}

/** What every shop check expects: the spring sale, of team acme. */
const expected = () => ({ jwks, offerId: "spring-sale", team: "acme" })

/** The refusals both middlewares answer, by what is sent. */
const refusals = (): ReadonlyArray<
  readonly [what: string, authorization: string | undefined, status: number, reason: string]
> => [
  ["no token", undefined, 401, "eligibility-required"],
  ["not a bearer token", `Basic ${Buffer.from("a:b").toString("base64")}`, 401, "eligibility-required"],
  ["another offer's token", `Bearer ${tokens["other-sale"]}`, 403, "wrong-offer"],
  ["another team's offer's token", `Bearer ${tokens["globex-sale"]}`, 403, "wrong-offer"],
  ["a tampered token", `Bearer ${tampered(tokens["spring-sale"]!)}`, 403, "invalid"],
  ["garbage", "Bearer not.a.token", 403, "invalid"]
]

describe("examples/require-eligibility-fetch.ts", () => {
  let handled = 0
  const handler = () =>
    fetchMiddleware(expected(), (_request, claims) => {
      handled += 1
      return Response.json({ discount: "STUDENT50", institution: claims.institution?.name, sub: claims.sub })
    })
  const call = (authorization: string | undefined) =>
    handler()(
      new Request("https://shop.example/student-discount", {
        method: "POST",
        headers: authorization === undefined ? {} : { authorization }
      })
    )

  it("runs the handler with the claims of a valid token", async () => {
    const response = await call(`Bearer ${tokens["spring-sale"]}`)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ discount: "STUDENT50", institution: "University of Oxford" })
    expect(handled).toBe(1)
  })

  it("answers 401 without a token and 403 with the reason for one that does not pass; the handler never runs", async () => {
    for (const [what, authorization, status, reason] of refusals()) {
      const response = await call(authorization)
      expect(response.status, what).toBe(status)
      const body = (await response.json()) as { error: string; reason: string }
      expect(status === 401 ? body.error : body.reason, what).toBe(reason)
      if (status === 401) expect(response.headers.get("www-authenticate")).toBe('Bearer realm="eligibility"')
    }
    // Past its expiry.
    const late = await fetchMiddleware(
      { ...expected(), now: Date.now() + 400 * 86_400_000 },
      () => new Response()
    )(new Request("https://shop.example/", { headers: { authorization: `Bearer ${tokens["spring-sale"]}` } }))
    expect(late.status).toBe(403)
    expect(await late.json()).toMatchObject({ reason: "expired" })
    expect(handled).toBe(1)
  })

  it("reads the token where tokenOf says", async () => {
    const response = await fetchMiddleware(
      { ...expected(), tokenOf: (request) => request.headers.get("x-eligibility") ?? undefined },
      () => new Response("ok")
    )(new Request("https://shop.example/", { headers: { "x-eligibility": tokens["spring-sale"]! } }))
    expect(await response.text()).toBe("ok")
  })
})

describe("examples/require-eligibility-express.ts, mounted on node:http", () => {
  let handled = 0
  // Made once the suite's verifications are done and the keys exist.
  let middleware: ReturnType<typeof expressMiddleware>
  const server = createServer((request, response) =>
    middleware(request, response, (error) => {
      if (error !== undefined) {
        response.writeHead(500).end()
        return
      }
      handled += 1
      const { eligibility } = request as EligibleRequest
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ discount: "STUDENT50", institution: eligibility?.institution?.name }))
    })
  )
  let url: string
  beforeAll(async () => {
    middleware = expressMiddleware(expected())
    server.listen(0, "127.0.0.1")
    await new Promise((resolve) => server.once("listening", resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/student-discount`
  })
  afterAll(() => void server.close())

  const call = (authorization: string | undefined) =>
    fetch(url, { method: "POST", headers: authorization === undefined ? {} : { authorization } })

  it("lets a valid token through with its claims on req.eligibility", async () => {
    const response = await call(`Bearer ${tokens["spring-sale"]}`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ discount: "STUDENT50", institution: "University of Oxford" })
    expect(handled).toBe(1)
  })

  it("answers 401 without a token and 403 with the reason for one that does not pass; next is never called", async () => {
    for (const [what, authorization, status, reason] of refusals()) {
      const response = await call(authorization)
      expect(response.status, what).toBe(status)
      expect(response.headers.get("content-type")).toBe("application/json")
      const body = (await response.json()) as { error: string; reason: string }
      expect(status === 401 ? body.error : body.reason, what).toBe(reason)
    }
    expect(handled).toBe(1)
  })
})
