/**
 * Identifiers that appear in YAML files, URLs and API bodies: target-group,
 * offer and team ids. Lower-case slugs so they are safe in file names, paths
 * and log lines alike.
 */
import * as Schema from "effect/Schema"

const slug = (what: string) =>
  Schema.String.pipe(
    Schema.check(
      Schema.isPattern(/^[a-z0-9][a-z0-9._-]{0,63}$/, {
        message: `a ${what} is 1-64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit`
      })
    )
  )

export const TargetGroupId = slug("target-group id").pipe(Schema.brand("TargetGroupId"))
export type TargetGroupId = typeof TargetGroupId.Type

export const OfferId = slug("offer id").pipe(Schema.brand("OfferId"))
export type OfferId = typeof OfferId.Type

export const TeamId = slug("team id").pipe(Schema.brand("TeamId"))
export type TeamId = typeof TeamId.Type
