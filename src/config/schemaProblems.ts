/**
 * A schema failure in the words of a config file's author: each issue the
 * schema library reports becomes one message for one field, in plain words,
 * with a "did you mean" wherever the schema knows the possible words:
 *
 * - an unknown key: `unknown key "rejectRoleAcounts" (did you mean
 *   "rejectRoleAccounts"?)`, or the keys that are allowed there when none
 *   is close;
 * - a value outside a fixed set: `expected one of "draft", "active",
 *   "paused", "archived", got "activ" (did you mean "active"?)`.
 *
 * The possible words come from the schema's own description (the keys of
 * the object, the literals of the union), so a new field or status needs
 * nothing here.
 */
import type * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { closestMatch, didYouMean } from "./didYouMean.ts"

/** One field's problem: where (a path into the input, and what is there) and what, in plain words. */
export interface FieldIssue<F extends Found> {
  readonly path: ReadonlyArray<PropertyKey>
  readonly found: F
  readonly message: string
}

/** What the file holds at a problem's path, as far as it could be followed. */
export interface Found {
  /** The whole path exists in the file (otherwise a key on it is missing). */
  readonly exact: boolean
  /** The scalar at the path, when there is one, for "got ..." in messages. */
  readonly scalar?: unknown
}

/** The words the schema allows where an issue is: the keys of an object, or the literals of a union. */
type Allowed =
  | { readonly kind: "keys"; readonly words: ReadonlyArray<string> }
  | { readonly kind: "literals"; readonly words: ReadonlyArray<string> }

const pathKey = (path: ReadonlyArray<PropertyKey>): string => JSON.stringify(path.map(String))

const stringLiterals = (union: SchemaAST.Union): ReadonlyArray<string> | undefined => {
  const words: Array<string> = []
  for (const member of union.types) {
    if (member._tag !== "Literal" || typeof member.literal !== "string") return undefined
    words.push(member.literal)
  }
  return words
}

/** The allowed words at every path where the schema knows them, walking the issue tree as the formatter does. */
const allowedWords = (root: SchemaIssue.Issue): Map<string, Allowed> => {
  const found = new Map<string, Allowed>()
  const visit = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    switch (issue._tag) {
      case "Pointer":
        visit(issue.issue, [...path, ...issue.path])
        return
      case "Filter":
      case "Encoding":
        visit(issue.issue, path)
        return
      case "Composite":
        for (const child of issue.issues) visit(child, path)
        return
      case "AnyOf": {
        for (const child of issue.issues) visit(child, path)
        const words = issue.issues.length === 0 ? stringLiterals(issue.ast) : undefined
        if (words !== undefined) found.set(pathKey(path), { kind: "literals", words })
        return
      }
      case "UnexpectedKey": {
        if (issue.ast._tag !== "Objects") return
        const words = issue.ast.propertySignatures.flatMap((signature) =>
          typeof signature.name === "string" ? [signature.name] : []
        )
        found.set(pathKey(path), { kind: "keys", words })
        return
      }
      default:
        return
    }
  }
  visit(root, [])
  return found
}

const quoted = (words: ReadonlyArray<string>): string => words.map((word) => JSON.stringify(word)).join(", ")

/** Plainer words for the schema library's generic messages, with a suggestion where one is known. */
const explain = (
  message: string,
  path: ReadonlyArray<PropertyKey>,
  found: Found,
  allowed: Allowed | undefined
): string => {
  const field = String(path.at(-1))
  if (message === "Expected no excess property") {
    if (allowed?.kind !== "keys") return `unknown key "${field}"`
    const match = closestMatch(field, allowed.words)
    return match === undefined
      ? `unknown key "${field}" (allowed here: ${allowed.words.join(", ")})`
      : `unknown key "${field}" (did you mean "${match}"?)`
  }
  if (message === "Missing key" || (!found.exact && /^Expected/.test(message))) return `missing required key "${field}"`
  if (allowed?.kind === "literals") {
    const got = "scalar" in found ? `, got ${JSON.stringify(found.scalar)}` : ""
    const hint = typeof found.scalar === "string" ? didYouMean(found.scalar, allowed.words) : ""
    return `expected one of ${quoted(allowed.words)}${got}${hint}`
  }
  if ("scalar" in found && /^Expected [a-z]+$/.test(message)) return `${message}, got ${JSON.stringify(found.scalar)}`
  return message
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Every problem of a failed decoding, one per field. `find` says what the
 * input holds at a path (the YAML decoder looks into the parsed document);
 * `atKey` asks for the key rather than its value (an unknown key).
 */
export const fieldIssues = <F extends Found>(
  issue: SchemaIssue.Issue,
  find: (path: ReadonlyArray<PropertyKey>, atKey: boolean) => F
): Array<FieldIssue<F>> => {
  const allowed = allowedWords(issue)
  return formatter(issue).issues.map(({ path: segments, message }) => {
    const path = (segments ?? []).map((segment) =>
      typeof segment === "object" && segment !== null ? (segment as { key: PropertyKey }).key : segment
    )
    const found = find(path, message === "Expected no excess property")
    return { path, found, message: explain(message, path, found, allowed.get(pathKey(path))) }
  })
}

/** What a plain value (not YAML) holds at `path`. */
const findInValue = (root: unknown, path: ReadonlyArray<PropertyKey>): Found => {
  let value = root
  for (const key of path) {
    if (typeof value !== "object" || value === null || !(key in value)) return { exact: false }
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return typeof value === "object" && value !== null ? { exact: true } : { exact: true, scalar: value }
}

/** `targetGroups[0].criteria.email`: a prefix and a path as problems show them. */
const joined = (prefix: string, path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((text, key) => (typeof key === "number" ? `${text}[${key}]` : `${text}.${String(key)}`), prefix)

/** The problems of a plain value (the library's in-memory resources) that failed `error`'s schema, under `prefix`. */
export const valueProblems = (prefix: string, error: Schema.SchemaError, input: unknown): Array<ConfigurationProblem> =>
  fieldIssues(error.issue, (path) => findInValue(input, path)).map(({ path, message }) => ({
    path: joined(prefix, path),
    message
  }))
