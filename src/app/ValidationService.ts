/**
 * The validation service itself, with no Effect service around it
 * (`Validation.ts` holds that and its layer): a job thread builds one over
 * its own engine (`jobThread.ts`), and imports this module alone, not the
 * stores and their clients (Redis, file watching) the daemon's layer
 * needs. See `Validation.ts` for what the service does.
 */
import * as Schema from "effect/Schema"
import type { Explanation } from "../domain/Explanation.ts"
import { OfferNotFound, TargetGroupNotFound } from "../domain/errors.ts"
import type { MadeHashes, UsageTally } from "../domain/OfferUsage.ts"
import { type ResultRow, type RowVerdict, toOfferResultRow, toResultRow } from "../domain/ResultRow.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { ALL_TEAMS, type Viewer } from "../domain/visibility.ts"
import type { PlainForms } from "../engine/email/plainAddress.ts"
import { hostOf } from "../engine/institutionOf.ts"
import { candidateOf } from "../engine/targeting/candidateOf.ts"
import type { EngineContext } from "../engine/targeting/EngineContext.ts"
import { evaluateOffer } from "../engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../engine/targeting/evaluateTargetGroup.ts"
import { explainResult } from "../engine/targeting/explainResult.ts"
import type { ReviewQueue, Sighting } from "../reviews/ReviewQueue.ts"
import type { UsageStatistics } from "../stats/UsageStatistics.ts"
import { offerRowVerdicts, targetGroupRowVerdicts } from "./rowVerdicts.ts"
import type { ConfigSnapshot } from "./Snapshot.ts"
import { visibleOffer, visibleTargetGroup } from "./visibility.ts"

/** Why a validation could not run: its target does not exist for the viewer (HTTP answers 404). */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  reason: Schema.Union([TargetGroupNotFound, OfferNotFound])
}) {
  override get message(): string {
    return this.reason.message
  }
}

const targetGroupNotFound = (targetGroupId: string) =>
  new ValidationError({ reason: new TargetGroupNotFound({ targetGroupId }) })
const offerNotFound = (offerId: string) => new ValidationError({ reason: new OfferNotFound({ offerId }) })

/** What a validation result tells the counters. */
export interface Validated {
  readonly isValid: boolean
  readonly reasonCode?: string | undefined
}

/**
 * Whether a batch's result validated an email (a per-item error validated
 * nothing): a class test, which stays fast however many shapes a job's
 * verdicts come in (an `in` test on them was 2.5% of an offer job's CPU).
 */
export const isValidated = (result: Validated | ValidationError): result is Validated =>
  !(result instanceof ValidationError)

/** Where validation results are counted: the `ValidationCounters` service (`Validation.ts`), or a job thread's tally. */
export interface Counters {
  /** One validated email. */
  validated(result: Validated): void
  /** A batch of validated emails (per-item errors, which validated nothing, do not count). */
  validatedAll(results: ReadonlyArray<Validated | ValidationError>): void
  /** `times` emails validated alike (counted on another thread); absent: `validated` is called `times` times. */
  validatedTimes?(result: Validated, times: number): void
}

/** What a job validates against. */
export type ValidationTarget = { readonly targetGroupId: string } | { readonly offerId: string }

/** One (offer, email) pair of a batch. */
export interface OfferRequest {
  readonly offerId: string
  readonly email: string
}

export interface ValidationService {
  /** One email against a target group the viewer sees. */
  targetGroup(viewer: Viewer, email: string, targetGroupId: string): ValidationResult | ValidationError
  /** `targetGroup`, with the result explained criterion by criterion (the console's "try an email"). */
  explainTargetGroup(
    viewer: Viewer,
    email: string,
    targetGroupId: string
  ): { readonly result: ValidationResult; readonly explanation: Explanation } | ValidationError
  /** One email against an offer the viewer sees (eligible when any of its target groups matches). */
  offer(viewer: Viewer, email: string, offerId: string): OfferValidationResult | ValidationError
  /** Many emails against one target group, results in input order. */
  manyTargetGroup(
    viewer: Viewer,
    emails: ReadonlyArray<string>,
    targetGroupId: string
  ): Array<ValidationResult> | ValidationError
  /** Many emails against one offer, results in input order, at one instant. */
  manyOffer(
    viewer: Viewer,
    emails: ReadonlyArray<string>,
    offerId: string
  ): Array<OfferValidationResult> | ValidationError
  /** (offer, email) pairs, each answered on its own: an offer the viewer cannot see is that item's `ValidationError`. */
  batch(viewer: Viewer, requests: ReadonlyArray<OfferRequest>): Array<OfferValidationResult | ValidationError>
  /**
   * A job's chunk as result rows; throws the not-found error when the target
   * is gone (the job fails). Offer validations are counted in `tally` when
   * given (a job's own, stored with its checkpoints) instead of the shared
   * recorder.
   */
  rows(
    viewer: Viewer,
    target: ValidationTarget,
    emails: ReadonlyArray<string>,
    tally?: UsageTally | undefined
  ): Array<ResultRow>
  /**
   * `rows` without the addresses (row i is `emails[i]` and verdict i), as a
   * job writes them: the emails of one host share one verdict
   * (`rowVerdicts.ts`). Offer validations are counted in `tally` when given,
   * else nowhere: a job counts its own (`jobs/jobUsage.ts`), and a job
   * thread of a daemon that keeps no statistics has no tally. `read`: what
   * one pass over the emails found already: unique-email hashes
   * (`UsageTally.recordVerdicts`) and plain forms (`rowVerdicts.ts`).
   */
  rowVerdicts(
    viewer: Viewer,
    target: ValidationTarget,
    emails: ReadonlyArray<string>,
    tally?: UsageTally | undefined,
    read?: (MadeHashes & PlainForms) | undefined
  ): ReadonlyArray<RowVerdict>
}

/** The team whose reviewed institutions a validation sees: the caller's, or for every team's key the group's own. */
const teamOf = (viewer: Viewer, groupTeam: string | undefined): string | undefined =>
  viewer === ALL_TEAMS ? groupTeam : viewer

/** Where unknown domains are recorded for review (`reviews/ReviewQueue.ts`); nothing where absent. */
export type Sightings = Pick<ReviewQueue["Service"], "sighted" | "seen">

const noSightings: Sightings = { sighted: () => undefined, seen: () => undefined }

/**
 * A job's rows that met unknown domains, recorded for review: the rows of
 * one host share one verdict (`rowVerdicts.ts`), so each verdict's host is
 * read once, from its first row, and counted for all of them.
 */
const sightRows = (
  sightings: Sightings,
  team: string | undefined,
  context: EngineContext,
  emails: ReadonlyArray<string>,
  verdicts: ReadonlyArray<RowVerdict>
): void => {
  if (team === undefined) return
  let byVerdict: Map<RowVerdict, { readonly first: number; times: number }> | undefined
  for (let i = 0; i < verdicts.length; i++) {
    const verdict = verdicts[i]!
    const code = verdict.reasonCode
    if (code !== "UNKNOWN_INSTITUTION" && code !== "LIKELY_INSTITUTION") continue
    byVerdict ??= new Map()
    const counted = byVerdict.get(verdict)
    if (counted === undefined) byVerdict.set(verdict, { first: i, times: 1 })
    else counted.times++
  }
  if (byVerdict === undefined) return
  const seen: Array<Sighting> = []
  for (const [verdict, { first, times }] of byVerdict) {
    const host = hostOf(emails[first]!)
    const candidate = host === undefined ? null : candidateOf(context, host)
    if (candidate !== null) seen.push({ candidate, accepted: verdict.reasonCode === "LIKELY_INSTITUTION", times })
  }
  if (seen.length > 0) sightings.seen(team, seen)
}

/** An offer's results, each group's recorded (a group that met an unknown domain says so; the rest cost a comparison). */
const sightOffer = (sightings: Sightings, team: string | undefined, result: OfferValidationResult): void => {
  if (team === undefined) return
  const groups = result.results
  for (let i = 0; i < groups.length; i++) {
    const code = groups[i]!.reasonCode
    if (code === "UNKNOWN_INSTITUTION" || code === "LIKELY_INSTITUTION") {
      sightings.sighted(team, groups[i]!)
      return
    }
  }
}

/** The service over a snapshot holder, usage statistics, counters and the review queue. */
export const makeValidation = (
  snapshot: { current(): Pick<ConfigSnapshot, "engine"> },
  usage: Pick<UsageStatistics["Service"], "record" | "recordMany">,
  counters: Counters,
  sightings: Sightings = noSightings
): ValidationService => {
  const sightGroup = (team: string | undefined, result: ValidationResult): void => {
    const code = result.reasonCode
    if (team !== undefined && (code === "UNKNOWN_INSTITUTION" || code === "LIKELY_INSTITUTION"))
      sightings.sighted(team, result)
  }
  const manyTargetGroup = (viewer: Viewer, emails: ReadonlyArray<string>, targetGroupId: string) => {
    const { engine } = snapshot.current()
    const group = visibleTargetGroup(engine, viewer, targetGroupId)
    if (group === undefined) return targetGroupNotFound(targetGroupId)
    const results = new Array<ValidationResult>(emails.length)
    const team = teamOf(viewer, group.targetGroup.team)
    const context = engine.contextFor(team)
    for (let i = 0; i < emails.length; i++) {
      const result = evaluateTargetGroup(group, context, emails[i]!)
      results[i] = result
      sightGroup(team, result)
    }
    counters.validatedAll(results)
    return results
  }
  const manyOffer = (viewer: Viewer, emails: ReadonlyArray<string>, offerId: string, tally?: UsageTally) => {
    const { engine } = snapshot.current()
    const offer = visibleOffer(engine, viewer, offerId)
    if (offer === undefined) return offerNotFound(offerId)
    const at = engine.now()
    const results = new Array<OfferValidationResult>(emails.length)
    const team = teamOf(viewer, offer.offer.team)
    const context = engine.contextFor(offer.offer.team)
    for (let i = 0; i < emails.length; i++) {
      const result = evaluateOffer(offer, context, emails[i]!, at)
      results[i] = result
      sightOffer(sightings, team, result)
    }
    counters.validatedAll(results)
    if (tally === undefined) usage.recordMany(offerId, emails, results, at)
    else tally.recordMany(emails, results, at)
    return results
  }
  const rows = (
    viewer: Viewer,
    target: ValidationTarget,
    emails: ReadonlyArray<string>,
    tally?: UsageTally
  ): Array<ResultRow> => {
    if ("targetGroupId" in target) {
      const results = manyTargetGroup(viewer, emails, target.targetGroupId)
      if (results instanceof ValidationError) throw results.reason
      return results.map((result, i) => toResultRow(emails[i]!, result))
    }
    const results = manyOffer(viewer, emails, target.offerId, tally)
    if (results instanceof ValidationError) throw results.reason
    return results.map((result, i) => toOfferResultRow(emails[i]!, result))
  }
  return {
    targetGroup: (viewer, email, targetGroupId) => {
      const { engine } = snapshot.current()
      const group = visibleTargetGroup(engine, viewer, targetGroupId)
      if (group === undefined) return targetGroupNotFound(targetGroupId)
      const result = evaluateTargetGroup(group, engine.contextFor(teamOf(viewer, group.targetGroup.team)), email)
      counters.validated(result)
      sightGroup(teamOf(viewer, group.targetGroup.team), result)
      return result
    },
    explainTargetGroup: (viewer, email, targetGroupId) => {
      // One snapshot for the result and its explanation.
      const { engine } = snapshot.current()
      const group = visibleTargetGroup(engine, viewer, targetGroupId)
      if (group === undefined) return targetGroupNotFound(targetGroupId)
      const context = engine.contextFor(teamOf(viewer, group.targetGroup.team))
      const result = evaluateTargetGroup(group, context, email)
      counters.validated(result)
      sightGroup(teamOf(viewer, group.targetGroup.team), result)
      return { result, explanation: explainResult(group, context, result) }
    },
    offer: (viewer, email, offerId) => {
      const { engine } = snapshot.current()
      const offer = visibleOffer(engine, viewer, offerId)
      if (offer === undefined) return offerNotFound(offerId)
      const at = engine.now()
      const result = evaluateOffer(offer, engine.contextFor(offer.offer.team), email, at)
      counters.validated(result)
      usage.record(offerId, email, result, at)
      sightOffer(sightings, teamOf(viewer, offer.offer.team), result)
      return result
    },
    manyTargetGroup,
    manyOffer: (viewer, emails, offerId) => manyOffer(viewer, emails, offerId),
    batch: (viewer, requests) => {
      const { engine } = snapshot.current()
      const at = engine.now()
      const results = requests.map(({ offerId, email }) => {
        const offer = visibleOffer(engine, viewer, offerId)
        if (offer === undefined) return offerNotFound(offerId)
        const result = evaluateOffer(offer, engine.contextFor(offer.offer.team), email, at)
        usage.record(offerId, email, result, at)
        sightOffer(sightings, teamOf(viewer, offer.offer.team), result)
        return result
      })
      counters.validatedAll(results)
      return results
    },
    rows,
    rowVerdicts: (viewer, target, emails, tally, read) => {
      const { engine } = snapshot.current()
      if ("targetGroupId" in target) {
        const group = visibleTargetGroup(engine, viewer, target.targetGroupId)
        if (group === undefined) throw targetGroupNotFound(target.targetGroupId).reason
        const team = teamOf(viewer, group.targetGroup.team)
        const context = engine.contextFor(team)
        const verdicts = targetGroupRowVerdicts(group, context, emails, read)
        counters.validatedAll(verdicts)
        sightRows(sightings, team, context, emails, verdicts)
        return verdicts
      }
      const offer = visibleOffer(engine, viewer, target.offerId)
      if (offer === undefined) throw offerNotFound(target.offerId).reason
      const at = engine.now()
      const context = engine.contextFor(offer.offer.team)
      const { verdicts, addresses } = offerRowVerdicts(offer, context, emails, at, read)
      counters.validatedAll(verdicts)
      sightRows(sightings, teamOf(viewer, offer.offer.team), context, emails, verdicts)
      tally?.recordVerdicts(addresses, verdicts, at, read)
      return verdicts
    }
  }
}
