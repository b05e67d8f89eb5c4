/**
 * The limits proof of ownership keeps per person (a canonical address),
 * as units a verification record holds: each message asked for (a start,
 * a resend) is a unit of its team's budget for the offer (or target group)
 * and a unit of the mailbox's deployment-wide cap; a verification that
 * ended verified is a unit of its offer's redemption limit until an
 * operator resets it. `unitsOf` is the one place that says which records
 * count, when and where; a store keeps the units of its records and
 * decides a write that adds units together with the write, atomically
 * (`verification/VerificationStore.ts`), so concurrent requests cannot pass
 * a limit that requests one after another would not.
 *
 * Keys name the team, the offer or target group and the address's keyed
 * hash, so one team's traffic never spends another team's budget; only
 * the mailbox cap is shared, and its refusal says nothing of who spent it.
 */
import type { VerificationRecord } from "./Verification.ts"

/** A unit a record holds under a limit's key, taken at `at` (epoch ms). */
export interface LimitUnit {
  readonly key: string
  readonly at: number
}

/** What a write must keep: after it, at most `max` units under `key` taken at or after `since`. */
export interface LimitCheck {
  readonly key: string
  readonly max: number
  readonly since: number
}

/** Whose verification it is and of whom: what the keys of its limits name. */
type Owner = Pick<VerificationRecord, "team" | "offerId" | "targetGroupId" | "addressHash">

/** The messages a team may ask for to one address for one offer (or target group). */
export const messageBudgetKey = (record: Owner): string =>
  `messages:${record.team}:${record.offerId === undefined ? `target-group:${record.targetGroupId}` : `offer:${record.offerId}`}:${record.addressHash}`

/** The messages one mailbox may be sent by the whole deployment. */
export const mailboxKey = (addressHash: string): string => `mailbox:${addressHash}`

/** The verifications of one address that count towards its offer's redemption limit. */
export const redemptionKey = (team: string, offerId: string, addressHash: string): string =>
  `redemptions:${team}:${offerId}:${addressHash}`

/** When each message of the record was asked for (records from before `messagesAt`: when each was sent). */
export const messageTimes = (record: VerificationRecord): ReadonlyArray<number> => record.messagesAt ?? record.sentAt

/** The units `record` holds. */
export const unitsOf = (record: VerificationRecord): Array<LimitUnit> => {
  const units: Array<LimitUnit> = []
  const budget = messageBudgetKey(record)
  const mailbox = mailboxKey(record.addressHash)
  for (const at of messageTimes(record)) units.push({ key: budget, at }, { key: mailbox, at })
  if (
    record.offerId !== undefined &&
    record.status === "verified" &&
    record.limitReset !== true &&
    record.finishedAt !== undefined
  ) {
    units.push({ key: redemptionKey(record.team, record.offerId, record.addressHash), at: record.finishedAt })
  }
  return units
}

/** The check a write broke, and the oldest unit under its key in its window (when a retry may pass). */
export interface LimitBreach {
  readonly check: LimitCheck
  readonly oldest: number
}

/**
 * The first check that `records` (every record of the address, as they
 * would be after the write) break, if any: the stores' own counting where
 * they keep their records in memory.
 */
export const breachOf = (
  records: Iterable<VerificationRecord>,
  checks: ReadonlyArray<LimitCheck>
): LimitBreach | undefined => {
  if (checks.length === 0) return undefined
  const counts = checks.map(() => 0)
  const oldest = checks.map(() => Number.POSITIVE_INFINITY)
  for (const record of records) {
    for (const unit of unitsOf(record)) {
      checks.forEach((check, i) => {
        if (unit.key !== check.key || unit.at < check.since) return
        counts[i]!++
        if (unit.at < oldest[i]!) oldest[i] = unit.at
      })
    }
  }
  const broken = checks.findIndex((check, i) => counts[i]! > check.max)
  return broken < 0 ? undefined : { check: checks[broken]!, oldest: oldest[broken]! }
}

/** How many units `records` hold under `key` from `since` on (a read, not a decision: e.g. an early refusal). */
export const unitsSince = (records: Iterable<VerificationRecord>, key: string, since: number): number => {
  let count = 0
  for (const record of records) for (const unit of unitsOf(record)) if (unit.key === key && unit.at >= since) count++
  return count
}
