/**
 * The usage statistics of one offer as the library returns them and the
 * HTTP API serves them (`GET /api/v1/offers/{id}/status` → `usage`). A public
 * contract: fields are only ever added. An offer never validated has
 * `emptyOfferUsage`: zeros, empty maps, no days, null timestamps.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Count } from "./Count.ts"
import type { OfferValidationResult } from "./ValidationResult.ts"

/** log2 of the number of HyperLogLog registers behind `uniqueEmails` (16 KiB per offer). */
export const UNIQUE_EMAILS_PRECISION = 14
/** 1.04 / sqrt(2^14), rounded: the relative standard error of the estimate. */
export const UNIQUE_EMAILS_ERROR = 0.0081

/** What the hosted flow counts, by step: the counters kept per offer and per day. */
export type HostedFlowStep = "started" | "reachedCodeStep" | "completed" | "ineligibleSubmissions"

/** The hosted flows of one UTC day (`HostedFlowUsage` without what is derived). */
export const HostedFlowDay = Schema.Struct({
  started: Count,
  reachedCodeStep: Count,
  completed: Count,
  ineligibleSubmissions: Count
})
export type HostedFlowDay = typeof HostedFlowDay.Type

export const emptyHostedFlowDay: HostedFlowDay = {
  started: 0,
  reachedCodeStep: 0,
  completed: 0,
  ineligibleSubmissions: 0
}

/** Counts of one UTC day. */
export const DailyUsage = Schema.Struct({
  /** The UTC date, `YYYY-MM-DD`. */
  date: Schema.String.pipe(Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/))),
  validations: Count,
  eligible: Count,
  ineligible: Count,
  /** The day's hosted flows, on days with one only (absent: none). */
  hostedFlow: Schema.optionalKey(HostedFlowDay)
})
export type DailyUsage = typeof DailyUsage.Type

/** How many distinct people (canonical addresses) were validated, estimated. */
export const UniqueEmails = Schema.Struct({
  estimate: Count,
  /** HyperLogLog over a keyed hash of the canonical address; no address is stored. */
  method: Schema.Literal("hyperloglog"),
  /** log2 of the number of registers. */
  precision: Schema.Int,
  /** Relative standard error of `estimate` (small counts are exact in practice). */
  relativeStandardError: Schema.Finite
})
export type UniqueEmails = typeof UniqueEmails.Type

/**
 * Proof of ownership for the offer: verifications started, messages sent,
 * and how they ended. `started` → `sent` → `verified` is the funnel: each
 * verification counts once at each step it reached.
 */
export const VerificationUsage = Schema.Struct({
  /** Verifications started (eligible addresses only: an ineligible one is sent nothing). */
  started: Count,
  /** Verifications whose first message reached the mail server (absent in statistics stored before it was counted: 0). */
  sent: Count.pipe(Schema.withDecodingDefaultKey(Effect.succeed(0))),
  /** Messages handed to the mail server (first messages and resends). */
  messagesSent: Count,
  verified: Count,
  /** Failed after too many wrong codes, or refused at confirmation by the redemption limit. */
  failed: Count,
  expired: Count,
  /** `verified / started`, 0 before the first start. */
  conversionRate: Schema.Finite
})
export type VerificationUsage = typeof VerificationUsage.Type

export const emptyVerificationUsage: VerificationUsage = {
  started: 0,
  sent: 0,
  messagesSent: 0,
  verified: 0,
  failed: 0,
  expired: 0,
  conversionRate: 0
}

/**
 * The hosted verification page's funnel (`GET /verify/{offerId}`): how far
 * each flow opened for the offer got. A flow counts once when its first
 * page is shown (a reload or a later page of the same flow does not count
 * again), reaches the code step when a verification is started from it
 * (the code form, or "check your inbox" for a link), and completes when
 * its code is confirmed on the page. Flows opened by target group
 * (`/verify?targetGroupId=`) have no offer and are not counted here.
 */
export const HostedFlowUsage = Schema.Struct({
  /** Flows opened: the first page of a new flow (the flow's cookie tells a new flow from a reload). */
  started: Count,
  /** Flows whose address was taken: a verification started from the flow (a flow restarted with another address counts again). */
  reachedCodeStep: Count,
  /** Flows whose code was confirmed on the page (a link opened from the message completes outside the page and is counted in `verifications.verified` only). */
  completed: Count,
  /** Addresses submitted on the page and refused as ineligible (each submission). */
  ineligibleSubmissions: Count,
  /** `started - reachedCodeStep` (at least 0): flows that stopped at the email step. Flows still in progress count here until they move on. */
  abandonedAtEmailStep: Count,
  /** `reachedCodeStep - completed` (at least 0): flows that stopped at the code step. Flows still in progress count here until they move on. */
  abandonedAtCodeStep: Count
}).annotate({
  description:
    "The hosted verification page's funnel for the offer (`/verify/{offerId}`): flows started (each flow once, on its first page; not per page view or reload), flows that reached the code step (a verification started from the flow; a flow restarted with another address counts again), flows completed (code confirmed on the page), ineligible submissions, and the abandonments derived from them: `abandonedAtEmailStep` = `started - reachedCodeStep`, `abandonedAtCodeStep` = `reachedCodeStep - completed` (at least 0). Flows still in progress count as not yet moved on, so as abandoned at their step until they move on. Flows by target group are not counted."
})
export type HostedFlowUsage = typeof HostedFlowUsage.Type

/** The public funnel of the counters (the abandonments derived). */
export const hostedFlowUsage = (counts: HostedFlowDay): HostedFlowUsage => ({
  started: counts.started,
  reachedCodeStep: counts.reachedCodeStep,
  completed: counts.completed,
  ineligibleSubmissions: counts.ineligibleSubmissions,
  abandonedAtEmailStep: Math.max(0, counts.started - counts.reachedCodeStep),
  abandonedAtCodeStep: Math.max(0, counts.reachedCodeStep - counts.completed)
})

export const emptyHostedFlowUsage: HostedFlowUsage = hostedFlowUsage(emptyHostedFlowDay)

export const OfferUsage = Schema.Struct({
  /** Every validation against the offer: single, bulk, batch processing and jobs. */
  validations: Count,
  eligible: Count,
  /** Always `validations - eligible`. */
  ineligible: Count,
  /** Ineligible validations by `reasonCode` (only codes that occurred). */
  ineligibleByReason: Schema.Record(Schema.String, Count),
  /** Eligible validations by matching target group id (one validation can match several). */
  matchesByTargetGroup: Schema.Record(Schema.String, Count),
  uniqueEmails: UniqueEmails,
  /** Days with at least one validation or hosted flow, oldest first, at most the last `DAILY_RETENTION_DAYS`. */
  daily: Schema.Array(DailyUsage),
  /** ISO 8601 instants, null before the first validation. */
  firstValidatedAt: Schema.NullOr(Schema.String),
  lastValidatedAt: Schema.NullOr(Schema.String),
  /** Verifications of the offer (absent in statistics stored before verifications existed: all zero). */
  verifications: VerificationUsage.pipe(Schema.withDecodingDefaultKey(Effect.succeed(emptyVerificationUsage))),
  /** The hosted verification page's funnel (absent in statistics stored before it was counted: all zero). */
  hostedFlow: HostedFlowUsage.pipe(Schema.withDecodingDefaultKey(Effect.succeed(emptyHostedFlowUsage)))
})
export type OfferUsage = typeof OfferUsage.Type

/** Daily buckets older than this many days before the newest one are dropped. */
export const DAILY_RETENTION_DAYS = 400

export const emptyOfferUsage: OfferUsage = {
  validations: 0,
  eligible: 0,
  ineligible: 0,
  ineligibleByReason: {},
  matchesByTargetGroup: {},
  uniqueEmails: {
    estimate: 0,
    method: "hyperloglog",
    precision: UNIQUE_EMAILS_PRECISION,
    relativeStandardError: UNIQUE_EMAILS_ERROR
  },
  daily: [],
  firstValidatedAt: null,
  lastValidatedAt: null,
  verifications: emptyVerificationUsage,
  hostedFlow: emptyHostedFlowUsage
}

const DAY_MS = 86_400_000

/**
 * The last `days` UTC days up to the day of `now`, oldest first, each one
 * present (zeros where nothing was validated): the series a chart of the
 * last 7, 30 or 90 days draws without filling gaps itself.
 */
export const lastDays = (daily: ReadonlyArray<DailyUsage>, days: number, now: number): Array<DailyUsage> => {
  const byDate = new Map(daily.map((day) => [day.date, day]))
  const today = Math.floor(now / DAY_MS)
  const series: Array<DailyUsage> = []
  for (let day = today - days + 1; day <= today; day++) {
    const date = new Date(day * DAY_MS).toISOString().slice(0, 10)
    series.push(byDate.get(date) ?? { date, validations: 0, eligible: 0, ineligible: 0 })
  }
  return series
}

/**
 * Usage counted and not yet stored, as a job's checkpoint carries it: the
 * public counters and the unique-email registers (base64; null before the
 * first well-formed address).
 */
export const UsageDelta = Schema.Struct({
  usage: OfferUsage,
  hyperLogLog: Schema.NullOr(Schema.String)
})
export type UsageDelta = typeof UsageDelta.Type

/** What one offer validation's verdict tells the usage statistics. */
export interface CountedVerdict {
  readonly isValid: boolean
  readonly matchedTargetGroups?: ReadonlyArray<string> | undefined
  readonly reasonCode?: string | undefined
}

/**
 * Unique-email hashes of a batch's emails made already (a job hashes each
 * email's canonical address for its duplicates, `jobs/duplicates.ts`), so
 * that counting the batch does not hash them again: where `made[i]` is 1,
 * email i's canonical address hashes to `high[i]`, `low[i]` under `key`. A
 * tally takes them only when `key` is its own key object.
 */
export interface MadeHashes {
  readonly key: object
  readonly made: Uint8Array
  readonly high: Uint32Array
  readonly low: Uint32Array
}

declare const talliedCounts: unique symbol

/**
 * A tally's counts as data one thread posts to another (a structured
 * clone: numbers, maps, the registers' bytes), taken with
 * `UsageTally.takeCounts` and added with `addCounts`. A `UsageDelta` is the
 * public shape with its registers as base64 text, for a job's record: made
 * for every 2,048-email batch of a job, it cost the job thread an estimate
 * and an encoding, and the request thread a decoding and ~20 KB of text
 * each, which grew that thread's young generation during an offer job.
 */
export interface TalliedCounts {
  readonly [talliedCounts]: true
}

/** Counts of one bulk job against one offer, kept apart until a checkpoint takes them (`UsageStatistics.tally`). */
export interface UsageTally {
  /** Counts validations of `emails` (results in the same order) at one instant. */
  recordMany(emails: ReadonlyArray<string>, results: ReadonlyArray<OfferValidationResult>, at: number): void
  /**
   * Counts validations given as their verdicts (a job's rows) and each
   * email's normalised address (undefined: the input is not an address),
   * at one instant: the same counts `recordMany` makes of the results.
   * An address whose hash is in `made` is not hashed again.
   */
  recordVerdicts(
    addresses: ReadonlyArray<string | undefined>,
    verdicts: ReadonlyArray<CountedVerdict>,
    at: number,
    made?: MadeHashes | undefined
  ): void
  /** What was counted since the last take, as data; undefined when nothing was. */
  take(): UsageDelta | undefined
  /** Gives back counts that could not be stored, to go with the next take. */
  restore(delta: UsageDelta): void
  /** What was counted since the last take, as data to post to another thread; undefined when nothing was. */
  takeCounts(): TalliedCounts | undefined
  /** Adds counts taken elsewhere (`takeCounts`) with the same unique-email key: a worker thread's batch. */
  addCounts(counts: TalliedCounts): void
}
