/**
 * The per-group composition of an offer's answer, as the engine computed it
 * before issue 16: every target group evaluated on its own
 * (`evaluateTargetGroup`: parse the email, look up its host, judge), the
 * results combined by a join of their distinct reasons. Kept as the reference the
 * engine's `evaluateOffer` is measured against (`npm run bench:offers`) and
 * property-tested equal to (test/engine/targeting/evaluateOffer.test.ts);
 * not in src, where an offer parses and looks up once for all its groups.
 */
import { effectiveStatus } from "../src/domain/Offer.ts"
import type { ReasonCode } from "../src/domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../src/domain/ValidationResult.ts"
import type { EngineContext } from "../src/engine/targeting/EngineContext.ts"
import type { CompiledOffer } from "../src/engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../src/engine/targeting/evaluateTargetGroup.ts"

export const perGroupOffer = (
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
      : `No target group of the offer matched: ${byReason(results)}`
  return { isValid: false, email: input, offer: ref, matchedTargetGroups: [], results, reasonCode, reason }
}

/** Each distinct reason once, in order of first appearance, after the ids of the groups that gave it. */
const byReason = (results: ReadonlyArray<ValidationResult>): string => {
  const groups = new Map<string | undefined, Set<string>>()
  for (const r of results) {
    const ids = groups.get(r.reason) ?? new Set()
    ids.add(r.targetGroup.id)
    groups.set(r.reason, ids)
  }
  return [...groups].map(([reason, ids]) => `${[...ids].join(", ")}: ${reason}`).join(" ")
}
