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

/** Turns a schema failure into problems with `prefix.field[0].sub` paths. */
export const issueProblems = (prefix: string, error: Schema.SchemaError): Array<ConfigurationProblem> =>
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
  problems: Array<ConfigurationProblem>
): Array<A> =>
  inputs.flatMap((input, i) => {
    const exit = decode(input)
    if (exit._tag === "Success") return [exit.value]
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure !== undefined) problems.push(...issueProblems(`${prefix}[${i}]`, failure.error))
    else problems.push({ path: `${prefix}[${i}]`, message: "could not be decoded" })
    return []
  })

export const decodeTargetGroups = (inputs: ReadonlyArray<unknown>, problems: Array<ConfigurationProblem>) =>
  decodeAll(inputs, "targetGroups", decodeTargetGroup, problems)

export const decodeOffers = (inputs: ReadonlyArray<unknown>, problems: Array<ConfigurationProblem>) =>
  decodeAll(inputs, "offers", decodeOffer, problems)
