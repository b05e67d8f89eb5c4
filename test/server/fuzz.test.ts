/**
 * A bounded fuzz run against the real daemon: random bodies for every
 * endpoint that takes one (arbitrary JSON, valid bodies with fields of the
 * wrong type or unknown fields added, raw bytes that may not be UTF-8) and
 * random path parameters for every endpoint that has one, and compressed
 * job uploads whatever their bytes. Whatever comes
 * in, no answer is a 5xx, every error is a problem document naming its
 * request, and no error answer grows past 64 KB. fast-check prints the seed
 * and the smallest failing input of a failure, to replay it.
 */
import { brotliCompressSync, gzipSync, zstdCompressSync } from "node:zlib"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { makeKey, setSettings, sharedDaemon } from "./daemon.ts"

const RUNS = Number(process.env.CAMPUSGATE_FUZZ_RUNS ?? 60)
const MAX_PROBLEM_BYTES = 64 * 1024

let key: string

const daemon = sharedDaemon((dirs) => {
  setSettings(dirs, [
    [["rateLimits", "bulk", "requests"], 1_000_000],
    [["rateLimits", "jobs", "requests"], 1_000_000],
    [["rateLimits", "validate", "requests"], 1_000_000],
    [["rateLimits", "default", "requests"], 1_000_000],
    [["rateLimits", "verifications", "requests"], 1_000_000]
  ])
  key = makeKey(dirs, "acme", allScopes)
})

beforeAll(async () => {
  // Resources made through the API, so their patches are merged and checked rather than refused as config-defined.
  const create = (path: string, body: unknown) =>
    fetch(`${daemon.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  await create("/api/v1/target-groups", {
    id: "fuzz-patched",
    name: "Patched",
    criteria: { domains: { allow: ["p.example"] } }
  })
  await create("/api/v1/offers", {
    id: "fuzz-patched",
    name: "Patched",
    targetGroups: ["universities"],
    status: "draft"
  })
}, 30_000)

/** Sends a request and checks the answer as the module header says. */
const check = async (
  method: string,
  path: string,
  body?: string | Uint8Array,
  contentType = "application/json",
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": contentType }),
      ...headers
    },
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  const where = `${method} ${path} → ${response.status} ${text.slice(0, 300)}`
  expect(response.status, where).toBeLessThan(500)
  if (response.status >= 400 && path.startsWith("/v/")) {
    // The link page is for people who clicked a link in a message: a small HTML page (a path that is not a link,
    // such as `/v/..` as a client resolves it, is the API's 404 problem).
    expect(response.headers.get("content-type"), where).toMatch(/^(text\/html|application\/problem\+json)/)
    expect(text.length, where).toBeLessThan(MAX_PROBLEM_BYTES)
  } else if (response.status >= 400) {
    expect(response.headers.get("content-type"), where).toMatch(/^application\/problem\+json/)
    expect(text.length, where).toBeLessThan(MAX_PROBLEM_BYTES)
    const problem = JSON.parse(text) as { code?: unknown; requestId?: unknown }
    expect(typeof problem.code, where).toBe("string")
    expect(problem.requestId, where).toBe(response.headers.get("x-request-id"))
  }
}

/** A valid body with some fields replaced by values of any JSON type, and unknown fields added. */
const mutated = (valid: Record<string, unknown>) =>
  fc
    .tuple(
      fc.subarray(Object.keys(valid)),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
      fc.jsonValue({ maxDepth: 3 })
    )
    .map(([replaced, extra, value]) => {
      const body: Record<string, unknown> = { ...valid, ...extra }
      for (const field of replaced) body[field] = value
      return body
    })

/** Any body: arbitrary JSON, a mutated valid one, or raw bytes (valid UTF-8 or not). */
const bodies = (valid: Record<string, unknown>) =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? "null"),
    mutated(valid).map((value) => JSON.stringify(value)),
    fc.uint8Array({ maxLength: 200 }),
    fc.string({ unit: "binary", maxLength: 200 })
  )

const writingEndpoints: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
  ["POST", "/api/v1/validate/target-group", { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }],
  ["POST", "/api/v1/validate/offer", { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }],
  ["POST", "/api/v1/validate/bulk", { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students", details: true }],
  ["POST", "/api/v1/validate/bulk-async", { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }],
  ["POST", "/api/v1/offers/bulk-process", { requests: [{ email: "jane@ox.ac.uk", offerId: "acme-student-discount" }] }],
  [
    "POST",
    "/api/v1/offers",
    {
      id: "fuzz-offer",
      name: "Fuzz",
      targetGroups: ["universities"],
      status: "draft",
      startsAt: "2030-01-01T00:00:00Z"
    }
  ],
  ["PATCH", "/api/v1/offers/acme-student-discount", { status: "paused" }],
  ["POST", "/api/v1/verifications", { email: "jane@ox.ac.uk", offerId: "acme-student-discount", method: "code" }],
  ["POST", "/api/v1/verifications/ver_unknown/confirm", { code: "123456" }],
  ["POST", "/api/v1/verifications/reset-limit", { email: "jane@ox.ac.uk", offerId: "acme-student-discount" }],
  ["PATCH", "/api/v1/offers/fuzz-patched", { name: "Renamed", endsAt: null, verification: { maxAttempts: 3 } }],
  [
    "PATCH",
    "/api/v1/target-groups/fuzz-patched",
    { description: null, criteria: { email: { rejectFreeMail: true }, patterns: { allow: ["*.p.example"] } } }
  ],
  [
    "POST",
    "/api/v1/target-groups",
    {
      id: "fuzz-group",
      name: "Fuzz",
      criteria: { institutions: { types: ["university"], countries: ["GB"] }, domains: { allow: ["x.example"] } }
    }
  ]
]

describe("fuzzing every endpoint that takes a body", () => {
  for (const [method, path, valid] of writingEndpoints) {
    it(`${method} ${path}`, async () => {
      await fc.assert(
        fc.asyncProperty(bodies(valid), (body) => check(method, path, body)),
        { numRuns: RUNS }
      )
    }, 60_000)
  }

  it("POST /api/v1/validate/bulk-async as NDJSON and CSV", async () => {
    const target = "?targetGroupId=uk-students&delimiter=semicolon"
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("application/x-ndjson", "text/csv"),
        fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 })),
        (type, body) => check("POST", `/api/v1/validate/bulk-async${target}`, body, type)
      ),
      { numRuns: RUNS }
    )
  }, 60_000)

  it("POST /api/v1/validate/bulk-async compressed: any bytes, and compressed text cut and changed anywhere", async () => {
    const compress = { gzip: gzipSync, br: brotliCompressSync, zstd: zstdCompressSync }
    const compressed = fc
      .tuple(
        fc.constantFrom("gzip", "br", "zstd"),
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.nat(),
        fc.option(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })))
      )
      .map(([coding, text, cut, change]) => {
        const bytes = Uint8Array.from(compress[coding](text))
        if (change !== null) bytes[change[0] % bytes.length] = change[1]
        return [coding, bytes.subarray(0, bytes.length - (cut % 4))] as const
      })
    const raw = fc.tuple(fc.constantFrom("gzip", "br", "zstd", "x-gzip, br", "GZIP"), fc.uint8Array({ maxLength: 300 }))
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("application/x-ndjson", "text/csv", "application/gzip"),
        fc.oneof(compressed, raw),
        (type, [coding, body]) =>
          check("POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", body, type, {
            "content-encoding": coding
          })
      ),
      { numRuns: RUNS }
    )
  }, 60_000)
})

/** A path segment: anything, percent-encoded or as written (a `/` may end up in it). */
const segments = fc.oneof(
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.string({ unit: "binary", maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.constantFrom("..", "%2e%2e", "%ZZ", "%FF", "%", "job_00000000000000000000000000000000", "a".repeat(300)),
  fc.stringMatching(/^[A-Za-z0-9%._~-]{0,30}$/)
)

const parameterPaths: ReadonlyArray<readonly [string, (segment: string) => string]> = [
  ["GET", (id) => `/api/v1/offers/${id}`],
  ["GET", (id) => `/api/v1/offers/${id}/status`],
  ["PATCH", (id) => `/api/v1/offers/${id}`],
  ["DELETE", (id) => `/api/v1/offers/${id}`],
  ["GET", (id) => `/api/v1/target-groups/${id}`],
  ["PATCH", (id) => `/api/v1/target-groups/${id}`],
  ["DELETE", (id) => `/api/v1/target-groups/${id}`],
  ["GET", (id) => `/api/v1/jobs?limit=5&status=completed&cursor=${id}`],
  ["GET", (id) => `/api/v1/jobs/${id}`],
  ["GET", (id) => `/api/v1/jobs/${id}/results?limit=5&cursor=${id}`],
  ["DELETE", (id) => `/api/v1/jobs/${id}`],
  ["GET", (id) => `/api/v1/verifications/${id}`],
  ["POST", (id) => `/api/v1/verifications/${id}/resend`],
  ["DELETE", (id) => `/api/v1/verifications/${id}`],
  ["GET", (id) => `/api/v1/verifications?email=${id}&offerId=${id}`],
  ["GET", (id) => `/v/${id}`]
]

describe("fuzzing every path parameter", () => {
  for (const [method, pathOf] of parameterPaths) {
    it(`${method} ${pathOf("{id}")}`, async () => {
      await fc.assert(
        fc.asyncProperty(segments, (segment) =>
          check(method, pathOf(segment), method === "PATCH" ? JSON.stringify({ name: "Renamed" }) : undefined)
        ),
        { numRuns: RUNS }
      )
    }, 60_000)
  }
})
