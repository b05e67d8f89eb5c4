/**
 * YAML text → a schema's type, or problems that point into the file: every
 * problem names the file, the 1-based line and column, the field path and
 * what was expected. Syntax errors, duplicate keys, more than one document,
 * unknown keys (typos must not pass silently) and schema failures are all
 * reported, never thrown.
 */
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { isMap, isScalar, isSeq, LineCounter, type Node, parseAllDocuments } from "yaml"
import type { ConfigurationProblem } from "../domain/errors.ts"

export type YamlDecoded<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly problems: ReadonlyArray<ConfigurationProblem> }

export interface YamlDecodeOptions {
  /** What an empty file stands for; absent: an empty file is a problem. */
  readonly empty?: unknown
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`),
    ""
  )

interface Located {
  readonly offset: number
  /** The node was found all the way down the path (otherwise `offset` is the nearest ancestor's). */
  readonly exact: boolean
  /** The scalar found there, for "got ..." in messages. */
  readonly scalar?: unknown
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

/** Plainer words for the schema library's generic messages. */
const explain = (message: string, path: ReadonlyArray<PropertyKey>, found: Located): string => {
  const field = path.at(-1)
  if (message === "Expected no excess property") return `unknown key "${String(field)}"`
  if (message === "Missing key" || (!found.exact && /^Expected/.test(message))) {
    return `missing required key "${String(field)}"`
  }
  if ("scalar" in found && /^Expected [a-z]+$/.test(message)) return `${message}, got ${JSON.stringify(found.scalar)}`
  return message
}

/**
 * The 1-based line and column of the value at `path` in YAML `text` (or of
 * the nearest ancestor present), for problems found after decoding, such as
 * a dangling reference.
 */
export const positionOf = (text: string, path: ReadonlyArray<PropertyKey>): { line: number; column: number } => {
  const lineCounter = new LineCounter()
  const documents = parseAllDocuments(text, { lineCounter })
  const root = Array.isArray(documents) ? ((documents[0]?.contents ?? null) as Node | null) : null
  const { line, col } = lineCounter.linePos(locate(root, path, false).offset)
  return { line, column: col }
}

/** A top-level string field of a YAML mapping, read without decoding (e.g. the `id` of a file that failed to decode). */
export const rawStringField = (text: string, key: string): string | undefined => {
  const documents = parseAllDocuments(text)
  const contents = Array.isArray(documents) ? documents[0]?.contents : undefined
  if (!isMap(contents)) return undefined
  const value = contents.get(key)
  return typeof value === "string" ? value : undefined
}

/** Decodes the YAML `text` of `file` (the name problems should show) with `schema`. */
export const decodeYaml = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  file: string,
  text: string,
  options: YamlDecodeOptions = {}
): YamlDecoded<S["Type"]> => {
  const lineCounter = new LineCounter()
  const documents = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: true })
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
      problems: syntax.map((error) => {
        const position = error.linePos?.[0]
        const message = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")
        return { file, line: position?.line ?? 1, column: position?.col ?? 1, path: "", message }
      })
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
      return { ok: false, problems: [at(0, "", (error as Error).message)] }
    }
  }
  const exit = Schema.decodeUnknownExit(schema, { onExcessProperty: "error", errors: "all" })(input)
  if (exit._tag === "Success") return { ok: true, value: exit.value }
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (failure === undefined) return { ok: false, problems: [at(0, "", "could not be decoded")] }
  const root = (document?.contents ?? null) as Node | null
  const problems = formatter((failure.error as Schema.SchemaError).issue).issues.map((issue) => {
    const path = (issue.path ?? []) as ReadonlyArray<PropertyKey>
    const atKey = issue.message === "Expected no excess property"
    const found = locate(root, path, atKey)
    return at(found.offset, pathText(path), explain(issue.message, path, found))
  })
  return { ok: false, problems }
}
