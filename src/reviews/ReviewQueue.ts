/**
 * The review queue's side of the hot path: validations that met an unknown
 * domain (`UNKNOWN_INSTITUTION`, or `LIKELY_INSTITUTION` accepted) are
 * recorded synchronously into memory (`sighted`: no I/O, no effect) and
 * written to the `ReviewStore` every `flushIntervalMs` by a background
 * fiber, all teams in one write, and once more when the layer is released.
 *
 * The buffer is bounded as the store is: per team it keeps the top
 * `maxPerTeam` domains by count then score, pruning when it reaches twice
 * that (so a sighting costs a map update, and the sort is paid once per
 * `maxPerTeam` new domains), and counts what it let go as dropped. A failed
 * flush keeps its counts (merged back into the buffer, bounded again) and
 * is retried at the next tick; unlike the usage counts, a count sent twice
 * after a lost reply is tolerated: the queue orders domains for a human,
 * it bills nothing.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { Candidate } from "../domain/InstitutionReview.ts"
import type { ValidationResult } from "../domain/ValidationResult.ts"
import {
  addSighting,
  boundTeam,
  DEFAULT_MAX_DOMAINS_PER_TEAM,
  emptyTeamQueue,
  mergeTeam,
  oldestDayKept,
  type QueueBatch
} from "./queueEntries.ts"
import { ReviewStore, type ReviewStoreError } from "./ReviewStore.ts"

/** The default flush interval of the review queue. */
export const DEFAULT_REVIEW_FLUSH_MS = 1000

export interface ReviewQueueOptions {
  /** The most undecided domains a team's queue keeps (`reviews.maxDomainsPerTeam`; default 10000). */
  readonly maxPerTeam?: (() => number) | undefined
  /** How often the buffer is written to the store (default 1000 ms). */
  readonly flushIntervalMs?: number | undefined
}

/**
 * The in-memory buffer (synchronous, no effect): what was met since the
 * last flush, bounded per team.
 */
export class ReviewBuffer {
  #teams: QueueBatch = new Map()
  readonly #maxPerTeam: () => number
  readonly #now: () => number

  constructor(maxPerTeam: () => number, now: () => number) {
    this.#maxPerTeam = maxPerTeam
    this.#now = now
  }

  /** Records a result of `team`'s when it met an unknown domain; anything else costs one comparison. */
  sighted(team: string, result: ValidationResult): void {
    const code = result.reasonCode
    if (code !== "UNKNOWN_INSTITUTION" && code !== "LIKELY_INSTITUTION") return
    // The registrable domain the candidate judged: `students.x.org` and `x.org` are one entry.
    const candidate = result.validationDetails.domain.candidate
    if (candidate === undefined) return
    this.add(team, candidate.domain, code === "LIKELY_INSTITUTION", candidate, this.#now())
  }

  /** Records sightings counted elsewhere (a job's rows), now. */
  seen(team: string, sightings: ReadonlyArray<Sighting>): void {
    const at = this.#now()
    for (const s of sightings) this.add(team, s.candidate.domain, s.accepted, s.candidate, at, s.times)
  }

  /** Adds `times` sightings of one domain (what `sighted` does once it knows the domain). */
  add(team: string, domain: string, accepted: boolean, candidate: Candidate, at: number, times = 1): void {
    let queue = this.#teams.get(team)
    if (queue === undefined) {
      queue = emptyTeamQueue()
      this.#teams.set(team, queue)
    }
    addSighting(queue.entries, domain, accepted, candidate, at, times)
    const max = this.#maxPerTeam()
    if (queue.entries.size >= 2 * max) boundTeam(queue, max)
  }

  get isEmpty(): boolean {
    return this.#teams.size === 0
  }

  /** Domains held, all teams. */
  get size(): number {
    let size = 0
    for (const queue of this.#teams.values()) size += queue.entries.size
    return size
  }

  /** What was recorded since the last take, each team bounded; the buffer is empty after. */
  take(): QueueBatch {
    const teams = this.#teams
    this.#teams = new Map()
    const max = this.#maxPerTeam()
    for (const queue of teams.values()) boundTeam(queue, max)
    return teams
  }

  /** Puts back a batch the store did not take, before what came since. */
  restore(batch: QueueBatch): void {
    const oldest = oldestDayKept(this.#now())
    const max = this.#maxPerTeam()
    for (const [team, queue] of batch) {
      const current = this.#teams.get(team)
      if (current !== undefined) mergeTeam(queue, current, oldest)
      boundTeam(queue, max)
      this.#teams.set(team, queue)
    }
  }
}

/** Rows of one unknown domain met `times` in a batch (a job's rows share a verdict per host). */
export interface Sighting {
  readonly candidate: Candidate
  readonly accepted: boolean
  readonly times: number
}

export class ReviewQueue extends Context.Service<
  ReviewQueue,
  {
    /** Records a result of `team`'s when it met an unknown domain. Synchronous, never fails. */
    sighted(team: string, result: ValidationResult): void
    /** Records sightings counted elsewhere (a job's rows, on its thread). Synchronous, never fails. */
    seen(team: string, sightings: ReadonlyArray<Sighting>): void
    /** Writes the buffer to the store now; on failure it stays buffered. */
    readonly flush: Effect.Effect<void, ReviewStoreError>
  }
>()("campusgate/reviews/ReviewQueue") {
  static readonly layer = (options: ReviewQueueOptions = {}): Layer.Layer<ReviewQueue, never, ReviewStore> =>
    Layer.effect(
      ReviewQueue,
      Effect.gen(function* () {
        const store = yield* ReviewStore
        const clock = yield* Clock.clockWith(Effect.succeed)
        const now = () => clock.currentTimeMillisUnsafe()
        const maxPerTeam = options.maxPerTeam ?? (() => DEFAULT_MAX_DOMAINS_PER_TEAM)
        const buffer = new ReviewBuffer(maxPerTeam, now)
        const lock = yield* Semaphore.make(1)
        const flush = Effect.suspend(() => {
          if (buffer.isEmpty) return Effect.void
          const batch = buffer.take()
          return store
            .record(batch, { maxPerTeam: maxPerTeam(), now: now() })
            .pipe(Effect.tapError(() => Effect.sync(() => buffer.restore(batch))))
        }).pipe(Effect.uninterruptible, Semaphore.withPermit(lock), Effect.withSpan("ReviewQueue.flush"))
        const flushOrLog = (when: string) =>
          flush.pipe(
            Effect.catch((error) =>
              Effect.logWarning("review queue flush failed; the domains are kept buffered", {
                when,
                error: error.message
              })
            )
          )
        yield* Effect.addFinalizer(() => flushOrLog("at shutdown"))
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.andThen(Effect.sleep(options.flushIntervalMs ?? DEFAULT_REVIEW_FLUSH_MS), flushOrLog("on interval"))
          )
        )
        return ReviewQueue.of({
          sighted: (team, result) => buffer.sighted(team, result),
          seen: (team, sightings) => buffer.seen(team, sightings),
          flush
        })
      })
    )

  /** Records nothing (the library, a job thread). */
  static readonly none: ReviewQueue["Service"] = {
    sighted: () => undefined,
    seen: () => undefined,
    flush: Effect.void
  }

  static readonly layerNone: Layer.Layer<ReviewQueue> = Layer.succeed(ReviewQueue, ReviewQueue.none)
}
