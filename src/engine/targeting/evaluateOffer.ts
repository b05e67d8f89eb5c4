/**
 * One email against an offer: eligible when any of its target groups
 * matches. A non-active offer (draft, scheduled, paused, expired, archived)
 * gives a failed result with `OFFER_NOT_ACTIVE`, not an error.
 */
import { effectiveStatus, type Offer } from "../../domain/Offer.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"
import { evaluateTargetGroup } from "./evaluateTargetGroup.ts"

export interface CompiledOffer {
  readonly offer: Offer
  readonly groups: ReadonlyArray<CompiledTargetGroup>
}

export const evaluateOffer = (
  compiled: CompiledOffer,
  context: EngineContext,
  input: string,
  now: number
): OfferValidationResult => {
  const { offer } = compiled
  const status = effectiveStatus(offer, now)
  const ref = { id: offer.id, name: offer.name, status }
  if (status !== "active") {
    return {
      isValid: false,
      email: input,
      offer: ref,
      matchedTargetGroups: [],
      results: [],
      reasonCode: "OFFER_NOT_ACTIVE",
      reason: `The offer "${offer.name}" is ${status}, not active.`
    }
  }
  const results: Array<ValidationResult> = []
  const matched: Array<string> = []
  for (const group of compiled.groups) {
    const result = evaluateTargetGroup(group, context, input)
    results.push(result)
    if (result.isValid) matched.push(group.ref.id)
  }
  if (matched.length > 0) return { isValid: true, email: input, offer: ref, matchedTargetGroups: matched, results }
  const first = results[0]!
  const sameReason = results.every((r) => r.reasonCode === first.reasonCode)
  const reasonCode: ReasonCode =
    sameReason && first.reasonCode !== undefined ? first.reasonCode : "NO_TARGET_GROUP_MATCHED"
  const reason =
    results.length === 1 || sameReason
      ? (first.reason ?? "No target group matched.")
      : `No target group of the offer matched: ${results.map((r) => `${r.targetGroup.id}: ${r.reason}`).join(" ")}`
  return { isValid: false, email: input, offer: ref, matchedTargetGroups: [], results, reasonCode, reason }
}
