/**
 * Records offer validations into in-memory deltas, synchronously and
 * without I/O: a few counter increments, one daily bucket (cached for the
 * current day) and one HyperLogLog register update per email. The keyed
 * hash reads the address the engine already normalised in the result, so
 * the email is not parsed again. `npm run bench:stats` measures the whole
 * cost against validation alone: 0.2-0.4 µs per email on a ~1.2 µs offer
 * validation (15-45% on a loaded shared machine), the keyed hash being the
 * largest part; the goal is 10%.
 * The hosted verification page's funnel (`recordHostedFlow`) counts into
 * the same per-offer state, in its total and its day.
 * `take` hands the pending deltas to a flush; `restore` gives back those a
 * flush could not persist, so a failed flush loses nothing.
 *
 * Unique emails count canonical addresses (`canonicalAddress`). An input
 * that is not an address at all (INVALID_EMAIL_FORMAT even with quoted
 * local parts and IP literals allowed) counts as a validation but not as a
 * unique email.
 */

import type { CountedVerdict, HostedFlowStep, MadeHashes, TalliedCounts, UsageTally } from "../domain/OfferUsage.ts"
import type { OfferValidationResult } from "../domain/ValidationResult.ts"
import { type HashKey, hashCanonicalAddress, lastHash } from "../engine/email/canonicalHash.ts"
import { parseEmail, WIDEST_SYNTAX } from "../engine/email/parseEmail.ts"
import {
  addUniqueHash,
  addUsage,
  DAY_MS,
  type DayCounts,
  dayFlows,
  emptyDayCounts,
  emptyUsageState,
  fromUsageDelta,
  increment,
  toUsageDelta,
  type UsageState,
  type VerificationCountEvent
} from "./UsageState.ts"

/** The normalised address behind a result, or undefined when the input is not an address. */
export const normalizedAddress = (email: string, result: OfferValidationResult): string | undefined => {
  const results = result.results
  for (let i = 0; i < results.length; i++) {
    const normalized = results[i]!.validationDetails.format.normalized
    if (normalized !== undefined) return normalized
  }
  // No target group parsed it (offer not active, or a stricter syntax failed): parse once here.
  return refusedAddress(email)
}

/** The normalised address of an email no target group parsed, or undefined when it is not an address at all. */
export const refusedAddress = (email: string): string | undefined => {
  const parsed = parseEmail(email, WIDEST_SYNTAX)
  return parsed.ok ? parsed.email.address : undefined
}

interface Pending extends UsageState {
  /** The day of `bucket`, so consecutive records on one day skip the map lookup. */
  day: number
  bucket: DayCounts | undefined
}

const emptyPending = (): Pending => Object.assign(emptyUsageState(), { day: -1, bucket: undefined })

export class UsageRecorder {
  readonly #key: HashKey
  readonly #now: () => number
  #pending = new Map<string, Pending>()

  constructor(key: HashKey, now: () => number = Date.now) {
    this.#key = key
    this.#now = now
  }

  /** Counts one validation of `email` against `offerId` at `at` (default: now). */
  record(offerId: string, email: string, result: OfferValidationResult, at: number = this.#now()): void {
    this.#add(this.#stateFor(offerId), email, result, at)
  }

  /** Counts validations of `emails` (results in the same order) at one instant. */
  recordMany(
    offerId: string,
    emails: ReadonlyArray<string>,
    results: ReadonlyArray<OfferValidationResult>,
    at: number = this.#now()
  ): void {
    const state = this.#stateFor(offerId)
    for (let i = 0; i < results.length; i++) this.#add(state, emails[i]!, results[i]!, at)
  }

  /** Counts one verification event of `offerId` (no validation: the start's validation is recorded as such). */
  recordVerification(offerId: string, event: VerificationCountEvent): void {
    this.#stateFor(offerId).verifications[event]++
  }

  /** Counts one step of a hosted flow of `offerId` (`domain/OfferUsage.ts` `HostedFlowUsage`), in its total and its day. */
  recordHostedFlow(offerId: string, step: HostedFlowStep, at: number = this.#now()): void {
    const state = this.#stateFor(offerId)
    state.hostedFlow[step]++
    dayFlows(this.#bucket(state, at))[step]++
  }

  /** The deltas not yet handed to a flush for one offer (do not change it). */
  pending(offerId: string): UsageState | undefined {
    return this.#pending.get(offerId)
  }

  /** Whether anything is waiting to be flushed. */
  get isEmpty(): boolean {
    return this.#pending.size === 0
  }

  /** Hands over every pending delta and starts afresh. */
  take(): ReadonlyMap<string, UsageState> {
    const taken = this.#pending
    this.#pending = new Map()
    return taken
  }

  /** Puts back a delta that could not be persisted (added to what arrived since). */
  restore(offerId: string, delta: UsageState): void {
    const state = this.#stateFor(offerId)
    addUsage(state, delta)
    state.bucket = undefined
  }

  #stateFor(offerId: string): Pending {
    let state = this.#pending.get(offerId)
    if (state === undefined) {
      state = emptyPending()
      this.#pending.set(offerId, state)
    }
    return state
  }

  /**
   * Counts validations given as verdicts, each with its email's normalised
   * address (undefined: not an address); an address whose hash `made` holds
   * under this recorder's key is not hashed again.
   */
  recordVerdicts(
    offerId: string,
    addresses: ReadonlyArray<string | undefined>,
    verdicts: ReadonlyArray<CountedVerdict>,
    at: number,
    made?: MadeHashes | undefined
  ): void {
    const state = this.#stateFor(offerId)
    const hashed = made?.key === this.#key ? made : undefined
    for (let i = 0; i < verdicts.length; i++) {
      const address = addresses[i]
      if (hashed === undefined || address === undefined || hashed.made[i] !== 1) {
        this.#count(state, verdicts[i]!, address, at)
        continue
      }
      this.#count(state, verdicts[i]!, undefined, at)
      addUniqueHash(state, hashed.high[i]!, hashed.low[i]!)
    }
  }

  #add(state: Pending, email: string, result: OfferValidationResult, at: number): void {
    this.#count(state, result, normalizedAddress(email, result), at)
  }

  /** The state's bucket of the day of `at` (made on first use, kept for the next record of that day). */
  #bucket(state: Pending, at: number): DayCounts {
    const day = Math.floor(at / DAY_MS)
    let bucket = state.bucket
    if (day !== state.day || bucket === undefined) {
      bucket = state.daily.get(day)
      if (bucket === undefined) {
        bucket = emptyDayCounts()
        state.daily.set(day, bucket)
      }
      state.day = day
      state.bucket = bucket
    }
    return bucket
  }

  #count(state: Pending, verdict: CountedVerdict, address: string | undefined, at: number): void {
    state.validations++
    const bucket = this.#bucket(state, at)
    bucket.validations++
    if (verdict.isValid) {
      state.eligible++
      bucket.eligible++
      const groups = verdict.matchedTargetGroups
      if (groups !== undefined)
        for (let i = 0; i < groups.length; i++) increment(state.matchesByTargetGroup, groups[i]!)
    } else {
      state.ineligible++
      bucket.ineligible++
      increment(state.ineligibleByReason, verdict.reasonCode ?? "NO_TARGET_GROUP_MATCHED")
    }
    if (state.firstAt === null || at < state.firstAt) state.firstAt = at
    if (state.lastAt === null || at > state.lastAt) state.lastAt = at
    if (address !== undefined) {
      hashCanonicalAddress(this.#key, address)
      addUniqueHash(state, lastHash.high, lastHash.low)
    }
  }
}

/** A state as `TalliedCounts`: its counters as they are, without what a recorder keeps besides (its current bucket). */
const talliedCounts = (state: UsageState): TalliedCounts => {
  const counts: UsageState = {
    validations: state.validations,
    eligible: state.eligible,
    ineligible: state.ineligible,
    ineligibleByReason: state.ineligibleByReason,
    matchesByTargetGroup: state.matchesByTargetGroup,
    daily: state.daily,
    firstAt: state.firstAt,
    lastAt: state.lastAt,
    registers: state.registers,
    verifications: state.verifications,
    hostedFlow: state.hostedFlow
  }
  return counts as unknown as TalliedCounts
}

/** A tally of one offer's validations with unique-email key `key`: a bulk job's own counts, or a batch's on a worker thread. */
export const usageTally = (key: HashKey, offerId: string): UsageTally => {
  const counts = new UsageRecorder(key)
  return {
    recordMany: (emails, results, at) => counts.recordMany(offerId, emails, results, at),
    recordVerdicts: (addresses, verdicts, at, made) => counts.recordVerdicts(offerId, addresses, verdicts, at, made),
    take: () => {
      const taken = counts.take().get(offerId)
      return taken === undefined ? undefined : toUsageDelta(taken)
    },
    restore: (delta) => counts.restore(offerId, fromUsageDelta(delta)),
    takeCounts: () => {
      const taken = counts.take().get(offerId)
      return taken === undefined ? undefined : talliedCounts(taken)
    },
    addCounts: (tallied) => counts.restore(offerId, tallied as unknown as UsageState)
  }
}
