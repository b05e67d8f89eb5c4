/**
 * What the OpenAPI document needs so that client generators make working
 * clients from it (issue 44), where the generator from the contract
 * leaves it short (`openApiDocument.ts` applies these):
 * - component names as a person would write them: the problems' encoded
 *   side is generated as `BadRequestEncoded`, named `BadRequest` here; a
 *   resource annotated with examples at one endpoint is generated as a
 *   second component (`Offer_1`) that differs from `Offer` only by its
 *   examples, folded back into `Offer` with the examples moved to the
 *   answer's media type;
 * - the response header fields every answer carries: `X-Request-Id`; on
 *   an operation that takes a key, `RateLimit` and `RateLimit-Policy`
 *   (draft-ietf-httpapi-ratelimit-headers); on 429 and 503, `Retry-After`;
 *   on 401, `WWW-Authenticate`;
 * - the job results' other representations: CSV and NDJSON streams.
 */
import type * as OpenApi from "effect/http-api/OpenApi"

type JsonObject = Record<string, unknown>

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null

const schemaRef = (name: string) => `#/components/schemas/${name}`

/** Every `$ref` of the document that names `from`, made to name `to`. */
const replaceRefs = (node: unknown, from: string, to: string): void => {
  if (Array.isArray(node)) {
    for (const item of node) replaceRefs(item, from, to)
    return
  }
  if (!isObject(node)) return
  if (node.$ref === from) node.$ref = to
  for (const value of Object.values(node)) replaceRefs(value, from, to)
}

/** The media types whose schema is the reference `ref`. */
const mediaUsing = (document: OpenApi.OpenAPISpec, ref: string): Array<JsonObject> => {
  const found: Array<JsonObject> = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item)
      return
    }
    if (!isObject(node)) return
    if (isObject(node.content))
      for (const media of Object.values(node.content))
        if (isObject(media) && isObject(media.schema) && media.schema.$ref === ref) found.push(media)
    for (const value of Object.values(node)) walk(value)
  }
  walk(document.paths)
  return found
}

const withoutExamples = ({ examples: _, ...rest }: JsonObject): string => JSON.stringify(rest)

/** The examples of the component `name`, moved to the media types whose schema it is. */
const examplesToMedia = (document: OpenApi.OpenAPISpec, name: string): void => {
  const schema = (document.components.schemas as Record<string, JsonObject>)[name]!
  const examples = schema.examples
  if (!Array.isArray(examples)) return
  for (const media of mediaUsing(document, schemaRef(name)))
    media.examples ??= Object.fromEntries(examples.map((value, i) => [`example${i + 1}`, { value }]))
  delete schema.examples
}

/** Problem components named as their classes, and resources' example variants folded into the resource. */
export const nameComponents = (document: OpenApi.OpenAPISpec): void => {
  const schemas = document.components.schemas as Record<string, JsonObject>
  for (const name of Object.keys(schemas)) {
    const base = /^(.+)_\d+$/.exec(name)?.[1]
    if (base === undefined || schemas[base] === undefined) continue
    if (withoutExamples(schemas[name]!) !== withoutExamples(schemas[base]!)) continue
    examplesToMedia(document, name)
    examplesToMedia(document, base)
    replaceRefs(document, schemaRef(name), schemaRef(base))
    delete schemas[name]
  }
  for (const name of Object.keys(schemas)) {
    const named = name.replace(/Encoded$/, "")
    if (named === name || schemas[named] !== undefined) continue
    schemas[named] = schemas[name]!
    delete schemas[name]
    replaceRefs(document, schemaRef(name), schemaRef(named))
  }
}

const headerFields = {
  XRequestId: {
    description: "The request's id (the one sent, if sane, else made here); every problem names it too.",
    schema: { type: "string" }
  },
  RateLimit: {
    description:
      "What is left of the key's budget for this endpoint's bucket: `\"<bucket>\";r=<remaining>;t=<seconds until it resets>`.",
    schema: { type: "string" }
  },
  RateLimitPolicy: {
    description: 'The bucket\'s budget: `"<bucket>";q=<requests>;w=<window in seconds>`.',
    schema: { type: "string" }
  },
  RetryAfter: {
    description: "Seconds to wait before trying again.",
    required: true,
    schema: { type: "integer", minimum: 0 }
  },
  WWWAuthenticate: {
    description:
      'The scheme to authenticate with: `Bearer realm="campusgate"`, with `error="invalid_token"` for a key refused.',
    required: true,
    schema: { type: "string" }
  }
}

const headerRef = (name: keyof typeof headerFields) => ({ $ref: `#/components/headers/${name}` })

/** The header fields of every answer, as components, named on each response. */
export const responseHeaders = (document: OpenApi.OpenAPISpec, authenticated: (operation: JsonObject) => boolean) => {
  const components = document.components as unknown as JsonObject
  components.headers = { ...(isObject(components.headers) ? components.headers : {}), ...headerFields }
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item as JsonObject)) {
      if (method === "parameters" || !isObject(operation) || !isObject(operation.responses)) continue
      const keyed = authenticated(operation)
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!isObject(response)) continue
        if (!isObject(response.headers)) response.headers = {}
        const headers = response.headers as JsonObject
        headers["X-Request-Id"] = headerRef("XRequestId")
        if (keyed) {
          headers.RateLimit = headerRef("RateLimit")
          headers["RateLimit-Policy"] = headerRef("RateLimitPolicy")
        }
        if (status === "429" || status === "503") headers["Retry-After"] = headerRef("RetryAfter")
        if (status === "401") headers["WWW-Authenticate"] = headerRef("WWWAuthenticate")
      }
    }
  }
}

/** The job results' streams beside the JSON pages: every result as CSV or NDJSON (`format`, or `Accept`). */
export const resultStreams = (document: OpenApi.OpenAPISpec, path: string): void => {
  const operation = document.paths[path]?.get as JsonObject | undefined
  const ok = isObject(operation?.responses) ? (operation.responses as JsonObject)["200"] : undefined
  if (!isObject(ok) || !isObject(ok.content)) throw new Error(`openApiShapes: ${path} answers no 200 with content`)
  ok.content["text/csv"] = {
    schema: { type: "string", description: "Every result as CSV: a header row, then a row per input in input order." },
    example:
      "email,isValid,reasonCode,reason,matchedDomain,institution\njane@ox.ac.uk,true,,,ox.ac.uk,University of Oxford\n"
  }
  ok.content["application/x-ndjson"] = {
    schema: { type: "string", description: "Every result as one JSON object per line, in input order." },
    example: '{"email":"jane@ox.ac.uk","isValid":true,"matchedDomain":"ox.ac.uk"}\n'
  }
}
