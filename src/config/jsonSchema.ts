/**
 * JSON Schema (draft 2020-12) documents for the files of a config directory,
 * generated from the Effect schemas that decode them, so editors can check
 * a file while it is written: a first line
 * `# yaml-language-server: $schema=../dist/schemas/campusgate.schema.json`
 * points the YAML language server at one (`campusgate schema` and
 * `npm run build` write them).
 *
 * Effect emits the structure (types, enums, required keys, bounds and, with
 * `onExcessProperty: "error"`, `additionalProperties: false`). Added here
 * (the words and patterns of each file kind are in `jsonSchemaKinds.ts`):
 * - `additionalProperties: false` on any object schema still without it;
 * - `default`s, found by decoding a minimal file and reading back what the
 *   schema filled in;
 * - the `pattern`s of host names, globs and ids (Effect leaves out RegExps
 *   written without the `u` flag), taken from the schemas' own checks, and
 *   the ISO 8601 form of instants;
 * - descriptions, so an editor explains each key on hover.
 * The schemas cannot say everything the decoder checks (an offer's
 * `startsAt` before its `endsAt`, teams declared, ids unique): `campusgate
 * check` does.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "../store/atomicWrite.ts"
import { isObject, type JsonObject, type Kind, kinds } from "./jsonSchemaKinds.ts"

export interface JsonSchemaFile {
  /** E.g. `campusgate.schema.json`. */
  readonly fileName: string
  readonly title: string
  /** A standalone draft 2020-12 document: `$schema`, `title`, `description`, the root schema and its `$defs`. */
  readonly document: object
}

const nodeAt = (root: JsonObject, path: string): JsonObject => {
  let node: unknown = root
  for (const segment of path.split(".")) {
    const items = segment.endsWith("[]")
    const name = items ? segment.slice(0, -2) : segment
    const properties: unknown = isObject(node) ? node.properties : undefined
    node = isObject(properties) ? properties[name] : undefined
    if (items) node = isObject(node) ? node.items : undefined
    if (!isObject(node)) throw new Error(`jsonSchema: the generated schema has no "${path}"`)
  }
  return node as JsonObject
}

/** Sets `default` on each optional property the decoder filled in for the minimal `probe`. */
const addDefaults = (node: JsonObject, probe: unknown, decoded: unknown): void => {
  const properties = node.properties
  if (!isObject(properties) || !isObject(decoded)) return
  const required = new Set(Array.isArray(node.required) ? node.required : [])
  for (const [key, child] of Object.entries(properties)) {
    if (!isObject(child) || !(key in decoded)) continue
    const probed = isObject(probe) && key in probe
    if (!probed && !required.has(key)) child.default = decoded[key]
    addDefaults(child, isObject(probe) ? probe[key] : undefined, decoded[key])
  }
}

const subSchemaKeys = ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"]
const subSchemaListKeys = ["prefixItems", "allOf", "anyOf", "oneOf"]
const subSchemaMapKeys = ["properties", "patternProperties", "dependentSchemas", "$defs"]

/** Adds `additionalProperties: false` to every object schema listing `properties` that does not say otherwise. */
const closeObjects = (schema: unknown): void => {
  if (!isObject(schema)) return
  if (isObject(schema.properties) && !("additionalProperties" in schema)) schema.additionalProperties = false
  for (const key of subSchemaKeys) closeObjects(schema[key])
  for (const key of subSchemaListKeys) {
    const list = schema[key]
    if (Array.isArray(list)) for (const item of list) closeObjects(item)
  }
  for (const key of subSchemaMapKeys) {
    const map = schema[key]
    if (isObject(map)) for (const item of Object.values(map)) closeObjects(item)
  }
}

const DIALECT = "https://json-schema.org/draft/2020-12/schema"

const documentOf = (kind: Kind): JsonObject => {
  const generated = Schema.toJsonSchemaDocument(kind.schema, { onExcessProperty: "error" })
  const root = JSON.parse(JSON.stringify(generated.schema)) as JsonObject
  const definitions = JSON.parse(JSON.stringify(generated.definitions)) as JsonObject
  closeObjects(root)
  for (const definition of Object.values(definitions)) closeObjects(definition)
  const decoded: unknown = JSON.parse(JSON.stringify(Schema.decodeUnknownSync(kind.schema)(kind.probe)))
  addDefaults(root, kind.probe, decoded)
  for (const [path, additions] of kind.additions) Object.assign(nodeAt(root, path), additions)
  const { title: _title, description: _description, ...rest } = root
  return {
    $schema: DIALECT,
    title: kind.title,
    description: kind.description,
    ...rest,
    ...(Object.keys(definitions).length > 0 ? { $defs: definitions } : {})
  }
}

/** One JSON Schema document per file kind of a config directory. */
export const jsonSchemas = (): ReadonlyArray<JsonSchemaFile> =>
  kinds.map((kind) => ({ fileName: kind.fileName, title: kind.title, document: documentOf(kind) }))

/** Writes every document into `outDir` (created when missing); returns the paths written. */
export const writeJsonSchemas = (outDir: string): ReadonlyArray<string> => {
  mkdirSync(outDir, { recursive: true })
  return jsonSchemas().map(({ fileName, document }) => {
    const path = join(outDir, fileName)
    writeFileAtomic(path, `${JSON.stringify(document, null, 2)}\n`)
    return path
  })
}
