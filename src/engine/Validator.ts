/**
 * The validator as an Effect service: validates emails against target groups
 * and offers on the current engine snapshot. The snapshot can be replaced as
 * a whole (configuration reload); a validation that has started finishes on
 * the snapshot it started with.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { decodeOffers, decodeTargetGroups } from "../domain/decodeResources.ts"
import {
  type ConfigurationProblem,
  InvalidConfiguration,
  OfferNotFound,
  TargetGroupNotFound
} from "../domain/errors.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { EmailPolicyLists } from "./EmailPolicyLists.ts"
import { Engine } from "./Engine.ts"
import { InstitutionIndex } from "./InstitutionIndex.ts"
import { type EngineContext, makeEngineContext } from "./targeting/EngineContext.ts"
import { evaluateOffer } from "./targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "./targeting/evaluateTargetGroup.ts"

/** Target groups and offers as plain data, e.g. parsed from YAML or JSON; decoded and checked on load. */
export interface ValidatorResources {
  readonly targetGroups: ReadonlyArray<unknown>
  readonly offers?: ReadonlyArray<unknown> | undefined
}

export interface ValidatorOptions extends ValidatorResources {
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
}

/** Decodes resources and compiles a snapshot, or fails with every problem found. */
export const makeEngine = (
  context: EngineContext,
  resources: ValidatorResources,
  now?: () => number
): Engine | InvalidConfiguration => {
  const problems: Array<ConfigurationProblem> = []
  const targetGroups = decodeTargetGroups(resources.targetGroups, problems)
  const offers = decodeOffers(resources.offers ?? [], problems)
  if (problems.length > 0) return new InvalidConfiguration({ problems })
  try {
    return Engine.make({ context, targetGroups, offers, now })
  } catch (error) {
    if (error instanceof InvalidConfiguration) return error
    throw error
  }
}

export class Validator extends Context.Service<
  Validator,
  {
    /** The snapshot in force now; its methods are synchronous and allocation-light. */
    current(): Engine
    /** Replaces the snapshot atomically; on failure the old one keeps serving. */
    replace(resources: ValidatorResources): Effect.Effect<void, InvalidConfiguration>
    validate(email: string, targetGroupId: string): Effect.Effect<ValidationResult, TargetGroupNotFound>
    validateOffer(email: string, offerId: string): Effect.Effect<OfferValidationResult, OfferNotFound>
    validateMany(
      emails: ReadonlyArray<string>,
      targetGroupId: string
    ): Effect.Effect<ReadonlyArray<ValidationResult>, TargetGroupNotFound>
    validateManyOffer(
      emails: ReadonlyArray<string>,
      offerId: string
    ): Effect.Effect<ReadonlyArray<OfferValidationResult>, OfferNotFound>
  }
>()("campusgate/engine/Validator") {
  static readonly layer = (
    options: ValidatorOptions
  ): Layer.Layer<Validator, InvalidConfiguration, InstitutionIndex | EmailPolicyLists> =>
    Layer.effect(
      Validator,
      Effect.gen(function* () {
        const { table } = yield* InstitutionIndex
        const { lists } = yield* EmailPolicyLists
        const context = makeEngineContext(table, lists)
        const first = makeEngine(context, options, options.now)
        if (first instanceof InvalidConfiguration) return yield* first
        let engine = first

        const replace = Effect.fn("Validator.replace")(function* (resources: ValidatorResources) {
          const next = makeEngine(context, resources, options.now)
          if (next instanceof InvalidConfiguration) return yield* next
          engine = next
        })
        const group = (snapshot: Engine, targetGroupId: string) => {
          const found = snapshot.targetGroups.get(targetGroupId)
          return found === undefined ? Effect.fail(new TargetGroupNotFound({ targetGroupId })) : Effect.succeed(found)
        }
        const offer = (snapshot: Engine, offerId: string) => {
          const found = snapshot.offers.get(offerId)
          return found === undefined ? Effect.fail(new OfferNotFound({ offerId })) : Effect.succeed(found)
        }
        const validate = Effect.fn("Validator.validate")(function* (email: string, targetGroupId: string) {
          const snapshot = engine
          return evaluateTargetGroup(yield* group(snapshot, targetGroupId), snapshot.context, email)
        })
        const validateOffer = Effect.fn("Validator.validateOffer")(function* (email: string, offerId: string) {
          const snapshot = engine
          return evaluateOffer(yield* offer(snapshot, offerId), snapshot.context, email, snapshot.now())
        })
        const validateMany = Effect.fn("Validator.validateMany")(function* (
          emails: ReadonlyArray<string>,
          targetGroupId: string
        ) {
          const snapshot = engine
          yield* group(snapshot, targetGroupId)
          return snapshot.validateMany(emails, targetGroupId)
        })
        const validateManyOffer = Effect.fn("Validator.validateManyOffer")(function* (
          emails: ReadonlyArray<string>,
          offerId: string
        ) {
          const snapshot = engine
          yield* offer(snapshot, offerId)
          return snapshot.validateManyOffer(emails, offerId)
        })
        return Validator.of({
          current: () => engine,
          replace,
          validate,
          validateOffer,
          validateMany,
          validateManyOffer
        })
      })
    )

  /** The validator with the built-in institution data and email lists. */
  static readonly layerBuiltIn = (options: ValidatorOptions): Layer.Layer<Validator, InvalidConfiguration> =>
    Validator.layer(options).pipe(Layer.provide([InstitutionIndex.layer(), EmailPolicyLists.layer]))
}
