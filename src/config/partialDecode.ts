/**
 * What a document that failed to decode still says, to check the rest of
 * the configuration against: the value decoded once every part that failed
 * is left out. An unknown key is dropped, a bad value falls back to its
 * default, a broken list item is left out; what cannot be left out (a
 * required key) takes its parent with it, up to the whole document.
 *
 * Used for `campusgate.yaml`: one misspelt key there must not hide the
 * teams it declares, or every file naming a team would be reported too.
 * Never used to serve: a document with problems is still rejected.
 */
import * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"

/** Rounds of leaving parts out before giving up (each round removes at least one part). */
const MAX_ROUNDS = 8

const DROPPED = Symbol("dropped")

/** The paths of the leaves of an issue tree. */
const failingPaths = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Array<Array<PropertyKey>> => {
  switch (issue._tag) {
    case "Pointer":
      return failingPaths(issue.issue, [...path, ...issue.path])
    case "Filter":
    case "Encoding":
      return failingPaths(issue.issue, path)
    case "Composite":
    case "AnyOf":
      return issue.issues.length === 0 ? [[...path]] : issue.issues.flatMap((child) => failingPaths(child, path))
    default:
      return [[...path]]
  }
}

const isContainer = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === "object" && value !== null

/**
 * Marks the value at `path` dropped, or its nearest existing ancestor's when
 * it is absent (a missing required key); false when that is the root.
 */
const drop = (root: unknown, path: ReadonlyArray<PropertyKey>): boolean => {
  let parent: unknown = root
  for (let i = 0; i < path.length - 1; i++) {
    const next: unknown = isContainer(parent) ? parent[path[i]!] : undefined
    if (!isContainer(next)) return drop(root, path.slice(0, i + 1))
    parent = next
  }
  const key = path.at(-1)
  if (key === undefined || !isContainer(parent)) return false
  if (!(key in parent)) return path.length > 1 && drop(root, path.slice(0, -1))
  parent[key] = DROPPED
  return true
}

/** The value without what `drop` marked: list items removed, keys deleted. */
const sweep = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.filter((item) => item !== DROPPED).map(sweep)
  if (!isContainer(value)) return value
  const kept: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (item !== DROPPED) kept[key] = sweep(item)
  return kept
}

/** `input` decoded with `schema` after leaving out what fails (see the module header), or undefined. */
export const decodeWhatDecodes = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  issue: SchemaIssue.Issue
): S["Type"] | undefined => {
  let current: unknown = structuredClone(input)
  let failing = failingPaths(issue)
  for (let round = 0; round < MAX_ROUNDS; round++) {
    for (const path of failing) if (!drop(current, path)) return undefined
    current = sweep(current)
    const exit = Schema.decodeUnknownExit(schema, { onExcessProperty: "error", errors: "all" })(current)
    if (exit._tag === "Success") return exit.value
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure === undefined) return undefined
    failing = failingPaths((failure.error as Schema.SchemaError).issue)
  }
  return undefined
}
