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
import type { ReviewedInstitution } from "../domain/InstitutionReview.ts"
import type { Offer } from "../domain/Offer.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { targetGroupVisible } from "../domain/visibility.ts"
import { type CompiledTargetGroup, compileTargetGroup } from "./targeting/compileTargetGroup.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"
import { type CompiledOffer, evaluateOffer } from "./targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "./targeting/evaluateTargetGroup.ts"
import { reviewedContexts } from "./targeting/ReviewedHosts.ts"

export interface EngineInput {
  readonly context: EngineContext
  readonly targetGroups: ReadonlyArray<TargetGroup>
  readonly offers?: ReadonlyArray<Offer> | undefined
  /** The clock for offer windows; `Date.now` unless a test sets it. */
  readonly now?: (() => number) | undefined
  /** Compiles a target group (default `compileTargetGroup`); a builder passes one that reuses unchanged groups. */
  readonly compile?: ((group: TargetGroup) => CompiledTargetGroup) | undefined
  /** Institutions operators approved, each for its team's targets (`ReviewedHosts.ts`). */
  readonly reviewed?: ReadonlyArray<ReviewedInstitution> | undefined
  /**
   * An engine over the same context and the same approvals: its teams'
   * contexts (with what they learned of hosts) are kept rather than made
   * again — a change of one target group or offer builds nothing else.
   */
  readonly sameContextAs?: Engine | undefined
}

export class Engine {
  /** The shared context: every team's without approvals, and the one `inspect` and look-ups read. */
  readonly context: EngineContext
  /** The context of each team with reviewed institutions. */
  readonly #teamContexts: ReadonlyMap<string, EngineContext>
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
    this.#teamContexts =
      input.sameContextAs !== undefined && input.sameContextAs.context === input.context
        ? input.sameContextAs.#teamContexts
        : input.reviewed === undefined || input.reviewed.length === 0
          ? new Map()
          : reviewedContexts(input.context, input.reviewed)
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

  /**
   * The context a team's validations run in: with the institutions its
   * operators approved where it has any (`team` undefined: the group's own
   * team, or none for a shared group).
   */
  contextFor(team: string | undefined): EngineContext {
    return team === undefined ? this.context : (this.#teamContexts.get(team) ?? this.context)
  }

  /** Validates one email against a target group (for `team`, default the group's); throws `TargetGroupNotFound` for an unknown id. */
  validate(email: string, targetGroupId: string, team?: string): ValidationResult {
    const group = this.targetGroups.get(targetGroupId)
    if (group === undefined) throw new TargetGroupNotFound({ targetGroupId })
    return evaluateTargetGroup(group, this.contextFor(team ?? group.targetGroup.team), email)
  }

  /** Validates emails in input order against a target group; throws `TargetGroupNotFound` for an unknown id. */
  validateMany(emails: ReadonlyArray<string>, targetGroupId: string): Array<ValidationResult> {
    const group = this.targetGroups.get(targetGroupId)
    if (group === undefined) throw new TargetGroupNotFound({ targetGroupId })
    const results = new Array<ValidationResult>(emails.length)
    const context = this.contextFor(group.targetGroup.team)
    for (let i = 0; i < emails.length; i++) results[i] = evaluateTargetGroup(group, context, emails[i]!)
    return results
  }

  /** Validates emails in input order against an offer; throws `OfferNotFound` for an unknown id. */
  validateManyOffer(emails: ReadonlyArray<string>, offerId: string): Array<OfferValidationResult> {
    const offer = this.offers.get(offerId)
    if (offer === undefined) throw new OfferNotFound({ offerId })
    const now = this.now()
    const context = this.contextFor(offer.offer.team)
    return emails.map((email) => evaluateOffer(offer, context, email, now))
  }

  /**
   * Validates one email against an offer at `now` (default: the engine's clock); throws `OfferNotFound`
   * for an unknown id. A caller that also records the validation passes the instant it read once.
   */
  validateOffer(email: string, offerId: string, now: number = this.now()): OfferValidationResult {
    const offer = this.offers.get(offerId)
    if (offer === undefined) throw new OfferNotFound({ offerId })
    return evaluateOffer(offer, this.contextFor(offer.offer.team), email, now)
  }
}
