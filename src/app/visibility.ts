/**
 * Looking resources up through the team rule (`domain/visibility.ts`): what
 * a viewer may see of a snapshot's engine. Unknown and hidden are the same
 * answer, undefined.
 */
import type { Offer } from "../domain/Offer.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import { offerVisible, targetGroupVisible, type Viewer } from "../domain/visibility.ts"
import type { Engine } from "../engine/Engine.ts"
import type { CompiledTargetGroup } from "../engine/targeting/compileTargetGroup.ts"
import type { CompiledOffer } from "../engine/targeting/evaluateOffer.ts"

/** The compiled target group `id` if the viewer may see it; undefined for unknown and hidden alike. */
export const visibleTargetGroup = (engine: Engine, viewer: Viewer, id: string): CompiledTargetGroup | undefined => {
  const group = engine.targetGroups.get(id)
  return group !== undefined && targetGroupVisible(group.targetGroup, viewer) ? group : undefined
}

/** The compiled offer `id` if the viewer may see it; undefined for unknown and hidden alike. */
export const visibleOffer = (engine: Engine, viewer: Viewer, id: string): CompiledOffer | undefined => {
  const offer = engine.offers.get(id)
  return offer !== undefined && offerVisible(offer.offer, viewer) ? offer : undefined
}

/** The target groups the viewer may see, in the engine's order. */
export const visibleTargetGroups = (engine: Engine, viewer: Viewer): Array<TargetGroup> => {
  const groups: Array<TargetGroup> = []
  for (const { targetGroup } of engine.targetGroups.values()) {
    if (targetGroupVisible(targetGroup, viewer)) groups.push(targetGroup)
  }
  return groups
}

/** The offers the viewer may see, in the engine's order. */
export const visibleOffers = (engine: Engine, viewer: Viewer): Array<Offer> => {
  const offers: Array<Offer> = []
  for (const { offer } of engine.offers.values()) if (offerVisible(offer, viewer)) offers.push(offer)
  return offers
}
