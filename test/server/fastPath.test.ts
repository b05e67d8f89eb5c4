/**
 * The fast path and the Effect app answer alike: each request is sent
 * twice, once as the fast path takes it (a JSON body of a declared length)
 * and once streamed in chunks, which only the Effect app takes, and the two
 * answers must match (status, body, content type, rate limit policy) but
 * for the request id. Single validations over chosen cases; the bulk
 * endpoints over generated requests, valid and not (fast-check prints the
 * seed and the smallest failing request of a failure, to replay it).
 */
import { request } from "node:http"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { makeKey, setSettings, sharedDaemon } from "./daemon.ts"

/** Bulk requests generated per run (each sent twice). */
const RUNS = Number(process.env.CAMPUSGATE_FUZZ_RUNS ?? 200)
/** `limits.bulkMaxEmails` here: small, so generated requests also go over it. */
const BULK_BOUND = 5

let acme: string

const daemon = sharedDaemon((dirs) => {
  setSettings(dirs, [
    [["limits", "bulkMaxEmails"], BULK_BOUND],
    [["rateLimits", "bulk", "requests"], 1_000_000]
  ])
  acme = makeKey(dirs, "acme", allScopes)
})

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly contentType: string | undefined
  readonly policy: string | undefined
}

/** POSTs `body` with a content length (`whole`) or as chunks without one. */
const send = (path: string, body: string, whole: boolean): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, daemon.url)
    const headers: Record<string, string> = { authorization: `Bearer ${acme}`, "content-type": "application/json" }
    if (whole) headers["content-length"] = String(Buffer.byteLength(body))
    const outgoing = request(url, { method: "POST", headers }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
      })
      response.on("end", () => {
        const parsed = JSON.parse(text) as Record<string, unknown>
        delete parsed.requestId
        resolve({
          status: response.statusCode!,
          body: parsed,
          contentType: response.headers["content-type"],
          policy: response.headers["ratelimit-policy"] as string | undefined
        })
      })
    })
    outgoing.on("error", reject)
    if (whole) outgoing.end(body)
    else {
      const middle = Math.floor(body.length / 2)
      outgoing.write(body.slice(0, middle))
      setTimeout(() => outgoing.end(body.slice(middle)), 5)
    }
  })

const cases: ReadonlyArray<readonly [string, string, string]> = [
  ["an eligible email", "/api/v1/validate/target-group", '{"email":"jane@ox.ac.uk","targetGroupId":"uk-students"}'],
  ["an ineligible email", "/api/v1/validate/target-group", '{"email":"bob@mit.edu","targetGroupId":"uk-students"}'],
  [
    "an explained result",
    "/api/v1/validate/target-group",
    '{"email":"bob@mit.edu","targetGroupId":"uk-students","explain":true}'
  ],
  ["an offer", "/api/v1/validate/offer", '{"email":"jane@ox.ac.uk","offerId":"acme-student-discount"}'],
  ["a malformed email", "/api/v1/validate/target-group", '{"email":"jane@@ox","targetGroupId":"uk-students"}'],
  ["an unknown field", "/api/v1/validate/target-group", '{"email":"a@b.edu","targetGroupId":"x","extra":1}'],
  ["a missing field", "/api/v1/validate/offer", '{"email":"a@b.edu"}'],
  ["a field of the wrong type", "/api/v1/validate/offer", '{"email":3,"offerId":"acme-student-discount"}'],
  ["malformed JSON", "/api/v1/validate/offer", '{"email":'],
  ["an unknown target group", "/api/v1/validate/target-group", '{"email":"a@b.edu","targetGroupId":"nope"}'],
  ["another team's offer", "/api/v1/validate/offer", '{"email":"a@b.edu","offerId":"globex-campus-pass"}'],
  ["the /v1 alias", "/v1/validate/target-group", '{"email":"jane@ox.ac.uk","targetGroupId":"uk-students"}']
]

describe("the fast path", () => {
  it.each(cases)("answers %s exactly as the Effect app does", async (_name, path, body) => {
    const fast = await send(path, body, true)
    const full = await send(path, body, false)
    expect(fast).toEqual(full)
  })
})

interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

/** POSTs `body` with `requestId`, with a content length (`whole`) or as chunks without one; the answer as it came. */
const sendRaw = (path: string, body: Buffer, whole: boolean, requestId: string): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${acme}`,
      "content-type": "application/json",
      "x-request-id": requestId
    }
    if (whole) headers["content-length"] = String(body.length)
    const outgoing = request(new URL(path, daemon.url), { method: "POST", headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) })
      )
    })
    outgoing.on("error", reject)
    if (whole || body.length < 2) outgoing.end(body)
    else {
      outgoing.write(body.subarray(0, body.length >> 1))
      setTimeout(() => outgoing.end(body.subarray(body.length >> 1)), 2)
    }
  })

/** The header fields a client acts on; the rate-limit fields' counts move from one request to the next. */
const fieldsThatMatter = ({ headers }: RawAnswer) => ({
  "content-type": headers["content-type"],
  "content-length": headers["content-length"],
  "ratelimit-policy": headers["ratelimit-policy"],
  ratelimit: String(headers.ratelimit).replace(/r=\d+;t=\d+/, "r=#;t=#"),
  "retry-after": headers["retry-after"],
  "x-request-id": headers["x-request-id"]
})

const anyJson = fc.jsonValue({ maxDepth: 2 })
/** Emails and ids within the contract's bounds: known, unknown and another team's targets. */
const goodEmails = fc.constantFrom(
  "jane@ox.ac.uk",
  "Jane@OX.AC.UK",
  "bob@mit.edu",
  "kim@partner-college.org",
  "max@tum.de",
  "ü@tum.de",
  "jo@uni.samples.edu",
  "ann@gmail.com",
  "not an email",
  "a@b",
  `${"a".repeat(1018)}@x.de`
)
const goodTargetGroupIds = fc.constantFrom("uk-students", "universities", "acme-partners", "globex-campus", "nope")
const goodOfferIds = fc.constantFrom("acme-student-discount", "acme-winter-semester", "globex-campus-pass", "nope")
/** A field as a client sends it, or out of bounds, or of any JSON kind. */
const sometimes = <A>(good: fc.Arbitrary<A>, ...bad: ReadonlyArray<unknown>) =>
  fc.oneof(
    { weight: 12, arbitrary: good as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: bad.length === 0 ? anyJson : fc.constantFrom(...bad) },
    { weight: 1, arbitrary: anyJson }
  )
const emails = sometimes(goodEmails, `${"a".repeat(1020)}@x.de`)
const emailList = sometimes(fc.array(emails, { maxLength: BULK_BOUND + 2 }), [])
const targetGroupIds = sometimes(goodTargetGroupIds, "", "x".repeat(65))
const offerIds = sometimes(goodOfferIds, "", "x".repeat(65))
const extra = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  fc.dictionary(fc.constantFrom("extra", "__proto__", "Emails"), anyJson, { maxKeys: 1 })
)
/** An object as JSON text, `__proto__` an own key as a client's JSON would have it. */
const asJson = ([known, more]: readonly [object, object]) => JSON.stringify({ ...known, ...more })

/** Half bodies a client would send, half with fields missing, out of bounds or of any kind, or unknown fields. */
const bulkBody = fc.oneof(
  fc
    .tuple(
      fc.array(goodEmails, { minLength: 1, maxLength: BULK_BOUND }),
      fc.oneof(
        goodTargetGroupIds.map((targetGroupId) => ({ targetGroupId })),
        goodOfferIds.map((offerId) => ({ offerId }))
      ),
      fc.option(fc.boolean(), { nil: undefined }),
      fc.option(fc.boolean(), { nil: undefined })
    )
    .map(([emails, target, details, reasonText]) => JSON.stringify({ emails, ...target, details, reasonText })),
  fc
    .tuple(
      fc.record(
        {
          emails: emailList,
          targetGroupId: targetGroupIds,
          offerId: offerIds,
          details: sometimes(fc.boolean()),
          reasonText: sometimes(fc.boolean())
        },
        { requiredKeys: [] }
      ),
      extra
    )
    .map(asJson)
)
const batchBody = fc.oneof(
  fc
    .array(fc.record({ offerId: goodOfferIds, email: goodEmails }), { minLength: 1, maxLength: BULK_BOUND })
    .map((requests) => JSON.stringify({ requests })),
  fc
    .tuple(
      fc.record(
        {
          requests: sometimes(
            fc.array(
              sometimes(
                fc
                  .tuple(fc.record({ offerId: offerIds, email: emails }, { requiredKeys: [] }), extra)
                  .map((fields) => JSON.parse(asJson(fields)) as unknown)
              ),
              { maxLength: BULK_BOUND + 2 }
            ),
            []
          )
        },
        { requiredKeys: [] }
      ),
      extra
    )
    .map(asJson)
)
/** A body as bytes: mostly the JSON, sometimes broken, with a byte-order mark, not UTF-8, empty or not JSON. */
const bytesOf = (json: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 12, arbitrary: json.map((text) => Buffer.from(text)) },
    json.map((text) => Buffer.from(text.slice(0, -1))),
    json.map((text) => Buffer.from(`\uFEFF${text}`)),
    json.map((text) =>
      Buffer.concat([Buffer.from(text.slice(0, 12)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(12))])
    ),
    fc.constantFrom(Buffer.alloc(0), Buffer.from("[]"), Buffer.from("null"), Buffer.from('"emails"'))
  )
const bulkRequests = fc.oneof(
  fc.tuple(fc.constantFrom("/api/v1/validate/bulk", "/v1/validate/bulk"), bytesOf(bulkBody)),
  fc.tuple(fc.constantFrom("/api/v1/offers/bulk-process", "/v1/offers/bulk-process"), bytesOf(batchBody))
)

describe("the fast path's bulk endpoints", () => {
  it("answer every generated request, valid or not, exactly as the Effect app does", async () => {
    let run = 0
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(bulkRequests, async ([path, body]) => {
        run++
        // Request ids of one length, so the answers' bytes and lengths can be compared whole.
        const fast = await sendRaw(path, body, true, `fast-${String(run).padStart(6, "0")}`)
        const full = await sendRaw(path, body, false, `full-${String(run).padStart(6, "0")}`)
        const where = `${path} ${body.toString("utf8").slice(0, 300)}`
        expect(fast.status, where).toBe(full.status)
        expect(fieldsThatMatter(fast), where).toEqual({
          ...fieldsThatMatter(full),
          "x-request-id": fast.headers["x-request-id"]
        })
        expect(fast.body.toString("utf8").replace("fast-", "full-"), where).toBe(full.body.toString("utf8"))
        expect(Number(fast.headers["content-length"]), where).toBe(fast.body.length)
        seen.add(`${path.split("/").at(-1)} ${fast.status}`)
      }),
      { numRuns: RUNS }
    )
    // The runs covered answers of every kind.
    for (const kind of ["bulk 200", "bulk 400", "bulk 404", "bulk-process 200", "bulk-process 400"]) {
      expect([...seen]).toContain(kind)
    }
  }, 120_000)
})
