/**
 * The OpenAPI document the daemon serves at `/openapi.json`, built from the
 * contract as `HttpApiBuilder` builds it: a valid OpenAPI 3.1 document (by
 * the OpenAPI schemas, `@seriousme/openapi-schema-validator`), every
 * endpoint under its path and method with a summary, the bearer scheme and
 * the problem responses, and examples the contract's schemas accept.
 */
import { readdirSync } from "node:fs"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import type * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { CampusgateApi } from "../../src/api/Api.ts"
import { scopesAcceptedBy } from "../../src/api/Authorization.ts"
import { BulkAsyncJsonBody } from "../../src/api/jobs.ts"
import { openApiDocument } from "../../src/api/openApiDocument.ts"
import { BULK_MAX_EMAILS } from "../../src/api/validation.ts"

// The document the daemon serves: generated from the contract and completed (api/openApiDocument.ts).
const spec = openApiDocument(BULK_MAX_EMAILS)

// How the server reads bodies: every problem, and unknown fields are problems.
const strict = { errors: "all", onExcessProperty: "error" } as const

const endpoints = Object.values(CampusgateApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({
    name: `${endpoint.method} ${endpoint.path}`,
    annotations: endpoint.annotations,
    path: endpoint.path.replace(/:(\w+)/g, "{$1}"),
    method: endpoint.method.toLowerCase() as OpenApi.OpenAPISpecMethodName,
    payloads: [...endpoint.payload.values()].flatMap((entry) => entry.schemas),
    successes: [...endpoint.success]
  }))
)
const withPayload = endpoints.filter((endpoint) => endpoint.payloads.length > 0)

const operationOf = (endpoint: (typeof endpoints)[number]) => spec.paths[endpoint.path]?.[endpoint.method]

type JsonSchema = { readonly $ref?: string; readonly examples?: ReadonlyArray<unknown> }
/** A schema of the document, with a `$ref` into the components followed. */
const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined => {
  const ref = schema?.$ref
  if (ref === undefined) return schema
  return spec.components.schemas[ref.replace("#/components/schemas/", "")] as JsonSchema | undefined
}

/** The fields of the request examples that name config resources. */
type BodyExample = {
  readonly id?: string
  readonly targetGroupId?: string
  readonly offerId?: string
  readonly targetGroups?: ReadonlyArray<string>
  readonly requests?: ReadonlyArray<{ readonly offerId: string }>
}

const decodeWith = (schema: unknown, value: unknown) =>
  Schema.decodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(value, strict)

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(spec) as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("is checked for real: a broken copy is refused", async () => {
    const broken = structuredClone(spec) as unknown as { paths: Record<string, Record<string, unknown>> }
    broken.paths["/api/v1/offers"]!.post = { responses: { "201": { content: {} } } }
    const result = await new Validator().validate(broken)
    expect(result.valid).toBe(false)
  })

  it("has every endpoint of the contract under its path and method, with a summary and a description", () => {
    expect(endpoints.length).toBeGreaterThan(0)
    for (const endpoint of endpoints) {
      const operation = operationOf(endpoint)
      expect(operation, endpoint.name).toBeDefined()
      expect(operation!.summary, endpoint.name).toMatch(/\S/)
      expect(operation!.description?.length ?? 0, endpoint.name).toBeGreaterThan(40)
    }
    const documented = Object.values(spec.paths).flatMap((item) =>
      Object.keys(item).filter((key) => key !== "parameters")
    )
    expect(documented).toHaveLength(endpoints.length)
  })

  it("lists the bearer security scheme in lower case (tools know no other spelling), and every endpoint requires it", () => {
    expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    for (const endpoint of endpoints) {
      const requirements = operationOf(endpoint)!.security as Array<Record<string, Array<string>>>
      expect(requirements.length, endpoint.name).toBeGreaterThan(0)
      for (const requirement of requirements) expect(Object.keys(requirement), endpoint.name).toEqual(["bearer"])
    }
  })

  it("names the scopes each operation needs, in its security requirements (any one) and in its description", () => {
    for (const endpoint of endpoints) {
      const scopes = scopesAcceptedBy(endpoint.annotations)
      const operation = operationOf(endpoint)!
      expect(operation.security, endpoint.name).toEqual(
        scopes.length === 0 ? [{ bearer: [] }] : scopes.map((scope) => ({ bearer: [scope] }))
      )
      for (const scope of scopes) expect(operation.description, endpoint.name).toContain(`\`${scope}\``)
    }
    const jobs = spec.paths["/api/v1/jobs/{jobId}"]!.get!
    expect(jobs.security).toEqual([{ bearer: ["jobs:read"] }, { bearer: ["validate:bulk"] }])
    expect(jobs.description).toMatch(/\*\*Scope:\*\* `jobs:read` or `validate:bulk`\.$/)
  })

  it("names a component for every resource and problem, as a generator would want to name its types", () => {
    const names = Object.keys(spec.components.schemas)
    for (const name of [
      "Offer",
      "OfferPage",
      "OfferStatus",
      "TargetGroup",
      "TargetGroupPage",
      "Job",
      "JobPage",
      "JobAccepted",
      "JobResultsPage",
      "ValidationResult",
      "OfferValidationResult",
      "BulkValidationResult",
      "Verification",
      "Institution",
      "InstitutionPage",
      "DaemonStatus",
      "BadRequest",
      "NotFound",
      "Conflict",
      "TooManyRequests",
      "ServiceUnavailable"
    ])
      expect(names).toContain(name)
    expect(names.filter((name) => /Encoded$|_\d+$/.test(name))).toEqual([])
    // Numbers are plain numbers: nothing a finite value is never encoded as ("Infinity", "NaN").
    expect(JSON.stringify(spec)).not.toMatch(/"(-?Infinity|NaN)"/)
  })

  it("documents the header fields of every answer, and the job results' CSV and NDJSON streams", () => {
    for (const endpoint of endpoints) {
      for (const [status, response] of Object.entries(operationOf(endpoint)!.responses)) {
        const headers = (response as { headers?: Record<string, unknown> }).headers ?? {}
        expect(Object.keys(headers), `${endpoint.name} ${status}`).toContain("X-Request-Id")
        expect(Object.keys(headers), `${endpoint.name} ${status}`).toContain("RateLimit")
        if (status === "429" || status === "503") expect(Object.keys(headers)).toContain("Retry-After")
        if (status === "401") expect(Object.keys(headers)).toContain("WWW-Authenticate")
      }
    }
    const created = spec.paths["/api/v1/offers"]!.post!.responses["201"] as { headers: Record<string, unknown> }
    expect(Object.keys(created.headers)).toEqual(expect.arrayContaining(["location", "etag"]))
    const results = spec.paths["/api/v1/jobs/{jobId}/results"]!.get!.responses["200"] as { content: object }
    expect(Object.keys(results.content).sort()).toEqual(["application/json", "application/x-ndjson", "text/csv"])
    for (const tag of spec.tags) expect(tag.description?.length ?? 0, tag.name).toBeGreaterThan(40)
  })

  it("lists the problem responses: RFC 9457 problem details for every error status", () => {
    for (const endpoint of endpoints) {
      const responses = operationOf(endpoint)!.responses
      // Every endpoint: a bad request, the key's problems, its rate limit, the limiter being down, the unexpected;
      // one with a body also a body too large and another media type.
      const statuses = [400, 401, 403, 429, 500, 503, ...(endpoint.payloads.length > 0 ? [413, 415] : [])]
      for (const status of statuses) expect(Object.keys(responses), endpoint.name).toContain(String(status))
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue
        const problem = resolve(response.content?.["application/problem+json"]?.schema)
        expect(problem, `${endpoint.name} ${status}`).toMatchObject({ type: "object" })
      }
    }
  })

  it("names this daemon as its server, so snippets and tools send requests where the document was read", () => {
    expect((spec as unknown as { servers: unknown }).servers).toEqual([{ url: "/", description: "This daemon" }])
  })

  it("declares every limit as an integer with its bounds", () => {
    const limits = endpoints.flatMap((endpoint) =>
      ((operationOf(endpoint)!.parameters ?? []) as unknown as ReadonlyArray<{ name: string; schema: unknown }>)
        .filter((parameter) => parameter.name === "limit")
        .map((parameter) => [endpoint.name, parameter.schema] as const)
    )
    expect(limits.length).toBeGreaterThanOrEqual(3)
    for (const [name, schema] of limits) {
      expect(schema, name).toMatchObject({ type: "integer", minimum: 1, maximum: expect.any(Number) })
    }
  })

  it("has request examples for every endpoint with a body, each accepted by the endpoint's payload schema", () => {
    expect(withPayload.map((endpoint) => endpoint.name).sort()).toEqual([
      "PATCH /api/v1/offers/:id",
      "PATCH /api/v1/target-groups/:id",
      "POST /api/v1/institution-reviews/:domain/approve",
      "POST /api/v1/institution-reviews/:domain/reject",
      "POST /api/v1/keys",
      "POST /api/v1/offers",
      "POST /api/v1/offers/bulk-process",
      "POST /api/v1/target-groups",
      "POST /api/v1/validate/bulk",
      "POST /api/v1/validate/bulk-async",
      "POST /api/v1/validate/offer",
      "POST /api/v1/validate/target-group",
      "POST /api/v1/verifications",
      "POST /api/v1/verifications/:id/confirm",
      "POST /api/v1/verifications/reset-limit"
    ])
    for (const endpoint of withPayload) {
      // A streamed body is read as bytes; its JSON form is described by BulkAsyncJsonBody.
      const payload = endpoint.name.endsWith("/bulk-async") ? BulkAsyncJsonBody : endpoint.payloads[0]
      const body = resolve(operationOf(endpoint)!.requestBody?.content["application/json"]?.schema as JsonSchema)
      const examples = body?.examples ?? []
      expect(examples.length, endpoint.name).toBeGreaterThan(0)
      for (const example of examples) {
        expect(() => decodeWith(payload, example), `${endpoint.name} ${JSON.stringify(example)}`).not.toThrow()
      }
    }
  })

  it("has response examples the endpoint's success schema accepts", () => {
    let count = 0
    for (const endpoint of endpoints) {
      for (const [status, response] of Object.entries(operationOf(endpoint)!.responses)) {
        if (Number(status) >= 400) continue
        const examples = resolve(response.content?.["application/json"]?.schema as JsonSchema)?.examples ?? []
        for (const example of examples) {
          count++
          // An endpoint with several answers (a started verification, or the failed validation result) documents each.
          const accepted = endpoint.successes.filter((success) => {
            try {
              decodeWith(HttpApiSchema.isWithHeaders(success) ? success.schema : success, example)
              return true
            } catch {
              return false
            }
          })
          expect(accepted.length, `${endpoint.name} ${status} ${JSON.stringify(example).slice(0, 80)}`).toBeGreaterThan(
            0
          )
        }
      }
    }
    expect(count).toBeGreaterThan(0)
  })

  it("uses the shipped example config: referenced ids exist in config/, created ids do not", () => {
    const configIds = (dir: string) =>
      new Set(readdirSync(new URL(`../../config/${dir}/`, import.meta.url)).map((file) => file.replace(/\.yaml$/, "")))
    const shipped = { targetGroups: configIds("target-groups"), offers: configIds("offers") }
    const examplesOf = (path: string, method: OpenApi.OpenAPISpecMethodName) =>
      (resolve(spec.paths[path]?.[method]?.requestBody?.content["application/json"]?.schema as JsonSchema)?.examples ??
        []) as ReadonlyArray<BodyExample>
    const referenced = { targetGroups: new Set<string>(), offers: new Set<string>() }
    for (const path of ["/api/v1/validate/target-group", "/api/v1/validate/offer", "/api/v1/validate/bulk"]) {
      for (const example of examplesOf(path, "post")) {
        if (example.targetGroupId !== undefined) referenced.targetGroups.add(example.targetGroupId)
        if (example.offerId !== undefined) referenced.offers.add(example.offerId)
      }
    }
    for (const example of examplesOf("/api/v1/offers/bulk-process", "post")) {
      for (const request of example.requests ?? []) referenced.offers.add(request.offerId)
    }
    for (const example of examplesOf("/api/v1/offers", "post")) {
      for (const id of example.targetGroups ?? []) referenced.targetGroups.add(id)
      expect(shipped.offers, "a new offer's id is not taken").not.toContain(example.id)
    }
    for (const example of examplesOf("/api/v1/target-groups", "post")) {
      expect(shipped.targetGroups, "a new target group's id is not taken").not.toContain(example.id)
    }
    expect(referenced.targetGroups).toContain("uk-students")
    expect(referenced.offers).toContain("acme-student-discount")
    for (const id of referenced.targetGroups) expect(shipped.targetGroups).toContain(id)
    for (const id of referenced.offers) expect(shipped.offers).toContain(id)
  })
})
