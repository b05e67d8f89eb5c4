/**
 * Stable, machine-readable reasons a validation failed. Clients branch on
 * these; the plain-English `reason` next to them is for people and may change.
 */
import * as Schema from "effect/Schema"

export const ReasonCode = Schema.Literals([
  "INVALID_EMAIL_FORMAT",
  "DISPOSABLE_EMAIL",
  "ROLE_ACCOUNT",
  "FREE_MAIL_PROVIDER",
  "CONFUSABLE_DOMAIN",
  "ABUSED_DOMAIN",
  "DOMAIN_DENIED",
  "INSTITUTION_DENIED",
  "NOT_AN_INSTITUTION",
  "UNKNOWN_INSTITUTION",
  "LIKELY_INSTITUTION",
  "DOMAIN_NOT_ALLOWED",
  "SUFFIX_RULE_NOT_ACCEPTED",
  "ROLE_NOT_ALLOWED",
  "RESEARCH_NETWORK",
  "SECTOR_BODY",
  "GOVERNMENT_BODY",
  "PLATFORM",
  "ORGANIZATION_TYPE_NOT_ALLOWED",
  "COUNTRY_NOT_ALLOWED",
  "REGION_NOT_ALLOWED",
  "OFFER_NOT_ACTIVE",
  "NO_TARGET_GROUP_MATCHED"
])
export type ReasonCode = typeof ReasonCode.Type
