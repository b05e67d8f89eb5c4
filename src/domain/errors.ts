/**
 * Errors the library reports to its callers. Each is a tagged, schema-backed
 * class so transports can map it to a response without inspecting text.
 */
import { Schema } from "effect"

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

/** One problem in a set of target groups, offers or datasets: where, and what is wrong. */
export const ConfigurationProblem = Schema.Struct({
  /** e.g. `offers[2].targetGroups[0]` or `datasets/partners.csv:12`. */
  path: Schema.String,
  message: Schema.String
})
export type ConfigurationProblem = typeof ConfigurationProblem.Type

export class InvalidConfiguration extends Schema.TaggedError<InvalidConfiguration>()("InvalidConfiguration", {
  problems: Schema.Array(ConfigurationProblem)
}) {
  override get message(): string {
    return `Invalid configuration: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}
