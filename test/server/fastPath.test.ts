/**
 * The fast path and the Effect app answer a single validation alike: each
 * request is sent twice, once as the fast path takes it (a JSON body of a
 * declared length) and once streamed in chunks, which only the Effect app
 * takes, and the two answers must match (status, body, content type, rate
 * limit policy) but for the request id.
 */
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { copyConfig, type Daemon, makeKey, startDaemon } from "./daemon.ts"

let daemon: Daemon
let acme: string

beforeAll(async () => {
  const dirs = copyConfig()
  acme = makeKey(dirs, "acme", allScopes)
  daemon = await startDaemon(dirs)
}, 30_000)

afterAll(async () => {
  await daemon?.stop()
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
