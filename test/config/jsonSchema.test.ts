import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { jsonSchemas, writeJsonSchemas } from "../../src/config/jsonSchema.ts"
import { instantPattern } from "../../src/config/jsonSchemaKinds.ts"
import { ApiKeyId } from "../../src/domain/ApiKey.ts"
import { TargetGroupId } from "../../src/domain/Identifiers.ts"
import { Instant } from "../../src/domain/Offer.ts"
import { DomainName, HostPattern } from "../../src/domain/TargetGroup.ts"

type JsonObject = { [key: string]: unknown }
const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const repo = fileURLToPath(new URL("../../", import.meta.url))
const main = join(repo, "src/cli/main.ts")

const documents = new Map(jsonSchemas().map((file) => [file.fileName, file.document as JsonObject]))
const doc = (fileName: string): JsonObject => {
  const document = documents.get(fileName)
  if (document === undefined) throw new Error(`no ${fileName}`)
  return document
}

/** Every schema object of a document, with its JSON pointer. */
const schemaNodes = (root: JsonObject): Array<readonly [string, JsonObject]> => {
  const found: Array<readonly [string, JsonObject]> = []
  const visit = (node: unknown, pointer: string): void => {
    if (!isObject(node)) return
    found.push([pointer, node])
    for (const key of ["items", "additionalProperties"]) visit(node[key], `${pointer}/${key}`)
    if (Array.isArray(node.allOf)) for (const [i, item] of node.allOf.entries()) visit(item, `${pointer}/allOf/${i}`)
    for (const key of ["properties", "$defs"]) {
      const map = node[key]
      if (isObject(map)) for (const [name, item] of Object.entries(map)) visit(item, `${pointer}/${key}/${name}`)
    }
  }
  visit(root, "#")
  return found
}

/** The keywords the documents use: all known to draft 7 editors too, except `$defs` (reached by JSON pointer). */
const knownKeywords = new Set([
  "$schema",
  "$defs",
  "$ref",
  "title",
  "description",
  "default",
  "examples",
  "type",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "allOf",
  "pattern",
  "minLength",
  "minItems",
  "minimum",
  "maximum",
  "exclusiveMinimum"
])

const hasType = (value: unknown, type: unknown): boolean => {
  switch (type) {
    case "object":
      return isObject(value)
    case "array":
      return Array.isArray(value)
    case "integer":
      return Number.isInteger(value)
    case "number":
      return typeof value === "number"
    case "null":
      return value === null
    default:
      return typeof value === type
  }
}

/**
 * A validator for exactly the keywords above (the test below proves the
 * documents use no others), so the example files are checked against the
 * generated documents without adding a JSON Schema package.
 */
const conformance = (schema: JsonObject, value: unknown, defs: JsonObject, path = ""): Array<string> => {
  const problems: Array<string> = []
  const fail = (message: string) => problems.push(`${path || "(root)"}: ${message}`)
  if (typeof schema.$ref === "string") {
    problems.push(...conformance(defs[schema.$ref.replace("#/$defs/", "")] as JsonObject, value, defs, path))
  }
  if (schema.type !== undefined && !hasType(value, schema.type)) {
    fail(`expected ${String(schema.type)}`)
    return problems
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) fail(`${JSON.stringify(value)} is not allowed`)
  if (typeof value === "string") {
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      fail(`${JSON.stringify(value)} does not match ${schema.pattern}`)
    }
    if (typeof schema.minLength === "number" && [...value].length < schema.minLength) fail("too short")
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) fail("below minimum")
    if (typeof schema.maximum === "number" && value > schema.maximum) fail("above maximum")
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) fail("not above minimum")
  }
  if (Array.isArray(schema.allOf)) for (const sub of schema.allOf) problems.push(...conformance(sub, value, defs, path))
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) fail("too few items")
    const items = schema.items
    if (isObject(items))
      for (const [i, item] of value.entries()) problems.push(...conformance(items, item, defs, `${path}[${i}]`))
  }
  if (isObject(value) && isObject(schema.properties)) {
    const properties = schema.properties
    for (const key of (schema.required as Array<string> | undefined) ?? []) {
      if (!(key in value)) fail(`missing required "${key}"`)
    }
    for (const [key, item] of Object.entries(value)) {
      const sub = properties[key]
      if (isObject(sub)) problems.push(...conformance(sub, item, defs, path === "" ? key : `${path}.${key}`))
      else if (schema.additionalProperties === false) fail(`unknown key "${key}"`)
    }
  }
  return problems
}

const check = (fileName: string, value: unknown): Array<string> => {
  const document = doc(fileName)
  return conformance(document, value, (document.$defs ?? {}) as JsonObject)
}

/** The example config directories and the schema of each of their files. */
const configFiles = (dir: string): Array<readonly [string, string]> => [
  [join(dir, "campusgate.yaml"), "campusgate.schema.json"],
  ...readdirSync(join(dir, "target-groups")).map(
    (f) => [join(dir, "target-groups", f), "target-group.schema.json"] as const
  ),
  ...readdirSync(join(dir, "offers")).map((f) => [join(dir, "offers", f), "offer.schema.json"] as const),
  ...(readdirSync(dir).includes("clients")
    ? readdirSync(join(dir, "clients")).map((f) => [join(dir, "clients", f), "client.schema.json"] as const)
    : []),
  ...(readdirSync(dir).includes("api-keys.yaml") ? [[join(dir, "api-keys.yaml"), "api-keys.schema.json"] as const] : [])
]

describe("jsonSchemas", () => {
  it("has one standalone draft 2020-12 document per file kind", () => {
    expect([...documents.keys()]).toEqual([
      "campusgate.schema.json",
      "target-group.schema.json",
      "offer.schema.json",
      "client.schema.json",
      "api-keys.schema.json"
    ])
    for (const file of jsonSchemas()) {
      const document = file.document as JsonObject
      expect(JSON.parse(JSON.stringify(document))).toEqual(document)
      expect(document).toMatchObject({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        title: file.title,
        description: expect.any(String),
        type: "object"
      })
      expect(document).not.toHaveProperty("$id")
    }
  })

  it("closes every object schema, uses only draft-7-compatible keywords, and resolves every $ref", () => {
    for (const [fileName, document] of documents) {
      const defs = (document.$defs ?? {}) as JsonObject
      for (const [pointer, node] of schemaNodes(document)) {
        if (isObject(node.properties)) expect(node.additionalProperties, `${fileName} ${pointer}`).toBe(false)
        for (const key of Object.keys(node)) expect(knownKeywords.has(key), `${fileName} ${pointer}: ${key}`).toBe(true)
        if (typeof node.$ref === "string") expect(defs).toHaveProperty(node.$ref.replace("#/$defs/", ""))
        if ("default" in node) expect(conformance(node, node.default, defs), `${fileName} ${pointer}`).toEqual([])
      }
    }
  })

  it("lists the target-group criteria with their keys, defaults and descriptions", () => {
    const criteria = (doc("target-group.schema.json").properties as JsonObject).criteria as JsonObject
    const props = criteria.properties as Record<string, JsonObject>
    expect(Object.keys(props)).toEqual(["institutions", "domains", "patterns", "email"])
    expect(Object.keys(props.institutions!.properties as JsonObject)).toEqual([
      "types",
      "countries",
      "regions",
      "roles",
      "includeSuffixRules",
      "minConfidence",
      "acceptCandidates"
    ])
    expect(Object.keys(props.domains!.properties as JsonObject)).toEqual(["allow", "deny"])
    expect(Object.keys(props.patterns!.properties as JsonObject)).toEqual(["allow", "deny"])
    expect(props.email!.default).toEqual({
      rejectDisposable: true,
      rejectRoleAccounts: false,
      rejectFreeMail: false,
      rejectAbused: true,
      rejectConfusable: true,
      allowQuotedLocalPart: false,
      allowIpLiteral: false,
      allowSpecialUseDomains: false
    })
    expect((props.institutions!.properties as Record<string, JsonObject>).includeSuffixRules).toMatchObject({
      type: "boolean",
      default: true,
      description: expect.stringContaining("suffix rule")
    })
    for (const [pointer, node] of schemaNodes(criteria)) {
      if (pointer !== "#" && !pointer.includes("/items")) expect(node.description, pointer).toEqual(expect.any(String))
    }
    const settings = doc("campusgate.schema.json").properties as Record<string, JsonObject>
    expect((settings.server!.properties as Record<string, JsonObject>).port).toMatchObject({ default: 8080 })
    expect((settings.logging!.properties as Record<string, JsonObject>).level).toMatchObject({ default: "info" })
  })

  it("carries patterns that agree with the Effect schemas", () => {
    const samples: Array<readonly [Schema.Top, "domains" | "patterns", ReadonlyArray<string>]> = [
      [DomainName, "domains", ["ox.ac.uk", "xn--bcher-kva.de", "Ox.ac.uk", "-x.com", "com", "a..b", "a_b.org"]],
      [HostPattern, "patterns", ["*.ac.uk", "students.*.edu", "ac", "*", "*.AC.uk", "a b.edu"]]
    ]
    for (const [schema, list, values] of samples) {
      for (const value of values) {
        const group = { id: "x", name: "x", criteria: { [list]: { allow: [value], deny: [value] } } }
        const accepted = Schema.is(schema as Schema.Codec<unknown>)(value)
        expect(check("target-group.schema.json", group).length === 0, `${list} ${value}`).toBe(accepted)
      }
    }
    const tg = doc("target-group.schema.json")
    const idPattern = new RegExp(((tg.properties as JsonObject).id as JsonObject).pattern as string, "u")
    for (const id of ["uk-students", "a", "A", "-x", "x".repeat(64), "x".repeat(65), "a.b_c"]) {
      expect(idPattern.test(id), id).toBe(Schema.is(TargetGroupId)(id))
    }
    const keys = doc("api-keys.schema.json")
    const keyItem = ((keys.properties as JsonObject).keys as JsonObject).items as JsonObject
    const keyId = new RegExp(((keyItem.properties as JsonObject).id as JsonObject).pattern as string, "u")
    for (const id of ["key_abcdefgh", "key_abc", "KEY_abcdefgh"])
      expect(keyId.test(id), id).toBe(Schema.is(ApiKeyId)(id))
    const instant = new RegExp(instantPattern, "u")
    for (const value of ["2026-09-01T00:00:00Z", "2026-09-01T00:00+02:00", "2026-09-01T00:00:00.5-05:00"]) {
      expect([value, instant.test(value), Schema.is(Instant)(value)]).toEqual([value, true, true])
    }
    for (const value of ["2026-09-01", "2026-09-01T00:00:00", "2026-09-01 00:00:00Z"]) {
      expect([value, instant.test(value), Schema.is(Instant)(value)]).toEqual([value, false, false])
    }
  })

  it("rejects unknown keys, missing keys and bad values the way the decoder does", () => {
    expect(check("target-group.schema.json", { id: "a", name: "A", criteria: { institution: {} } })).toEqual([
      'criteria: unknown key "institution"'
    ])
    expect(
      check("target-group.schema.json", { id: "a", name: "A", criteria: { institutions: { countries: ["UK"] } } })
    ).toEqual(['criteria.institutions.countries[0]: "UK" is not allowed'])
    expect(check("offer.schema.json", { id: "o", team: "t", name: "O", targetGroups: [] })).toEqual([
      '(root): missing required "status"',
      "targetGroups: too few items"
    ])
    expect(check("campusgate.schema.json", { server: { port: 70000 } })).toEqual(["server.port: above maximum"])
    expect(check("api-keys.schema.json", { keys: [] })).toEqual([])
  })

  it("accepts every file of the example config directories", () => {
    for (const dir of ["config", "examples/gitops"]) {
      for (const [path, fileName] of configFiles(join(repo, dir))) {
        expect(check(fileName, parse(readFileSync(path, "utf8"))), path).toEqual([])
      }
    }
  })

  it("writeJsonSchemas writes the documents as JSON files", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "campusgate-schemas-")), "nested", "out")
    const written = writeJsonSchemas(dir)
    expect(written.map((path) => path.slice(dir.length + 1))).toEqual([...documents.keys()])
    for (const path of written) {
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(documents.get(path.slice(dir.length + 1)))
    }
  })
})

describe("campusgate schema", () => {
  it("writes the files into --out, or ./schemas, one line per file", () => {
    const cwd = mkdtempSync(join(tmpdir(), "campusgate-schema-cli-"))
    const explicit = spawnSync(process.execPath, [main, "schema", "--out", "out/dir"], { cwd, encoding: "utf8" })
    expect(explicit.status).toBe(0)
    expect(explicit.stdout.trim().split("\n")).toEqual([...documents.keys()].map((name) => `wrote out/dir/${name}`))
    const byDefault = spawnSync(process.execPath, [main, "schema"], { cwd, encoding: "utf8" })
    expect(byDefault.status).toBe(0)
    expect(readdirSync(join(cwd, "schemas")).sort()).toEqual([...documents.keys()].sort())
  })

  it("exits non-zero with a message on a bad flag or an unwritable directory", () => {
    const cwd = mkdtempSync(join(tmpdir(), "campusgate-schema-cli-"))
    const bad = spawnSync(process.execPath, [main, "schema", "--outt", "x"], { cwd, encoding: "utf8" })
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain("--outt")
    const unwritable = spawnSync(process.execPath, [main, "schema", "--out", join(main, "x")], {
      cwd,
      encoding: "utf8"
    })
    expect(unwritable.status).not.toBe(0)
    expect(unwritable.stderr).toContain("cannot write the JSON schemas")
  })
})
