/**
 * A target group's validation result, as every judgement of the per-email
 * path ends: valid unless a reason code says otherwise; the one code a
 * valid result carries says how it was accepted (`LIKELY_INSTITUTION`).
 */
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { ValidationDetails, ValidationResult } from "../../domain/ValidationResult.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"

export type Details = { -readonly [K in keyof ValidationDetails]: ValidationDetails[K] }

export const groupResult = (
  group: CompiledTargetGroup,
  email: string,
  details: Details,
  matchedDomain: string | undefined,
  reasonCode?: ReasonCode,
  reason?: string
): ValidationResult => {
  const isValid = reasonCode === undefined || reasonCode === "LIKELY_INSTITUTION"
  const targetGroup = group.ref
  // One literal per shape, the keys in the answer's order: a property added to a literal after it is made
  // goes to a property array allocated beside it, per result.
  if (reasonCode === undefined) {
    return matchedDomain === undefined
      ? { isValid, email, targetGroup, validationDetails: details }
      : { isValid, email, targetGroup, validationDetails: details, matchedDomain }
  }
  return matchedDomain === undefined
    ? { isValid, email, targetGroup, validationDetails: details, reasonCode, reason: reason! }
    : { isValid, email, targetGroup, validationDetails: details, matchedDomain, reasonCode, reason: reason! }
}
