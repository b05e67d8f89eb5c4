/**
 * A usage state as named counters, the form the shared stores keep it in
 * (a Redis hash, PostgreSQL rows): validations, eligible, ineligible, by
 * reason `r:<code>`, by target group `g:<id>`, daily buckets
 * `d:<day>:v|e|i`, verification events `v:<event>`, the hosted flow's steps
 * `h:<step>` and by day `d:<day>:h:<step>`, and the first and last
 * instants `firstAt`, `lastAt` (kept by minimum and maximum, not added).
 * Adding a delta is adding its increments field by field, so a store can do
 * it atomically where the counters are.
 */
import type { HostedFlowStep } from "../domain/OfferUsage.ts"
import {
  addUsage,
  dayFlows,
  emptyDayCounts,
  emptyUsageState,
  HOSTED_FLOW_STEPS,
  type UsageState,
  VERIFICATION_EVENTS,
  type VerificationCounts
} from "./UsageState.ts"

/** The counter increments of a delta, field and amount (zeros left out; not the instants). */
export const counterIncrements = (delta: UsageState): Array<readonly [field: string, amount: number]> => {
  const pairs: Array<readonly [string, number]> = []
  const add = (field: string, amount: number) => {
    if (amount !== 0) pairs.push([field, amount])
  }
  add("validations", delta.validations)
  add("eligible", delta.eligible)
  add("ineligible", delta.ineligible)
  for (const [reason, n] of delta.ineligibleByReason) add(`r:${reason}`, n)
  for (const [group, n] of delta.matchesByTargetGroup) add(`g:${group}`, n)
  for (const [day, counts] of delta.daily) {
    add(`d:${day}:v`, counts.validations)
    add(`d:${day}:e`, counts.eligible)
    add(`d:${day}:i`, counts.ineligible)
    const flows = counts.hostedFlow
    if (flows !== undefined) for (const step of HOSTED_FLOW_STEPS) add(`d:${day}:h:${step}`, flows[step])
  }
  for (const event of VERIFICATION_EVENTS) add(`v:${event}`, delta.verifications[event])
  for (const step of HOSTED_FLOW_STEPS) add(`h:${step}`, delta.hostedFlow[step])
  return pairs
}

/** Stored counters (the instants among them) and registers as a state. */
export const stateOfCounters = (
  fields: Iterable<readonly [field: string, value: number]>,
  registers: Uint8Array | null
): UsageState => {
  const state = emptyUsageState()
  for (const [field, value] of fields) {
    if (field === "validations") state.validations = value
    else if (field === "eligible") state.eligible = value
    else if (field === "ineligible") state.ineligible = value
    else if (field === "firstAt") state.firstAt = value
    else if (field === "lastAt") state.lastAt = value
    else if (field.startsWith("r:")) state.ineligibleByReason.set(field.slice(2), value)
    else if (field.startsWith("g:")) state.matchesByTargetGroup.set(field.slice(2), value)
    else if (field.startsWith("v:")) state.verifications[field.slice(2) as keyof VerificationCounts] = value
    else if (field.startsWith("h:")) state.hostedFlow[field.slice(2) as HostedFlowStep] = value
    else if (field.startsWith("d:")) {
      const [, day, kind, step] = field.split(":")
      const bucket = state.daily.get(Number(day)) ?? emptyDayCounts()
      if (kind === "h") dayFlows(bucket)[step as HostedFlowStep] = value
      else if (kind === "v") bucket.validations = value
      else if (kind === "e") bucket.eligible = value
      else bucket.ineligible = value
      state.daily.set(Number(day), bucket)
    }
  }
  state.registers = registers
  // Buckets older than the retention are dropped when read (adding prunes them).
  return addUsage(emptyUsageState(), state)
}
