/**
 * Errors the library reports to its callers. Each is a tagged, schema-backed
 * class so transports can map it to a response without inspecting text.
 */
import * as Schema from "effect/Schema"
import { formatProblem } from "./problemText.ts"

export { formatProblem } from "./problemText.ts"

export class TargetGroupNotFound extends Schema.TaggedError<TargetGroupNotFound>()("TargetGroupNotFound", {
  targetGroupId: Schema.String
}) {
  override get message(): string {
    return `There is no target group "${this.targetGroupId}".`
  }
}

export class OfferNotFound extends Schema.TaggedError<OfferNotFound>()("OfferNotFound", {
  offerId: Schema.String
}) {
  override get message(): string {
    return `There is no offer "${this.offerId}".`
  }
}

/** One field-level problem of an input: a JSON-pointer-style path, a stable code, a plain message. */
export const FieldError = Schema.Struct({
  field: Schema.String,
  code: Schema.String,
  message: Schema.String
})
export type FieldError = typeof FieldError.Type

/** One problem in a set of target groups, offers or datasets: where, and what is wrong. */
export const ConfigurationProblem = Schema.Struct({
  /** The file, relative to the config (or data) directory, when the problem is in one. */
  file: Schema.optionalKey(Schema.String),
  /** 1-based line and column in `file`, when known. */
  line: Schema.optionalKey(Schema.Int),
  column: Schema.optionalKey(Schema.Int),
  /** The field: e.g. `offers[2].targetGroups[0]`, or `criteria.countries[1]` within `file`. */
  path: Schema.String,
  message: Schema.String,
  /** The team whose target group, offer or API key the problem is in; absent: a shared target group or the deployment's own files. */
  team: Schema.optionalKey(Schema.String)
})
export type ConfigurationProblem = typeof ConfigurationProblem.Type

export class InvalidConfiguration extends Schema.TaggedError<InvalidConfiguration>()("InvalidConfiguration", {
  problems: Schema.Array(ConfigurationProblem)
}) {
  override get message(): string {
    return `Invalid configuration: ${this.problems.map(formatProblem).join("; ")}`
  }
}
