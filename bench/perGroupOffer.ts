/**
 * The per-group composition of an offer's answer, kept as the reference the
 * engine's `evaluateOffer` is measured against (`npm run bench:offers`) and
 * property-tested equal to (test/engine/targeting/evaluateOffer.test.ts):
 * every target group evaluated on its own (`evaluateTargetGroup`: parse the
 * email, look up its host, judge), the results combined as the engine does.
 * Not in src: the engine answers an offer without repeating the parse and
 * the lookup per group.
 */

import { effectiveStatus } from "../src/domain/Offer.ts"
import type { OfferValidationResult } from "../src/domain/ValidationResult.ts"
import type { EngineContext } from "../src/engine/targeting/EngineContext.ts"
import { type CompiledOffer, notActive, offerVerdict } from "../src/engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../src/engine/targeting/evaluateTargetGroup.ts"

export const perGroupOffer = (
  compiled: CompiledOffer,
  context: EngineContext,
  input: string,
  now: number
): OfferValidationResult => {
  const status = effectiveStatus(compiled.offer, now)
  if (status !== "active") return notActive(compiled.offer, status, input)
  return offerVerdict(
    compiled.offer,
    input,
    compiled.groups.map((group) => evaluateTargetGroup(group, context, input))
  )
}
