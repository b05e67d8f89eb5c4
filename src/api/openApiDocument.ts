/**
 * The OpenAPI document a server serves: the one generated from the
 * contract, completed where the generator leaves gaps tools trip over, and
 * with the bulk endpoints' bound set to what the server is configured to
 * accept (`limits.bulkMaxEmails`), as `maxItems` and in their summaries.
 * Built once per bound. What it completes:
 * - the bearer scheme is written `bearer`: RFC 9110 schemes are
 *   case-insensitive, but generators (Scalar's snippets among them) know
 *   only the lower-case name and fall back to Basic otherwise;
 * - a `servers` entry: the daemon that serves the document (a relative URL,
 *   so the docs page and tools send requests where they read it);
 * - `limit` is an integer (query values are strings on the wire, so the
 *   generator writes a numeric string);
 * - the problems the server answers for any endpoint: 500, and for one that
 *   takes a body 413 (over the size limit) and 415 (another media type);
 * - the scopes an operation needs, from its `RequiredScope`: in its
 *   `security` requirements (OpenAPI 3.1 lets a bearer requirement list
 *   them; one requirement per scope, as any one will do) and in its
 *   description, for people and generators alike;
 * - what generators need to make working clients: component names, the
 *   response header fields, the job results' streams (`openApiShapes.ts`).
 */
import * as OpenApi from "effect/http-api/OpenApi"
import { API_PREFIX, apiEndpoints, CampusgateApi } from "./Api.ts"
import { Authorization, BEARER, scopesAcceptedBy } from "./Authorization.ts"
import { RESULTS_LIMIT_DEFAULT, RESULTS_LIMIT_MAX } from "./jobs.ts"
import { bulkProcessSummary } from "./offers.ts"
import { nameComponents, responseHeaders, resultStreams } from "./openApiShapes.ts"
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from "./resources.ts"
import { bulkSummary } from "./validation.ts"

type JsonObject = Record<string, unknown>
type Operation = OpenApi.OpenAPISpecOperation

const documents = new Map<number, OpenApi.OpenAPISpec>()

const operationsOf = (document: OpenApi.OpenAPISpec): Array<readonly [string, Operation]> =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => method !== "parameters")
      .map(([, operation]) => [path, operation as Operation] as const)
  )

/** The problem responses every endpoint, or every endpoint with a body, may answer, taken from one that declares them. */
const completeProblems = (document: OpenApi.OpenAPISpec): void => {
  const operations = operationsOf(document)
  const responsesOf = (operation: Operation) => operation.responses as Record<string, unknown>
  const declared = (status: string) =>
    operations.map(([, operation]) => responsesOf(operation)[status]).find((response) => response !== undefined)
  const everywhere = ["500"]
  const withBody = ["413", "415"]
  for (const [, operation] of operations) {
    const statuses = operation.requestBody === undefined ? everywhere : [...everywhere, ...withBody]
    for (const status of statuses) {
      const response = declared(status)
      if (responsesOf(operation)[status] === undefined && response !== undefined)
        responsesOf(operation)[status] = response
    }
  }
}

/** `limit` as the integer it is, with its bounds and default. */
const integerLimits = (document: OpenApi.OpenAPISpec): void => {
  for (const [path, operation] of operationsOf(document)) {
    const results = path.endsWith("/results")
    for (const parameter of (operation.parameters ?? []) as unknown as Array<JsonObject>) {
      if (parameter.name !== "limit" || parameter.in !== "query") continue
      parameter.schema = {
        type: "integer",
        minimum: 1,
        maximum: results ? RESULTS_LIMIT_MAX : PAGE_LIMIT_MAX,
        default: results ? RESULTS_LIMIT_DEFAULT : PAGE_LIMIT_DEFAULT
      }
    }
  }
}

/** Each operation that takes a key names the scopes it accepts, in `security` and in words. */
const requiredScopes = (document: OpenApi.OpenAPISpec): void => {
  for (const endpoint of apiEndpoints) {
    if (!endpoint.middlewares.has(Authorization)) continue
    const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
    const operation = document.paths[path]?.[endpoint.method.toLowerCase() as "get"] as Operation | undefined
    if (operation === undefined) throw new Error(`openApiDocument: no operation for ${endpoint.method} ${path}`)
    const scopes = scopesAcceptedBy(endpoint.annotations)
    // Requirements are alternatives and the scopes of one are all needed: any one scope is one requirement each.
    operation.security = scopes.length === 0 ? [{ [BEARER]: [] }] : scopes.map((scope) => ({ [BEARER]: [scope] }))
    const words =
      scopes.length === 0
        ? "**Scope:** any valid API key."
        : `**Scope:** ${scopes.map((scope) => `\`${scope}\``).join(" or ")}.`
    operation.description = operation.description === undefined ? words : `${operation.description}\n\n${words}`
  }
}

export const openApiDocument = (bulkMaxEmails: number): OpenApi.OpenAPISpec => {
  let document = documents.get(bulkMaxEmails)
  if (document !== undefined) return document
  document = structuredClone(OpenApi.fromApi(CampusgateApi))
  const bound = (path: string, summary: string, arrayField: string) => {
    const operation = document!.paths[`${API_PREFIX}${path}`]!.post!
    operation.summary = summary
    const body = operation.requestBody as { content: Record<string, { schema: JsonObject }> }
    const properties = body.content["application/json"]!.schema.properties as Record<string, JsonObject>
    properties[arrayField]!.maxItems = bulkMaxEmails
  }
  bound("/validate/bulk", bulkSummary(bulkMaxEmails), "emails")
  bound("/offers/bulk-process", bulkProcessSummary(bulkMaxEmails), "requests")
  for (const scheme of Object.values(document.components.securitySchemes)) {
    const http = scheme as unknown as JsonObject
    if (http.type === "http") {
      http.scheme = String(http.scheme).toLowerCase()
    }
  }
  ;(document as unknown as JsonObject).servers = [{ url: "/", description: "This daemon" }]
  integerLimits(document)
  completeProblems(document)
  requiredScopes(document)
  nameComponents(document)
  responseHeaders(document, (operation) => Array.isArray(operation.security) && operation.security.length > 0)
  resultStreams(document, `${API_PREFIX}/jobs/{jobId}/results`)
  documents.set(bulkMaxEmails, document)
  return document
}
