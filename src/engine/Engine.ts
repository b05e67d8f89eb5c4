/**
 * One immutable snapshot of everything a validation needs: the institution
 * table, the email lists and the compiled target groups and offers. Building
 * it checks the cross-references (unique ids, an offer's target groups exist
 * and are visible to its team); a new configuration is a new snapshot, so
 * in-flight validations finish on the one they started with.
 */
import {
  type ConfigurationProblem,
  InvalidConfiguration,
  OfferNotFound,
  TargetGroupNotFound
} from "../domain/errors.ts"
import type { Offer } from "../domain/Offer.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { targetGroupVisible } from "../domain/visibility.ts"
import { type CompiledTargetGroup, compileTargetGroup } from "./targeting/compileTargetGroup.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"
import { type CompiledOffer, evaluateOffer } from "./targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "./targeting/evaluateTargetGroup.ts"

export interface EngineInput {
  readonly context: EngineContext
  readonly targetGroups: ReadonlyArray<TargetGroup>
  readonly offers?: ReadonlyArray<Offer> | undefined
  /** The clock for offer windows; `Date.now` unless a test sets it. */
  readonly now?: (() => number) | undefined
  /** Compiles a target group (default `compileTargetGroup`); a builder passes one that reuses unchanged groups. */
  readonly compile?: ((group: TargetGroup) => CompiledTargetGroup) | undefined
}

export class Engine {
  readonly context: EngineContext
  readonly targetGroups: ReadonlyMap<string, CompiledTargetGroup>
  readonly offers: ReadonlyMap<string, CompiledOffer>
  /** The clock for offer windows. */
  readonly now: () => number

  private constructor(
    input: EngineInput,
    groups: Map<string, CompiledTargetGroup>,
    offers: Map<string, CompiledOffer>
  ) {
    this.context = input.context
    this.targetGroups = groups
    this.offers = offers
    this.now = input.now ?? Date.now
  }

  /** Compiles target groups and offers, or throws `InvalidConfiguration` listing every problem. */
  static make(input: EngineInput): Engine {
    const problems: Array<ConfigurationProblem> = []
    const groups = new Map<string, CompiledTargetGroup>()
    const compile = input.compile ?? compileTargetGroup
    input.targetGroups.forEach((group, i) => {
      if (groups.has(group.id)) problems.push({ path: `targetGroups[${i}].id`, message: `duplicate id "${group.id}"` })
      else groups.set(group.id, compile(group))
    })
    const offers = new Map<string, CompiledOffer>()
    ;(input.offers ?? []).forEach((offer, i) => {
      if (offers.has(offer.id)) problems.push({ path: `offers[${i}].id`, message: `duplicate id "${offer.id}"` })
      const compiled: Array<CompiledTargetGroup> = []
      offer.targetGroups.forEach((id, j) => {
        const group = groups.get(id)
        if (group === undefined || !targetGroupVisible(group.targetGroup, offer.team)) {
          problems.push({
            path: `offers[${i}].targetGroups[${j}]`,
            message:
              group === undefined
                ? `there is no target group "${id}"`
                : `target group "${id}" belongs to team "${group.targetGroup.team}", not "${offer.team}"`
          })
        } else compiled.push(group)
      })
      offers.set(offer.id, { offer, groups: compiled })
    })
    if (problems.length > 0) throw new InvalidConfiguration({ problems })
    return new Engine(input, groups, offers)
  }

  /** Validates one email against a target group; throws `TargetGroupNotFound` for an unknown id. */
  validate(email: string, targetGroupId: string): ValidationResult {
    const group = this.targetGroups.get(targetGroupId)
    if (group === undefined) throw new TargetGroupNotFound({ targetGroupId })
    return evaluateTargetGroup(group, this.context, email)
  }

  /** Validates emails in input order against a target group; throws `TargetGroupNotFound` for an unknown id. */
  validateMany(emails: ReadonlyArray<string>, targetGroupId: string): Array<ValidationResult> {
    const group = this.targetGroups.get(targetGroupId)
    if (group === undefined) throw new TargetGroupNotFound({ targetGroupId })
    const results = new Array<ValidationResult>(emails.length)
    for (let i = 0; i < emails.length; i++) results[i] = evaluateTargetGroup(group, this.context, emails[i]!)
    return results
  }

  /** Validates emails in input order against an offer; throws `OfferNotFound` for an unknown id. */
  validateManyOffer(emails: ReadonlyArray<string>, offerId: string): Array<OfferValidationResult> {
    const offer = this.offers.get(offerId)
    if (offer === undefined) throw new OfferNotFound({ offerId })
    const now = this.now()
    return emails.map((email) => evaluateOffer(offer, this.context, email, now))
  }

  /**
   * Validates one email against an offer at `now` (default: the engine's clock); throws `OfferNotFound`
   * for an unknown id. A caller that also records the validation passes the instant it read once.
   */
  validateOffer(email: string, offerId: string, now: number = this.now()): OfferValidationResult {
    const offer = this.offers.get(offerId)
    if (offer === undefined) throw new OfferNotFound({ offerId })
    return evaluateOffer(offer, this.context, email, now)
  }
}
