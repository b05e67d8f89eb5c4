/**
 * Why a change to an API-managed resource was refused, as one tagged error
 * with its reasons inside; the server's error table (`server/problemOf.ts`)
 * is the one place a reason becomes its HTTP status and problem. Messages
 * are written for the person who sent the change.
 */
import * as Schema from "effect/Schema"
import { FieldError } from "../domain/errors.ts"

/** The resource does not pass the checks the config loader would apply (field-level errors). */
export class InvalidResource extends Schema.TaggedError<InvalidResource>()("InvalidResource", {
  detail: Schema.String,
  errors: Schema.Array(FieldError)
}) {}

/** There is no such resource the caller's team can see. */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", {
  kind: Schema.Literals(["target group", "offer"]),
  id: Schema.String
}) {
  override get message(): string {
    return `There is no ${this.kind} "${this.id}".`
  }
}

/** The change conflicts with what exists: a taken id, a config-defined resource, a refused transition. */
export class ResourceConflict extends Schema.TaggedError<ResourceConflict>()("ResourceConflict", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/**
 * The caller named the version it read (`If-Match`) and the resource has
 * changed since: someone else wrote it first. Nothing was changed.
 */
export class StaleVersion extends Schema.TaggedError<StaleVersion>()("StaleVersion", {
  kind: Schema.Literals(["target group", "offer"]),
  id: Schema.String,
  current: Schema.String
}) {
  override get message(): string {
    return `The ${this.kind} "${this.id}" has changed since it was read (its version is now ${this.current}); read it again and apply the change to what it is now.`
  }
}

/** The stored change did not load (another broken file, a failing disk); it was rolled back. */
export class ChangeNotApplied extends Schema.TaggedError<ChangeNotApplied>()("ChangeNotApplied", {
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `The change could not be applied, so nothing was changed: ${this.problems.join("; ")}`
  }
}

/** The resource store cannot be written now; nothing was changed. */
export class ResourceStoreUnavailable extends Schema.TaggedError<ResourceStoreUnavailable>()(
  "ResourceStoreUnavailable",
  { detail: Schema.String }
) {}

export class ResourcesError extends Schema.TaggedError<ResourcesError>()("ResourcesError", {
  reason: Schema.Union([
    InvalidResource,
    ResourceNotFound,
    ResourceConflict,
    StaleVersion,
    ChangeNotApplied,
    ResourceStoreUnavailable
  ])
}) {
  override get message(): string {
    return this.reason.message
  }
}
