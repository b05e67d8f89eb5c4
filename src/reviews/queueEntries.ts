/**
 * The review queue's data, as every adapter and the in-memory buffer keep
 * it: per team, per unknown domain, how often it was met (in all, accepted
 * as a likely institution, per UTC day for the last `DAYS_KEPT` days), when
 * first and last, and its last candidate score. Only domains, never an
 * address.
 *
 * The queue is bounded per team: past the bound the least met domains (then
 * the least likely) are let go and counted as dropped, so a flood of
 * distinct unknown domains costs a bounded amount of memory and storage.
 * A decided domain (approved or rejected) is never let go.
 */
import * as Schema from "effect/Schema"
import { Candidate } from "../domain/InstitutionReview.ts"

/** How many UTC days of counts an entry keeps. */
export const DAYS_KEPT = 30

/** The default of `reviews.maxDomainsPerTeam` in campusgate.yaml. */
export const DEFAULT_MAX_DOMAINS_PER_TEAM = 10_000

const DAY_MS = 86_400_000

/** One domain of a team's queue. Mutable: the buffer adds to it in place. */
export interface QueueEntry {
  readonly domain: string
  count: number
  accepted: number
  /** UTC day (`YYYY-MM-DD`) → count. */
  days: Record<string, number>
  /** Epoch milliseconds. */
  firstSeen: number
  lastSeen: number
  /** The candidate of the last sighting. */
  candidate: Candidate
}

/** An entry as files and Redis hold it (JSON). */
export const StoredEntry = Schema.Struct({
  domain: Schema.String,
  count: Schema.Number,
  accepted: Schema.Number,
  days: Schema.Record(Schema.String, Schema.Number),
  firstSeen: Schema.Number,
  lastSeen: Schema.Number,
  candidate: Candidate
})

/** A team's part of a flush, or of a store: its entries and the domains it let go. */
export interface TeamQueue {
  readonly entries: Map<string, QueueEntry>
  dropped: number
}

/** What a flush writes: per team, the counts since the last flush (added to the stored ones). */
export type QueueBatch = Map<string, TeamQueue>

/** A team's queue as read: its entries (any order) and how many domains it let go. */
export interface QueueView {
  readonly entries: ReadonlyArray<QueueEntry>
  readonly dropped: number
}

let cachedDayNumber = Number.NaN
let cachedDay = ""

/** The UTC day of an instant, `YYYY-MM-DD` (the last one computed is kept: sightings come in the same day). */
export const dayOf = (at: number): string => {
  const dayNumber = Math.floor(at / DAY_MS)
  if (dayNumber !== cachedDayNumber) {
    cachedDay = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10)
    cachedDayNumber = dayNumber
  }
  return cachedDay
}

/** The oldest day an entry keeps at `now`. */
export const oldestDayKept = (now: number): string => dayOf(now - (DAYS_KEPT - 1) * DAY_MS)

export const emptyTeamQueue = (): TeamQueue => ({ entries: new Map(), dropped: 0 })

export const copyEntry = (entry: QueueEntry): QueueEntry => ({ ...entry, days: { ...entry.days } })

/** Adds one sighting to `entries`. */
export const addSighting = (
  entries: Map<string, QueueEntry>,
  domain: string,
  accepted: boolean,
  candidate: Candidate,
  at: number,
  times = 1
): void => {
  const day = dayOf(at)
  const entry = entries.get(domain)
  if (entry === undefined) {
    entries.set(domain, {
      domain,
      count: times,
      accepted: accepted ? times : 0,
      days: { [day]: times },
      firstSeen: at,
      lastSeen: at,
      candidate
    })
    return
  }
  entry.count += times
  if (accepted) entry.accepted += times
  entry.days[day] = (entry.days[day] ?? 0) + times
  if (at < entry.firstSeen) entry.firstSeen = at
  if (at >= entry.lastSeen) {
    entry.lastSeen = at
    entry.candidate = candidate
  }
}

/** `delta` added to `into` (changed in place; `into` absent: a copy of `delta`), days older than `oldest` dropped. */
export const mergeEntry = (into: QueueEntry | undefined, delta: QueueEntry, oldest: string): QueueEntry => {
  const merged = into ?? { ...delta, count: 0, accepted: 0, days: {} }
  merged.count += delta.count
  merged.accepted += delta.accepted
  for (const [day, count] of Object.entries(delta.days)) merged.days[day] = (merged.days[day] ?? 0) + count
  if (delta.firstSeen < merged.firstSeen) merged.firstSeen = delta.firstSeen
  if (delta.lastSeen >= merged.lastSeen) {
    merged.lastSeen = delta.lastSeen
    merged.candidate = delta.candidate
  }
  for (const day of Object.keys(merged.days)) if (day < oldest) delete merged.days[day]
  return merged
}

/** Adds `batch` to `into` (both a team's queue), in place. */
export const mergeTeam = (into: TeamQueue, batch: TeamQueue, oldest: string): void => {
  for (const [domain, delta] of batch.entries)
    into.entries.set(domain, mergeEntry(into.entries.get(domain), delta, oldest))
  into.dropped += batch.dropped
}

/** The queue's order of importance: most met first, then most likely, then by name. */
export const byRank = (a: QueueEntry, b: QueueEntry): number =>
  b.count - a.count || b.candidate.score - a.candidate.score || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)

/**
 * Keeps at most `max` undecided entries of `queue` (the top by `byRank`),
 * deleting the rest and counting them in `dropped`; `decided` entries are
 * kept whatever their rank. Answers how many it let go.
 */
export const boundTeam = (
  queue: TeamQueue,
  max: number,
  decided: (domain: string) => boolean = () => false
): number => {
  if (queue.entries.size <= max) return 0
  const open: Array<QueueEntry> = []
  for (const entry of queue.entries.values()) if (!decided(entry.domain)) open.push(entry)
  if (open.length <= max) return 0
  open.sort(byRank)
  for (let i = max; i < open.length; i++) queue.entries.delete(open[i]!.domain)
  const gone = open.length - max
  queue.dropped += gone
  return gone
}
