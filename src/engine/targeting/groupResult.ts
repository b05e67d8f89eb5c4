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
  const out: { -readonly [K in keyof ValidationResult]: ValidationResult[K] } = {
    isValid: reasonCode === undefined || reasonCode === "LIKELY_INSTITUTION",
    email,
    targetGroup: group.ref,
    validationDetails: details
  }
  if (matchedDomain !== undefined) out.matchedDomain = matchedDomain
  if (reasonCode !== undefined) {
    out.reasonCode = reasonCode
    out.reason = reason!
  }
  return out
}
