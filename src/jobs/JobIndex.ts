/**
 * The queue's in-memory view of its jobs: per job only what decisions need
 * (team, target, status, expiry, whether it waits for a worker) plus the
 * idempotency index (team, Idempotency-Key) → job. Records, inputs and
 * results stay in the store, so memory grows with the number of jobs kept, not
 * with their size. Rebuilt from the store at start.
 */
import type * as Deferred from "effect/Deferred"
import { jobVisible } from "../domain/visibility.ts"
import type { Job, JobId, JobIdempotency, JobStatus, JobTarget } from "./Job.ts"

export interface JobEntry {
  readonly jobId: JobId
  readonly team: string
  readonly target: JobTarget
  /** Milliseconds since the epoch. */
  readonly createdAt: number
  status: JobStatus
  /** Milliseconds since the epoch, once finished. */
  expiresAt: number | undefined
  readonly idempotency: JobIdempotency | undefined
  /** In the queue, not yet taken by a worker. */
  waiting: boolean
  /** A worker is processing it. */
  active: boolean
  cancelRequested: boolean
  /** Completed with the final record when the job finishes. */
  readonly finished: Deferred.Deferred<Job>
}

const idempotencyKey = (team: string, key: string): string => `${team}\n${key}`

/** Where a job stands in a list: its creation time and id. */
export interface JobPosition {
  readonly createdAt: number
  readonly jobId: string
}

/** Newest first; jobs created in the same millisecond by id. */
const newestFirst = (a: JobPosition, b: JobPosition): number =>
  b.createdAt - a.createdAt || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0)

/** The page of `items` (already filtered) after `after`, newest first: every queue lists jobs this way. */
export const pageOf = <A extends JobPosition>(
  items: ReadonlyArray<A>,
  after: JobPosition | undefined,
  limit: number
): { readonly entries: ReadonlyArray<A>; readonly more: boolean } => {
  const matching = after === undefined ? [...items] : items.filter((item) => newestFirst(item, after) > 0)
  matching.sort(newestFirst)
  return { entries: matching.slice(0, limit), more: matching.length > limit }
}

export class JobIndex {
  private readonly entries = new Map<string, JobEntry>()
  private readonly byIdempotencyKey = new Map<string, JobEntry>()
  private waitingCount = 0

  /** Jobs in the queue that no worker has taken yet. */
  get waiting(): number {
    return this.waitingCount
  }

  /** Jobs waiting for a worker, and jobs a worker is processing now. */
  occupancy(): { readonly waiting: number; readonly running: number } {
    let running = 0
    for (const entry of this.entries.values()) if (entry.active) running++
    return { waiting: this.waitingCount, running }
  }

  add(entry: JobEntry): void {
    this.entries.set(entry.jobId, entry)
    if (entry.idempotency !== undefined) {
      this.byIdempotencyKey.set(idempotencyKey(entry.team, entry.idempotency.key), entry)
    }
    if (entry.waiting) this.waitingCount++
  }

  /** The job when it exists, `team` may see it (`domain/visibility.ts`) and it has not expired at `now`; else undefined. */
  find(team: string, jobId: string, now: number): JobEntry | undefined {
    const entry = this.entries.get(jobId)
    if (entry === undefined || !jobVisible(entry, team)) return undefined
    if (entry.expiresAt !== undefined && entry.expiresAt <= now) return undefined
    return entry
  }

  /**
   * The team's jobs not expired at `now`, newest first (ties by id), with
   * `status` if given, after the job `after` names (the last of a page).
   */
  list(
    team: string,
    now: number,
    options: {
      readonly status?: JobStatus | undefined
      readonly after?: JobPosition | undefined
      readonly limit: number
    }
  ): { readonly entries: ReadonlyArray<JobEntry>; readonly more: boolean } {
    const { status } = options
    const matching: Array<JobEntry> = []
    for (const entry of this.entries.values()) {
      if (!jobVisible(entry, team) || (entry.expiresAt !== undefined && entry.expiresAt <= now)) continue
      if (status !== undefined && entry.status !== status) continue
      matching.push(entry)
    }
    return pageOf(matching, options.after, options.limit)
  }

  get(jobId: string): JobEntry | undefined {
    return this.entries.get(jobId)
  }

  byIdempotency(team: string, key: string): JobEntry | undefined {
    return this.byIdempotencyKey.get(idempotencyKey(team, key))
  }

  /** Marks the job taken from the queue (by a worker, or by a cancellation). */
  leaveQueue(entry: JobEntry): void {
    if (!entry.waiting) return
    entry.waiting = false
    this.waitingCount--
  }

  remove(entry: JobEntry): void {
    this.leaveQueue(entry)
    this.entries.delete(entry.jobId)
    if (entry.idempotency !== undefined) this.byIdempotencyKey.delete(idempotencyKey(entry.team, entry.idempotency.key))
  }

  /** Finished jobs whose retention ended at or before `now`. */
  expired(now: number): Array<JobEntry> {
    const found: Array<JobEntry> = []
    for (const entry of this.entries.values())
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) found.push(entry)
    return found
  }
}
