/**
 * The OpenAPI document a server serves: the one generated from the contract,
 * with the bulk endpoints' bound set to what the server is configured to
 * accept (`limits.bulkMaxEmails`), as `maxItems` and in their summaries.
 * Built once per bound.
 */
import * as OpenApi from "effect/http-api/OpenApi"
import { API_PREFIX, CampusgateApi } from "./Api.ts"
import { bulkProcessSummary } from "./offers.ts"
import { bulkSummary } from "./validation.ts"

type JsonObject = Record<string, unknown>

const documents = new Map<number, OpenApi.OpenAPISpec>()

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
  documents.set(bulkMaxEmails, document)
  return document
}
