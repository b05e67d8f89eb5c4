/**
 * A target group: who an offer is for. Criteria by type (DESIGN.md, "Model"):
 * academic institutions filtered by type, country and region; custom domain
 * allow/deny lists; allow/deny host globs; and an email policy. An email is
 * valid when its format is valid, no deny rule is the most specific match and
 * at least one allow source matches with all of its filters passing.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CountryCode } from "./Country.ts"
import { TargetGroupId, TeamId } from "./Identifiers.ts"
import { Confidence, HostRole, InstitutionType } from "./Institution.ts"
import { RegionCode } from "./Region.ts"

/** A host name in its ASCII form: lower-case LDH labels separated by dots. */
export const DomainName = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/, {
      message:
        "a domain is lower-case ASCII labels separated by dots, e.g. example.ac.uk (write internationalised domains in their xn-- form)"
    })
  )
)

/**
 * A host glob: dot-separated labels where `*` stands for any characters
 * inside one label; a leading `*.` stands for one or more labels
 * (`*.ac.uk` matches `ox.ac.uk` and `cs.ox.ac.uk`). No regular expressions.
 */
export const HostPattern = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^(?=.{1,253}$)[a-z0-9*]([a-z0-9*-]{0,62})?(\.[a-z0-9*]([a-z0-9*-]{0,62})?)+$/, {
      message:
        'a pattern is lower-case host labels separated by dots, where "*" matches any characters within a label and a leading "*." any number of labels, e.g. *.ac.uk or students.*.edu'
    })
  )
)

export const InstitutionCriteria = Schema.Struct({
  types: Schema.optionalKey(Schema.Array(InstitutionType)),
  countries: Schema.optionalKey(Schema.Array(CountryCode)),
  regions: Schema.optionalKey(Schema.Array(RegionCode)),
  /**
   * Whom the host must serve: `student`, `staff`, `alumni`, or `mixed`. A
   * `mixed` host (no label saying whom, e.g. `mit.edu`) passes when
   * `student` or `staff` is listed. Absent: students and staff, not alumni.
   */
  roles: Schema.optionalKey(Schema.Array(HostRole)),
  /** Accept hosts matched only by an academic suffix rule (`*.edu`, `*.ac.XX`) with no listed institution. */
  includeSuffixRules: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(true))),
  /**
   * The least confidence a fact the criteria judge (type, country, region)
   * must have to count; a fact below it counts as unknown. Absent: `low`,
   * every fact counts, an inferred type too.
   */
  minConfidence: Schema.optionalKey(Confidence),
  /**
   * Accept a domain no source lists when its candidate score (0..1) is at
   * least `minScore`: answered valid with `LIKELY_INSTITUTION` and low
   * confidence. Absent: such a domain is refused as `UNKNOWN_INSTITUTION`.
   */
  acceptCandidates: Schema.optionalKey(
    Schema.Struct({
      minScore: Schema.Finite.pipe(
        Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 }, { message: "minScore is a number from 0 to 1" }))
      )
    })
  )
})
export type InstitutionCriteria = typeof InstitutionCriteria.Type

export const DomainCriteria = Schema.Struct({
  allow: Schema.Array(DomainName).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  deny: Schema.Array(DomainName).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
})
export type DomainCriteria = typeof DomainCriteria.Type

export const PatternCriteria = Schema.Struct({
  allow: Schema.Array(HostPattern).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  deny: Schema.Array(HostPattern).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
})
export type PatternCriteria = typeof PatternCriteria.Type

const flag = (value: boolean) => Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

export const EmailPolicy = Schema.Struct({
  rejectDisposable: flag(true),
  rejectRoleAccounts: flag(false),
  rejectFreeMail: flag(false),
  rejectAbused: flag(true),
  rejectConfusable: flag(true),
  allowQuotedLocalPart: flag(false),
  allowIpLiteral: flag(false),
  allowSpecialUseDomains: flag(false)
})
export type EmailPolicy = typeof EmailPolicy.Type

export const TargetGroupCriteria = Schema.Struct({
  institutions: Schema.optionalKey(InstitutionCriteria),
  domains: Schema.optionalKey(DomainCriteria),
  patterns: Schema.optionalKey(PatternCriteria),
  email: EmailPolicy.pipe(Schema.withDecodingDefaultKey(Effect.succeed({})))
})
export type TargetGroupCriteria = typeof TargetGroupCriteria.Type

export const TargetGroupExamples = Schema.Struct({
  valid: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  invalid: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
})

export const TargetGroup = Schema.Struct({
  id: TargetGroupId,
  name: Schema.NonEmptyString,
  description: Schema.optionalKey(Schema.String),
  /** Absent: shared with every team. */
  team: Schema.optionalKey(TeamId),
  criteria: TargetGroupCriteria,
  examples: Schema.optionalKey(TargetGroupExamples)
})
export type TargetGroup = typeof TargetGroup.Type
export type TargetGroupInput = typeof TargetGroup.Encoded
