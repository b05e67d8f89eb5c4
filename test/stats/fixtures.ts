/** Offer validation results as the engine shapes them, without compiling an offer. */
import type { ReasonCode } from "../../src/domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../src/domain/ValidationResult.ts"
import { parseEmail } from "../../src/engine/email/parseEmail.ts"

const skipped = { status: "skipped" } as const

const groupResult = (email: string, groupId: string, isValid: boolean): ValidationResult => {
  const parsed = parseEmail(email)
  return {
    isValid,
    email,
    targetGroup: { id: groupId, name: groupId },
    validationDetails: {
      format: parsed.ok ? { status: "passed", normalized: parsed.email.address } : { status: "failed" },
      domain: skipped,
      geography: skipped,
      organizationType: skipped,
      customList: skipped,
      emailPolicy: skipped
    }
  }
}

/** An eligible result matching `groups`, or an ineligible one with `reasonCode` (against group "g"). */
export const offerResult = (
  email: string,
  verdict: { readonly matched: ReadonlyArray<string> } | { readonly reasonCode: ReasonCode }
): OfferValidationResult => {
  const offer = { id: "o", name: "O", status: "active" as const }
  if ("matched" in verdict) {
    return {
      isValid: true,
      email,
      offer,
      matchedTargetGroups: verdict.matched,
      results: verdict.matched.map((id) => groupResult(email, id, true))
    }
  }
  const notActive = verdict.reasonCode === "OFFER_NOT_ACTIVE"
  return {
    isValid: false,
    email,
    offer,
    matchedTargetGroups: [],
    results: notActive ? [] : [groupResult(email, "g", false)],
    reasonCode: verdict.reasonCode
  }
}

export const eligible = (email: string, ...matched: Array<string>) =>
  offerResult(email, { matched: matched.length > 0 ? matched : ["g"] })
export const ineligible = (email: string, reasonCode: ReasonCode) => offerResult(email, { reasonCode })

/** 2024-05-01T12:00:00Z */
export const MAY_1 = Date.UTC(2024, 4, 1, 12)
export const DAY = 86_400_000
