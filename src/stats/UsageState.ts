/**
 * The counters of one offer as plain mutable data: what the recorder
 * accumulates between flushes (a delta) and what a store keeps (the sum of
 * all deltas) are the same type, so persisting is adding. `addUsage` is
 * commutative and associative: counts add, registers take the maximum,
 * the time range widens, so deltas can be applied in any order, retried
 * after a failure, or pushed to a shared store by several processes.
 */

import {
  DAILY_RETENTION_DAYS,
  emptyOfferUsage,
  type HostedFlowStep,
  hostedFlowUsage,
  type OfferUsage,
  type UsageDelta
} from "../domain/OfferUsage.ts"
import { addHash, estimate, makeRegisters, mergeRegisters, REGISTER_COUNT } from "./HyperLogLog.ts"

export const DAY_MS = 86_400_000

/** How far the offer's hosted flows got, by step (`domain/OfferUsage.ts` `HostedFlowUsage`). */
export type HostedFlowCounts = Record<HostedFlowStep, number>

export const emptyHostedFlowCounts = (): HostedFlowCounts => ({
  started: 0,
  reachedCodeStep: 0,
  completed: 0,
  ineligibleSubmissions: 0
})

/** Every hosted flow counter, in the order the public shape lists them. */
export const HOSTED_FLOW_STEPS: ReadonlyArray<HostedFlowStep> = [
  "started",
  "reachedCodeStep",
  "completed",
  "ineligibleSubmissions"
]

export interface DayCounts {
  validations: number
  eligible: number
  ineligible: number
  /** Undefined on a day without a hosted flow (most days of most offers). */
  hostedFlow?: HostedFlowCounts | undefined
}

/** The hosted flow counters of a day's bucket, made on first use. */
export const dayFlows = (bucket: DayCounts): HostedFlowCounts => {
  if (bucket.hostedFlow === undefined) bucket.hostedFlow = emptyHostedFlowCounts()
  return bucket.hostedFlow
}

/** A day's bucket, empty. */
export const emptyDayCounts = (): DayCounts => ({ validations: 0, eligible: 0, ineligible: 0, hostedFlow: undefined })

/** What happened to the offer's verifications, by event. */
export interface VerificationCounts {
  started: number
  /** Verifications whose first message was sent (once each). */
  sent: number
  messagesSent: number
  verified: number
  failed: number
  expired: number
}

export type VerificationCountEvent = keyof VerificationCounts

export interface UsageState {
  validations: number
  eligible: number
  ineligible: number
  readonly ineligibleByReason: Map<string, number>
  readonly matchesByTargetGroup: Map<string, number>
  /** By UTC day number (milliseconds since the epoch / DAY_MS). */
  readonly daily: Map<number, DayCounts>
  /** Epoch milliseconds, null before the first validation. */
  firstAt: number | null
  lastAt: number | null
  /** HyperLogLog registers, null until a well-formed address is counted. */
  registers: Uint8Array | null
  readonly verifications: VerificationCounts
  readonly hostedFlow: HostedFlowCounts
}

export const emptyUsageState = (): UsageState => ({
  validations: 0,
  eligible: 0,
  ineligible: 0,
  ineligibleByReason: new Map(),
  matchesByTargetGroup: new Map(),
  daily: new Map(),
  firstAt: null,
  lastAt: null,
  registers: null,
  verifications: { started: 0, sent: 0, messagesSent: 0, verified: 0, failed: 0, expired: 0 },
  hostedFlow: emptyHostedFlowCounts()
})

export const increment = <K>(map: Map<K, number>, key: K, by = 1): void => {
  map.set(key, (map.get(key) ?? 0) + by)
}

/** Drops daily buckets more than DAILY_RETENTION_DAYS before the newest. */
const pruneDays = (daily: Map<number, DayCounts>): void => {
  if (daily.size <= DAILY_RETENTION_DAYS) return
  const newest = Math.max(...daily.keys())
  for (const day of daily.keys()) if (day <= newest - DAILY_RETENTION_DAYS) daily.delete(day)
}

/** Adds `delta` into `target` (which is changed; `delta` is not). */
export const addUsage = (target: UsageState, delta: UsageState): UsageState => {
  target.validations += delta.validations
  target.eligible += delta.eligible
  target.ineligible += delta.ineligible
  for (const [reason, n] of delta.ineligibleByReason) increment(target.ineligibleByReason, reason, n)
  for (const [group, n] of delta.matchesByTargetGroup) increment(target.matchesByTargetGroup, group, n)
  for (const [day, counts] of delta.daily) {
    let bucket = target.daily.get(day)
    if (bucket === undefined) {
      bucket = emptyDayCounts()
      target.daily.set(day, bucket)
    }
    bucket.validations += counts.validations
    bucket.eligible += counts.eligible
    bucket.ineligible += counts.ineligible
    if (counts.hostedFlow !== undefined) {
      const flows = dayFlows(bucket)
      for (const step of HOSTED_FLOW_STEPS) flows[step] += counts.hostedFlow[step]
    }
  }
  pruneDays(target.daily)
  if (delta.firstAt !== null && (target.firstAt === null || delta.firstAt < target.firstAt))
    target.firstAt = delta.firstAt
  if (delta.lastAt !== null && (target.lastAt === null || delta.lastAt > target.lastAt)) target.lastAt = delta.lastAt
  if (delta.registers !== null) {
    if (target.registers === null) target.registers = makeRegisters()
    mergeRegisters(target.registers, delta.registers)
  }
  for (const event of VERIFICATION_EVENTS) target.verifications[event] += delta.verifications[event]
  for (const step of HOSTED_FLOW_STEPS) target.hostedFlow[step] += delta.hostedFlow[step]
  return target
}

/** Every verification counter, in the order the public shape lists them. */
export const VERIFICATION_EVENTS: ReadonlyArray<VerificationCountEvent> = [
  "started",
  "sent",
  "messagesSent",
  "verified",
  "failed",
  "expired"
]

/** A deep copy. */
export const copyUsage = (state: UsageState): UsageState => addUsage(emptyUsageState(), state)

/** Counts one hash into the state's registers (allocated on first use). */
export const addUniqueHash = (state: UsageState, high: number, low: number): void => {
  if (state.registers === null) state.registers = makeRegisters()
  addHash(state.registers, high, low)
}

const isoDate = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)
const isoInstant = (at: number | null): string | null => (at === null ? null : new Date(at).toISOString())

/** The public shape of a state. */
export const toOfferUsage = (state: UsageState | undefined): OfferUsage => {
  if (state === undefined) return emptyOfferUsage
  return {
    validations: state.validations,
    eligible: state.eligible,
    ineligible: state.ineligible,
    ineligibleByReason: Object.fromEntries([...state.ineligibleByReason].sort(([a], [b]) => (a < b ? -1 : 1))),
    matchesByTargetGroup: Object.fromEntries([...state.matchesByTargetGroup].sort(([a], [b]) => (a < b ? -1 : 1))),
    uniqueEmails: { ...emptyOfferUsage.uniqueEmails, estimate: estimate(state.registers) },
    daily: [...state.daily]
      .sort(([a], [b]) => a - b)
      .map(([day, counts]) => ({
        date: isoDate(day),
        validations: counts.validations,
        eligible: counts.eligible,
        ineligible: counts.ineligible,
        ...(counts.hostedFlow === undefined ? {} : { hostedFlow: { ...counts.hostedFlow } })
      })),
    firstValidatedAt: isoInstant(state.firstAt),
    lastValidatedAt: isoInstant(state.lastAt),
    verifications: {
      ...state.verifications,
      conversionRate:
        state.verifications.started === 0
          ? 0
          : Math.round((state.verifications.verified / state.verifications.started) * 10_000) / 10_000
    },
    hostedFlow: hostedFlowUsage(state.hostedFlow)
  }
}

/** The state back from its public shape and registers (the file adapter's load). */
export const fromOfferUsage = (usage: OfferUsage, registers: Uint8Array | null): UsageState => {
  const state = emptyUsageState()
  state.validations = usage.validations
  state.eligible = usage.eligible
  state.ineligible = usage.ineligible
  for (const [reason, n] of Object.entries(usage.ineligibleByReason)) state.ineligibleByReason.set(reason, n)
  for (const [group, n] of Object.entries(usage.matchesByTargetGroup)) state.matchesByTargetGroup.set(group, n)
  for (const { date, hostedFlow, ...counts } of usage.daily) {
    state.daily.set(Math.floor(Date.parse(date) / DAY_MS), {
      ...counts,
      hostedFlow: hostedFlow === undefined ? undefined : { ...hostedFlow }
    })
  }
  state.firstAt = usage.firstValidatedAt === null ? null : Date.parse(usage.firstValidatedAt)
  state.lastAt = usage.lastValidatedAt === null ? null : Date.parse(usage.lastValidatedAt)
  state.registers = registers
  for (const event of VERIFICATION_EVENTS) state.verifications[event] = usage.verifications[event]
  for (const step of HOSTED_FLOW_STEPS) state.hostedFlow[step] = usage.hostedFlow[step]
  return state
}

/** The state as data (a job checkpoint's usage, a usage file). */
export const toUsageDelta = (state: UsageState): UsageDelta => ({
  usage: toOfferUsage(state),
  hyperLogLog: state.registers === null ? null : Buffer.from(state.registers).toString("base64")
})

/** The state back from `toUsageDelta`; throws when the registers are not whole. */
export const fromUsageDelta = (delta: UsageDelta): UsageState => {
  let registers: Uint8Array | null = null
  if (delta.hyperLogLog !== null) {
    const bytes = Buffer.from(delta.hyperLogLog, "base64")
    if (bytes.length !== REGISTER_COUNT) throw new Error(`expected ${REGISTER_COUNT} HyperLogLog registers`)
    registers = new Uint8Array(bytes)
  }
  return fromOfferUsage(delta.usage, registers)
}
