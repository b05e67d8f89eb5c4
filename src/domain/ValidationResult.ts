/**
 * The validation result of the service spec (§2), with DESIGN.md's inner
 * structure: one `validationDetails` entry per criterion type, each with a
 * status and the facts behind it, so a result explains itself without logs.
 * A successful and a failed result have the same shape.
 */
import * as Schema from "effect/Schema"
import {
  DataSource,
  Evidence,
  FactEvidence,
  HostRole,
  InstitutionFlag,
  InstitutionType,
  MatchRule
} from "./Institution.ts"
import { Candidate } from "./InstitutionReview.ts"
import { NonInstitutionKind } from "./NonInstitution.ts"
import { EffectiveOfferStatus } from "./Offer.ts"
import { ReasonCode } from "./ReasonCode.ts"

export const CheckStatus = Schema.Literals(["passed", "failed", "skipped"])
export type CheckStatus = typeof CheckStatus.Type

const Status = { status: CheckStatus }

export const FormatDetail = Schema.Struct({
  ...Status,
  /** Sub-reason of INVALID_EMAIL_FORMAT, e.g. LOCAL_PART_TOO_LONG. */
  code: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  /** The address as the engine understood it: NFC local part, ASCII lower-case domain. */
  normalized: Schema.optionalKey(Schema.String)
})
export type FormatDetail = typeof FormatDetail.Type

/** Who an institution is and where, as every answer naming one begins (null: not known). */
export const institutionIdentityFields = {
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String)
}

export const InstitutionSummary = Schema.Struct({
  ...institutionIdentityFields,
  type: InstitutionType,
  flags: Schema.Array(InstitutionFlag),
  sources: Schema.Array(DataSource),
  /** Where each fact comes from: source, rule, confidence. */
  evidence: FactEvidence
})
export type InstitutionSummary = typeof InstitutionSummary.Type

/** An organisation that is not an educational institution, found where a host matched. */
export const NonInstitutionSummary = Schema.Struct({
  kind: NonInstitutionKind,
  name: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  source: DataSource,
  /** How it was recognised: `curated` (the project's list) or `ror` (the registry's type and names). */
  rule: Schema.String
})
export type NonInstitutionSummary = typeof NonInstitutionSummary.Type

export const DomainDetail = Schema.Struct({
  ...Status,
  domain: Schema.optionalKey(Schema.String),
  matchedDomain: Schema.optionalKey(Schema.String),
  rule: Schema.optionalKey(Schema.Union([MatchRule, Schema.Literals(["stoplist", "non-institution"])])),
  institution: Schema.optionalKey(InstitutionSummary),
  /** Whom the host serves: from its labels (`stu.`, `staff.`, `alumni.`), else `mixed`. */
  role: Schema.optionalKey(HostRole),
  roleEvidence: Schema.optionalKey(Evidence),
  /** The roles the target group accepts, when it names them. */
  allowedRoles: Schema.optionalKey(Schema.Array(HostRole)),
  /** The organisation the host belongs to when it is not an educational institution. */
  organization: Schema.optionalKey(NonInstitutionSummary),
  /** A likely intended domain when this one is unknown (`mit.ed` → `mit.edu`). */
  suggestion: Schema.optionalKey(Schema.String),
  /** For a domain no source lists: how likely it is an institution, and why. */
  candidate: Schema.optionalKey(Candidate)
})
export type DomainDetail = typeof DomainDetail.Type

export const GeographyDetail = Schema.Struct({
  ...Status,
  country: Schema.optionalKey(Schema.NullOr(Schema.String)),
  countrySource: Schema.optionalKey(Schema.NullOr(Schema.String)),
  region: Schema.optionalKey(Schema.NullOr(Schema.String)),
  allowedCountries: Schema.optionalKey(Schema.Array(Schema.String)),
  allowedRegions: Schema.optionalKey(Schema.Array(Schema.String))
})
export type GeographyDetail = typeof GeographyDetail.Type

export const OrganizationTypeDetail = Schema.Struct({
  ...Status,
  type: Schema.optionalKey(InstitutionType),
  allowedTypes: Schema.optionalKey(Schema.Array(InstitutionType))
})
export type OrganizationTypeDetail = typeof OrganizationTypeDetail.Type

export const CustomListDetail = Schema.Struct({
  ...Status,
  /** Which list decided: the domain allow/deny list or an allow/deny pattern. */
  list: Schema.optionalKey(Schema.Literals(["domains.allow", "domains.deny", "patterns.allow", "patterns.deny"])),
  entry: Schema.optionalKey(Schema.String)
})
export type CustomListDetail = typeof CustomListDetail.Type

export const EmailPolicyFlags = Schema.Struct({
  disposable: Schema.Boolean,
  freeMail: Schema.Boolean,
  roleAccount: Schema.Boolean,
  confusable: Schema.Boolean,
  abused: Schema.Boolean
})
export type EmailPolicyFlags = typeof EmailPolicyFlags.Type

export const EmailPolicyDetail = Schema.Struct({
  ...Status,
  flags: Schema.optionalKey(EmailPolicyFlags),
  /** For a confusable IDN: the ASCII domain it imitates. */
  imitates: Schema.optionalKey(Schema.String)
})
export type EmailPolicyDetail = typeof EmailPolicyDetail.Type

export const ValidationDetails = Schema.Struct({
  format: FormatDetail,
  domain: DomainDetail,
  geography: GeographyDetail,
  organizationType: OrganizationTypeDetail,
  customList: CustomListDetail,
  emailPolicy: EmailPolicyDetail
})
export type ValidationDetails = typeof ValidationDetails.Type

export const TargetGroupRef = Schema.Struct({ id: Schema.String, name: Schema.String })

export const ValidationResult = Schema.Struct({
  isValid: Schema.Boolean,
  email: Schema.String,
  targetGroup: TargetGroupRef,
  matchedDomain: Schema.optionalKey(Schema.String),
  validationDetails: ValidationDetails,
  reason: Schema.optionalKey(Schema.String),
  reasonCode: Schema.optionalKey(ReasonCode)
})
export type ValidationResult = typeof ValidationResult.Type

export const OfferRef = Schema.Struct({ id: Schema.String, name: Schema.String, status: EffectiveOfferStatus })

export const OfferValidationResult = Schema.Struct({
  isValid: Schema.Boolean,
  email: Schema.String,
  offer: OfferRef,
  matchedTargetGroups: Schema.Array(Schema.String),
  results: Schema.Array(ValidationResult),
  reason: Schema.optionalKey(Schema.String),
  reasonCode: Schema.optionalKey(ReasonCode)
})
export type OfferValidationResult = typeof OfferValidationResult.Type
