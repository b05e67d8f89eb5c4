/**
 * Validation as every transport asks for it — one email, many, a batch of
 * (offer, email) pairs, a job's chunk — against the snapshot in force, with
 * the team rule applied (`domain/visibility.ts`: what a viewer cannot see is
 * not found), every result counted in the validation metrics and every
 * offer validation recorded in the offer's usage statistics, and every
 * result that met a domain no source lists recorded in the team's review
 * queue (`reviews/ReviewQueue.ts`). The library
 * facade, the HTTP handlers, the fast path and the job runner call this and
 * nothing below it, so "validate, then record" is written once.
 *
 * The methods are synchronous and run no effect: the engine needs no I/O
 * per email, usage recording is an in-memory add, and the fast path and the
 * job runner call them per request and per chunk. A target that does not
 * exist for the viewer is returned (not thrown) as a `ValidationError`
 * whose reason is `TargetGroupNotFound` or `OfferNotFound`; `rows` is the
 * exception, for the job runner, which fails the job on a throw.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ReviewQueue } from "../reviews/ReviewQueue.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import { Snapshot } from "./Snapshot.ts"
import { type Counters, makeValidation, type ValidationService } from "./ValidationService.ts"

export {
  type Counters,
  isValidated,
  makeValidation,
  type OfferRequest,
  type Validated,
  ValidationError,
  type ValidationService,
  type ValidationTarget
} from "./ValidationService.ts"

/** Where validation results are counted (the daemon's Prometheus metrics; nothing in the library). */
export class ValidationCounters extends Context.Service<ValidationCounters, Counters>()(
  "campusgate/app/ValidationCounters"
) {
  /** Counts nothing (the library). */
  static readonly ignore: ValidationCounters["Service"] = { validated: () => {}, validatedAll: () => {} }

  static readonly none: Layer.Layer<ValidationCounters> = Layer.succeed(ValidationCounters, ValidationCounters.ignore)
}

export class Validation extends Context.Service<Validation, ValidationService>()("campusgate/app/Validation") {
  /** The service over a snapshot holder, usage statistics and counters (`makeValidation`). */
  static readonly make = makeValidation

  /** With a `ReviewQueue` in the context, results that met an unknown domain are recorded for review. */
  static readonly layer: Layer.Layer<Validation, never, Snapshot | UsageStatistics | ValidationCounters> = Layer.effect(
    Validation,
    Effect.gen(function* () {
      const reviews = Option.getOrUndefined(yield* Effect.serviceOption(ReviewQueue))
      return Validation.of(Validation.make(yield* Snapshot, yield* UsageStatistics, yield* ValidationCounters, reviews))
    })
  )
}
