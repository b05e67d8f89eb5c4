/**
 * Decodes target groups and offers given as plain data (library options,
 * YAML, JSON bodies) with their schemas. Unknown keys are errors, so a typo
 * never passes silently; every problem names its path.
 */
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { ConfigurationProblem } from "./errors.ts"
import { Offer } from "./Offer.ts"
import { TargetGroup } from "./TargetGroup.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (prefix: string, path: ReadonlyArray<PropertyKey> | undefined): string =>
  (path ?? []).reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : `${text}.${String(key)}`),
    prefix
  )

/** How a schema failure becomes problems; config loading words them for people (`config/schemaProblems.ts`). */
export type IssueProblems = (prefix: string, error: Schema.SchemaError, input: unknown) => Array<ConfigurationProblem>

/** Turns a schema failure into problems with `prefix.field[0].sub` paths, in the schema library's words. */
export const issueProblems: IssueProblems = (prefix, error) =>
  formatter(error.issue).issues.map((issue) => ({
    path: pathText(prefix, issue.path as ReadonlyArray<PropertyKey> | undefined),
    message: issue.message
  }))

const decodeTargetGroup = Schema.decodeUnknownExit(TargetGroup, { onExcessProperty: "error", errors: "all" })
const decodeOffer = Schema.decodeUnknownExit(Offer, { onExcessProperty: "error", errors: "all" })

const decodeAll = <A>(
  inputs: ReadonlyArray<unknown>,
  prefix: string,
  decode: (input: unknown) => import("effect/Exit").Exit<A, Schema.SchemaError>,
  problems: Array<ConfigurationProblem>,
  explain: IssueProblems
): Array<A> =>
  inputs.flatMap((input, i) => {
    const exit = decode(input)
    if (exit._tag === "Success") return [exit.value]
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure !== undefined) problems.push(...explain(`${prefix}[${i}]`, failure.error, input))
    else problems.push({ path: `${prefix}[${i}]`, message: "could not be decoded" })
    return []
  })

export const decodeTargetGroups = (
  inputs: ReadonlyArray<unknown>,
  problems: Array<ConfigurationProblem>,
  explain: IssueProblems = issueProblems
) => decodeAll(inputs, "targetGroups", decodeTargetGroup, problems, explain)

export const decodeOffers = (
  inputs: ReadonlyArray<unknown>,
  problems: Array<ConfigurationProblem>,
  explain: IssueProblems = issueProblems
) => decodeAll(inputs, "offers", decodeOffer, problems, explain)
