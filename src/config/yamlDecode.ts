/**
 * YAML text → a schema's type, or problems that point into the file: every
 * problem names the file, the 1-based line and column, the field path and
 * what was expected. Syntax errors, duplicate keys, more than one document,
 * unknown keys (typos must not pass silently) and schema failures are all
 * reported, never thrown.
 *
 * The work a file can cause is bounded: at most `MAX_YAML_BYTES` of text and
 * `MAX_YAML_VALUES` values once aliases are expanded (and the parser's own
 * alias cap). Duplicate keys are found in one pass with a set per mapping:
 * the parser's own check compares each key with every earlier one, which
 * took 5 s for a 500 KB file of 20,000 keys.
 */
import * as Schema from "effect/Schema"
import { isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseAllDocuments, visit, type YAMLError } from "yaml"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { decodeWhatDecodes } from "./partialDecode.ts"
import { type Found, fieldIssues } from "./schemaProblems.ts"
import { explainSyntaxError, plainValueError } from "./yamlSyntax.ts"

export type YamlDecoded<A> =
  | { readonly ok: true; readonly value: A }
  | {
      readonly ok: false
      readonly problems: ReadonlyArray<ConfigurationProblem>
      /** With `partial`: what still decodes once the failing parts are left out (`partialDecode.ts`). */
      readonly partial?: A
    }

export interface YamlDecodeOptions {
  /** What an empty file stands for; absent: an empty file is a problem. */
  readonly empty?: unknown
  /** On a schema failure, also decode what remains without the failing parts. */
  readonly partial?: boolean
}

/** The largest YAML file read, in bytes (UTF-8). */
export const MAX_YAML_BYTES = 1024 * 1024
/** The most values (mappings, lists and scalars) a file may hold once its aliases are expanded. */
export const MAX_YAML_VALUES = 200_000

/** Every key that appears a second time in the same mapping, with the offset of the repeat. */
const duplicateKeys = (root: Node | null): Array<{ offset: number; path: Array<PropertyKey>; first: number }> => {
  const found: Array<{ offset: number; path: Array<PropertyKey>; first: number }> = []
  const visit = (node: unknown, path: Array<PropertyKey>): void => {
    if (isMap(node)) {
      const seen = new Map<string, number>()
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined
        if (key !== undefined) {
          const offset = (pair.key as Node).range?.[0] ?? 0
          const first = seen.get(key)
          if (first === undefined) seen.set(key, offset)
          else found.push({ offset, path: [...path, key], first })
        }
        visit(pair.value, key === undefined ? path : [...path, key])
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        visit(item, [...path, i])
      })
    }
  }
  visit(root, [])
  return found
}

/** Whether `value` holds more than `limit` values (itself included), stopping as soon as it does. */
const exceedsValues = (value: unknown, limit: number): boolean => {
  let count = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    if (++count > limit) return true
    if (Array.isArray(next)) {
      for (const item of next) stack.push(item)
    } else if (typeof next === "object" && next !== null) {
      for (const key in next) stack.push((next as Record<string, unknown>)[key])
    }
  }
  return false
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`),
    ""
  )

interface Located extends Found {
  /** Where the value is, or the nearest ancestor's when `exact` is false. */
  readonly offset: number
}

/** The offset of the value at `path` (or of its key when `atKey`), or of the deepest ancestor found. */
const locate = (root: Node | null, path: ReadonlyArray<PropertyKey>, atKey: boolean): Located => {
  let node: unknown = root
  let offset = root?.range?.[0] ?? 0
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!
    const last = i === path.length - 1
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(key))
      if (pair === undefined) return { offset, exact: false }
      const keyNode = pair.key as Node
      const valueNode = pair.value as Node | null
      if (last && (atKey || valueNode?.range === undefined))
        return { offset: keyNode.range?.[0] ?? offset, exact: true }
      offset = valueNode?.range?.[0] ?? keyNode.range?.[0] ?? offset
      node = valueNode
    } else if (isSeq(node) && typeof key === "number") {
      const item = node.items[key] as Node | undefined
      if (item === undefined) return { offset, exact: false }
      offset = item.range?.[0] ?? offset
      node = item
    } else {
      return { offset, exact: false }
    }
  }
  return isScalar(node) ? { offset, exact: true, scalar: node.value } : { offset, exact: true }
}

/** Where the alias a value-building error names is (the parser's message ends with its name), else the first alias. */
const aliasOffset = (root: unknown, message: string): number => {
  let offset: number | undefined
  visit(root as Node, {
    Alias: (_, node) => {
      if (!isAlias(node)) return
      offset ??= node.range?.[0]
      if (message.endsWith(`: ${node.source}`) || message.endsWith(`: *${node.source}`)) {
        offset = node.range?.[0]
        return visit.BREAK
      }
    }
  })
  return offset ?? 0
}

/**
 * The 1-based line and column of the value at `path` in YAML `text` (or of
 * the nearest ancestor present), for problems found after decoding, such as
 * a dangling reference.
 */
export const positionOf = (text: string, path: ReadonlyArray<PropertyKey>): { line: number; column: number } => {
  const lineCounter = new LineCounter()
  const documents = parseAllDocuments(text, { lineCounter, uniqueKeys: false })
  const root = Array.isArray(documents) ? ((documents[0]?.contents ?? null) as Node | null) : null
  const { line, col } = lineCounter.linePos(locate(root, path, false).offset)
  return { line, column: col }
}

/** A top-level string field of a YAML mapping, read without decoding (e.g. the `id` of a file that failed to decode). */
export const rawStringField = (text: string, key: string): string | undefined => {
  const documents = parseAllDocuments(text, { uniqueKeys: false })
  const contents = Array.isArray(documents) ? documents[0]?.contents : undefined
  if (!isMap(contents)) return undefined
  const value = contents.get(key)
  return typeof value === "string" ? value : undefined
}

/**
 * The plain values of a YAML document, read without a schema, to learn
 * what a file that failed to decode still refers to; undefined when its
 * syntax is broken (what the parser made of it cannot be trusted) or it is
 * too large. Bounded like `decodeYaml`.
 */
export const rawDocument = (text: string): unknown => {
  if (Buffer.byteLength(text) > MAX_YAML_BYTES) return undefined
  const documents = parseAllDocuments(text, { uniqueKeys: false })
  const document = Array.isArray(documents) ? documents[0] : undefined
  if (document === undefined || document.errors.length > 0) return undefined
  try {
    return document.toJS({ maxAliasCount: 100 })
  } catch {
    return undefined
  }
}

/**
 * The first syntax error of a file, in plain words. Only the first: once
 * the parser has lost its way, its later errors are mostly echoes of it
 * (a missing colon gave seven), so they are counted, not listed.
 */
const syntaxProblem = (
  file: string,
  text: string,
  lineCounter: LineCounter,
  errors: ReadonlyArray<YAMLError>
): ConfigurationProblem => {
  const { message, offset } = explainSyntaxError(errors[0]!, text)
  const { line, col } = lineCounter.linePos(offset)
  const more = errors.length - 1
  const rest =
    more === 0
      ? ""
      : ` (fix this first: the parser reports ${more} more error${more === 1 ? "" : "s"} after it, which may follow from it)`
  return { file, line, column: col, path: "", message: `${message}${rest}` }
}

/** Decodes the YAML `text` of `file` (the name problems should show) with `schema`. */
export const decodeYaml = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  file: string,
  text: string,
  options: YamlDecodeOptions = {}
): YamlDecoded<S["Type"]> => {
  if (Buffer.byteLength(text) > MAX_YAML_BYTES) {
    return {
      ok: false,
      problems: [{ file, line: 1, column: 1, path: "", message: `the file is larger than ${MAX_YAML_BYTES} bytes` }]
    }
  }
  const lineCounter = new LineCounter()
  const documents = parseAllDocuments(text, { lineCounter, uniqueKeys: false, prettyErrors: true })
  const at = (offset: number, path: string, message: string): ConfigurationProblem => {
    const { line, col } = lineCounter.linePos(offset)
    return { file, line, column: col, path, message }
  }
  const list = Array.isArray(documents) ? documents : []
  if (list.length > 1) {
    return {
      ok: false,
      problems: [at(list[1]!.range[0], "", "one resource per file: remove the second YAML document")]
    }
  }
  const document = list[0]
  const syntax = document?.errors ?? []
  if (syntax.length > 0) {
    return {
      ok: false,
      problems: [syntaxProblem(file, text, lineCounter, syntax)]
    }
  }
  const duplicates = duplicateKeys((document?.contents ?? null) as Node | null)
  if (duplicates.length > 0) {
    return {
      ok: false,
      problems: duplicates.map((duplicate) =>
        at(
          duplicate.offset,
          pathText(duplicate.path),
          `the key "${String(duplicate.path.at(-1))}" appears twice in the same mapping (first on line ${lineCounter.linePos(duplicate.first).line})`
        )
      )
    }
  }
  let input: unknown
  if (document === undefined || document.contents === null) {
    if (!("empty" in options))
      return { ok: false, problems: [{ file, line: 1, column: 1, path: "", message: "the file is empty" }] }
    input = options.empty
  } else {
    try {
      input = document.toJS({ maxAliasCount: 100 })
    } catch (error) {
      return {
        ok: false,
        problems: [
          at(aliasOffset(document.contents, (error as Error).message), "", plainValueError((error as Error).message))
        ]
      }
    }
    if (exceedsValues(input, MAX_YAML_VALUES)) {
      return {
        ok: false,
        problems: [at(0, "", `the file holds more than ${MAX_YAML_VALUES} values once its aliases are expanded`)]
      }
    }
  }
  const exit = Schema.decodeUnknownExit(schema, { onExcessProperty: "error", errors: "all" })(input)
  if (exit._tag === "Success") return { ok: true, value: exit.value }
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (failure === undefined) return { ok: false, problems: [at(0, "", "could not be decoded")] }
  const root = (document?.contents ?? null) as Node | null
  const issue = (failure.error as Schema.SchemaError).issue
  const problems = fieldIssues(issue, (path, atKey) => locate(root, path, atKey)).map(({ path, found, message }) =>
    at(found.offset, pathText(path), message)
  )
  const partial = options.partial === true ? decodeWhatDecodes(schema, input, issue) : undefined
  return partial === undefined ? { ok: false, problems } : { ok: false, problems, partial }
}

/**
 * Decoded documents kept across loads, by schema and text: a reload decodes
 * only the documents that changed (a deployment with 800 API-created
 * resources parsed all 800 on every create before). `sweep()` after a load
 * forgets the documents that load did not see.
 */
export class DecodeCache {
  readonly #bySchema = new Map<object, Map<string, { result: YamlDecoded<unknown>; load: number }>>()
  #load = 0

  decode<S extends Schema.ConstraintDecoder<unknown>>(
    schema: S,
    file: string,
    text: string,
    options: YamlDecodeOptions = {}
  ): YamlDecoded<S["Type"]> {
    let entries = this.#bySchema.get(schema)
    if (entries === undefined) {
      entries = new Map()
      this.#bySchema.set(schema, entries)
    }
    const key = `${file}\u0000${text}`
    const cached = entries.get(key)
    if (cached !== undefined) {
      cached.load = this.#load
      return cached.result as YamlDecoded<S["Type"]>
    }
    const result = decodeYaml(schema, file, text, options)
    entries.set(key, { result, load: this.#load })
    return result
  }

  /** Forgets what the load since the last sweep did not decode. */
  sweep(): void {
    for (const entries of this.#bySchema.values()) {
      for (const [key, entry] of entries) if (entry.load !== this.#load) entries.delete(key)
    }
    this.#load++
  }
}
