/**
 * Where the institution review queue persists: a port with a memory adapter
 * (tests, the library), a file adapter (the data directory: `reviews/`) and
 * a Redis adapter (`reviewRedis.ts`) and a PostgreSQL adapter
 * (`reviewPostgres.ts`) shared by several daemons. It keeps,
 * per team, the queue of unknown domains (`queueEntries.ts`: counts, days,
 * candidate; bounded to the top `maxPerTeam`, the rest counted as dropped)
 * and the decisions: approvals (`ReviewedInstitution`) and rejections, at
 * most one decision per team and domain — a decision replaces the other.
 * Only domains, never an address.
 *
 * `record` adds one flush's counts for every team in one write; a failure
 * is a `ReviewStoreError` (503 where a request waits on it) and, for the
 * memory and file adapters, changed nothing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { ReviewedInstitution, ReviewRejection } from "../domain/InstitutionReview.ts"
import { markOutage } from "../store/outage.ts"
import {
  boundTeam,
  copyEntry,
  emptyTeamQueue,
  mergeTeam,
  oldestDayKept,
  type QueueBatch,
  type QueueEntry,
  type QueueView
} from "./queueEntries.ts"
import { readReviewFiles, type StoredReviews, writeDecisionsFile, writeQueueFile } from "./reviewFiles.ts"

export class ReviewStoreError extends Schema.TaggedError<ReviewStoreError>()("ReviewStoreError", {
  operation: Schema.Literals(["load", "record", "read", "decide"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The review store failed to ${this.operation}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(ReviewStoreError)

/** An operator's decision on a domain: an approval or a rejection. */
export type ReviewDecision =
  | { readonly kind: "approve"; readonly approval: ReviewedInstitution }
  | { readonly kind: "reject"; readonly rejection: ReviewRejection }

/** Every decision (of one team, or of all). */
export interface ReviewDecisions {
  readonly approvals: ReadonlyArray<ReviewedInstitution>
  readonly rejections: ReadonlyArray<ReviewRejection>
}

export interface RecordOptions {
  /** The most undecided domains a team's queue keeps (`reviews.maxDomainsPerTeam`). */
  readonly maxPerTeam: number
  /** Epoch milliseconds: days older than `DAYS_KEPT` before it are let go. */
  readonly now: number
}

export class ReviewStore extends Context.Service<
  ReviewStore,
  {
    /** Adds one flush's counts, every team at once, and bounds each team's queue. */
    record(batch: QueueBatch, options: RecordOptions): Effect.Effect<void, ReviewStoreError>
    /** A team's queue: its entries (any order, copies) and how many domains it let go. */
    queue(team: string): Effect.Effect<QueueView, ReviewStoreError>
    /** The teams with a queue (entries or domains let go), in no order: what a backup copies. */
    teams(): Effect.Effect<ReadonlyArray<string>, ReviewStoreError>
    /** One entry of a team's queue; undefined when the domain is not in it. */
    entry(team: string, domain: string): Effect.Effect<QueueEntry | undefined, ReviewStoreError>
    /** Stores a decision, replacing the team's other decision on the domain, atomically. */
    decide(decision: ReviewDecision): Effect.Effect<void, ReviewStoreError>
    /** The decisions of `team` (absent: of every team), in team and domain order. */
    decisions(team?: string): Effect.Effect<ReviewDecisions, ReviewStoreError>
  }
>()("campusgate/reviews/ReviewStore") {
  /** In this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<ReviewStore> = Layer.effect(
    ReviewStore,
    Effect.suspend(() => storeOver(emptyStored(), undefined))
  )

  /** `<dataDir>/reviews/queue.json` and `decisions.json`, loaded at start, each replaced whole and durably on a write. */
  static readonly makeFiles = (dataDir: string): Effect.Effect<ReviewStore["Service"], ReviewStoreError> =>
    Effect.flatMap(
      Effect.try({
        try: () => readReviewFiles(dataDir),
        catch: (cause) => new ReviewStoreError({ operation: "load", cause })
      }),
      (stored) =>
        storeOver(stored, {
          queue: (teams) => writeQueueFile(dataDir, teams),
          decisions: (stored) => writeDecisionsFile(dataDir, stored)
        })
    )

  /** `makeFiles` as a layer. */
  static readonly layerFiles = (dataDir: string): Layer.Layer<ReviewStore, ReviewStoreError> =>
    Layer.effect(
      ReviewStore,
      Effect.suspend(() => ReviewStore.makeFiles(dataDir))
    )
}

const emptyStored = (): StoredReviews => ({ teams: new Map(), approvals: new Map(), rejections: new Map() })

/** The key of a decision: its team and domain. */
export const decisionKey = (team: string, domain: string): string => `${team}/${domain}`

const sortedDecisions = <A extends { readonly team: string; readonly domain: string }>(
  all: ReadonlyMap<string, A>,
  team: string | undefined
): Array<A> =>
  [...all.values()]
    .filter((decision) => team === undefined || decision.team === team)
    .sort((a, b) => (decisionKey(a.team, a.domain) < decisionKey(b.team, b.domain) ? -1 : 1))

/**
 * The memory and file adapters' one logic: the state in memory, each change
 * computed on a copy, persisted by `persist` (none: kept in memory only)
 * and only then installed, one change at a time.
 */
const storeOver = Effect.fnUntraced(function* (
  stored: StoredReviews,
  persist:
    | {
        readonly queue: (teams: StoredReviews["teams"]) => Promise<void>
        readonly decisions: (stored: StoredReviews) => Promise<void>
      }
    | undefined
) {
  const lock = yield* Semaphore.make(1)
  let state = stored
  /** Writes a change with `write` (no `persist`: nothing to write), and only then installs the state `next` makes. */
  const persistThenInstall = (
    operation: "record" | "decide",
    write: (to: NonNullable<typeof persist>) => Promise<void>,
    next: () => StoredReviews
  ) => {
    const install = Effect.sync(() => {
      state = next()
    })
    return persist === undefined
      ? install
      : Effect.tryPromise({
          try: () => write(persist),
          catch: (cause) => new ReviewStoreError({ operation, cause })
        }).pipe(Effect.andThen(install))
  }
  const isDecided = (team: string) => (domain: string) => {
    const key = decisionKey(team, domain)
    return state.approvals.has(key) || state.rejections.has(key)
  }
  const record = (batch: QueueBatch, options: RecordOptions) =>
    Effect.suspend(() => {
      const oldest = oldestDayKept(options.now)
      const teams = new Map(state.teams)
      for (const [team, delta] of batch) {
        const current = state.teams.get(team)
        const next = emptyTeamQueue()
        if (current !== undefined) {
          for (const [domain, entry] of current.entries) next.entries.set(domain, entry)
          next.dropped = current.dropped
        }
        // Entries the batch changes are copied before they change: a failed write leaves the state as it was.
        for (const domain of delta.entries.keys()) {
          const entry = next.entries.get(domain)
          if (entry !== undefined) next.entries.set(domain, copyEntry(entry))
        }
        mergeTeam(next, delta, oldest)
        boundTeam(next, options.maxPerTeam, isDecided(team))
        teams.set(team, next)
      }
      return persistThenInstall(
        "record",
        (to) => to.queue(teams),
        () => ({ ...state, teams })
      )
    }).pipe(Effect.uninterruptible, Semaphore.withPermit(lock))

  const decide = (decision: ReviewDecision) =>
    Effect.suspend(() => {
      const { team, domain } = decision.kind === "approve" ? decision.approval : decision.rejection
      const key = decisionKey(team, domain)
      const approvals = new Map(state.approvals)
      const rejections = new Map(state.rejections)
      if (decision.kind === "approve") {
        approvals.set(key, decision.approval)
        rejections.delete(key)
      } else {
        rejections.set(key, decision.rejection)
        approvals.delete(key)
      }
      const next: StoredReviews = { ...state, approvals, rejections }
      return persistThenInstall(
        "decide",
        (to) => to.decisions(next),
        () => next
      )
    }).pipe(Effect.uninterruptible, Semaphore.withPermit(lock))

  return ReviewStore.of({
    record,
    queue: (team) =>
      Effect.sync(() => {
        const queue = state.teams.get(team)
        return queue === undefined
          ? { entries: [], dropped: 0 }
          : { entries: [...queue.entries.values()].map(copyEntry), dropped: queue.dropped }
      }),
    teams: () => Effect.sync(() => [...state.teams.keys()]),
    entry: (team, domain) =>
      Effect.sync(() => {
        const entry = state.teams.get(team)?.entries.get(domain)
        return entry === undefined ? undefined : copyEntry(entry)
      }),
    decide,
    decisions: (team) =>
      Effect.sync(() => ({
        approvals: sortedDecisions(state.approvals, team),
        rejections: sortedDecisions(state.rejections, team)
      }))
  })
})
