/**
 * Writes entries into an open store through its ports, in the order they
 * come, counting what was written (so a copy that stops can say what it
 * restored). Verifications are inserted several at a time; a job is staged,
 * its input written, then created, and its results written and flushed —
 * through the `JobStore` port only, whatever the kind keeps its bytes in —
 * and then queued as it was (`OpenedStore.queueJobs`).
 *
 * A copy goes into an empty store: `holdsData` names the first part that
 * holds records. Generated secrets and signing keys do not count — a daemon
 * started on an empty store makes its own — and are replaced by the
 * copied ones. With `keepExisting` (`restore --force`) a store holding data
 * is written too: what it holds with the same id (a resource, a key, an
 * offer's statistics, a team's queue, a verification, a job) stays as it
 * is, the rest is added — so a restore that stopped can be run again to
 * finish, never counting statistics twice: an offer's statistics are added
 * once per copy (`copySource`), on top of what daemons still running
 * counted meanwhile. The store identity (`store/storeIdentity.ts`) is
 * written last, so daemons that held off an emptied store go on only once
 * everything else is back.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { VerificationRecord } from "../../domain/Verification.ts"
import type { JobBytes, StagedUpload } from "../../jobs/JobStore.ts"
import { emptyTeamQueue, type QueueEntry } from "../../reviews/queueEntries.ts"
import { emptyUsageState, fromUsageDelta } from "../../stats/UsageState.ts"
import { STORE_IDENTITY_NAME } from "../../store/storeIdentity.ts"
import type { Ports } from "./readStore.ts"
import { type Counts, countEntry, noCounts, type StoreEntry } from "./storeEntries.ts"
import type { OpenedStore } from "./storeKinds.ts"

/** The first part of the store that holds records, by name; undefined when none does. */
export const holdsData = (ports: Ports) =>
  Effect.gen(function* () {
    for (const kind of ["targetGroup", "offer"] as const) {
      if ((yield* ports.resources.list(kind)).length > 0) return "API-created resources"
    }
    if ((yield* ports.keys.list).some((listed) => listed.location === "data")) return "API keys"
    if ((yield* ports.usage.offerIds()).length > 0) return "usage statistics"
    if ((yield* ports.reviews.teams()).length > 0) return "the review queue"
    const decisions = yield* ports.reviews.decisions()
    if (decisions.approvals.length + decisions.rejections.length > 0) return "review decisions"
    if ((yield* ports.endedSessions.list(yield* Clock.currentTimeMillis)).length > 0) return "ended console sessions"
    let verifications = false
    yield* ports.verifications.eachPage(1, () =>
      Effect.sync(() => {
        verifications = true
      })
    )
    if (verifications) return "verifications"
    if ((yield* ports.jobs.list()).length > 0) return "jobs"
    return undefined
  })

/** Verifications inserted at once. */
const VERIFICATION_BATCH = 1_000

interface JobInProgress {
  readonly entry: Extract<StoreEntry, { t: "job" }>
  readonly skipped: boolean
  upload: StagedUpload | undefined
  inputAt: number
  created: boolean
  results: { readonly bytes: JobBytes; at: number } | undefined
}

export interface StoreWriter {
  readonly put: (entry: StoreEntry) => Effect.Effect<void, unknown>
  /** Writes what is still buffered; answers what was written. */
  readonly end: Effect.Effect<Counts, unknown>
  /** What was written so far (a copy that stopped says so). */
  readonly written: () => Counts
}

/**
 * The source under which a copy adds an offer's statistics
 * (`UsageStore.applyOnce`): a copy run again (a restore finished with
 * `--force`) adds them once, and counts made meanwhile stay.
 */
export const copySource = (copyId: string): string => `copy:${copyId}`

/** A writer into `store`; `copyId` names the copy (an archive's id), so statistics are added once. */
export const storeWriter = (
  store: OpenedStore,
  ports: Ports,
  options: { readonly keepExisting: boolean; readonly copyId: string }
): StoreWriter => {
  const { keepExisting, copyId } = options
  const counts = noCounts()
  let verifications: Array<VerificationRecord> = []
  let job: JobInProgress | undefined
  let keyIds: Set<string> | undefined

  // Into an empty store or not, a record already held stays as it is (`insertAll`).
  const flushVerifications = Effect.suspend(() => {
    const batch = verifications
    verifications = []
    return batch.length === 0
      ? Effect.void
      : Effect.map(ports.verifications.insertAll(batch), (stored) => {
          counts.verifications += stored
        })
  })

  /** The store identity's secret, held back until the rest is written. */
  let identity: Extract<StoreEntry, { readonly t: "secret" }> | undefined

  const createJob = (current: JobInProgress) =>
    Effect.gen(function* () {
      if (current.created || current.skipped) return
      const { jobId } = current.entry.job
      if (current.inputAt !== current.entry.input)
        return yield* Effect.fail(
          new Error(`job ${jobId}'s input holds ${current.inputAt} of its ${current.entry.input} bytes`)
        )
      const upload = current.upload ?? (yield* ports.jobs.stage())
      current.upload = undefined
      yield* ports.jobs.create(current.entry.job, upload)
      current.created = true
    })

  const finishJob = Effect.gen(function* () {
    const current = job
    if (current === undefined) return
    job = undefined
    if (current.skipped) return
    yield* createJob(current)
    if (current.results !== undefined) {
      const { bytes, at } = current.results
      yield* Effect.tryPromise(async () => {
        bytes.truncate(at)
        await bytes.flush()
      }).pipe(Effect.ensuring(Effect.sync(() => bytes.close())))
    }
    const resultBytes = current.results?.at ?? 0
    if (resultBytes !== current.entry.results)
      return yield* Effect.fail(
        new Error(
          `job ${current.entry.job.jobId}'s results hold ${resultBytes} of their ${current.entry.results} bytes`
        )
      )
    yield* store.queueJobs([current.entry.job])
    counts.jobs++
  })

  const write = (entry: StoreEntry): Effect.Effect<void, unknown> =>
    Effect.gen(function* () {
      switch (entry.t) {
        case "secret":
          // The identity last: daemons held off an emptied store go on as soon as it is back, so what
          // they find then must be the whole restored state.
          if (entry.name === STORE_IDENTITY_NAME) {
            identity = entry
            return
          }
          yield* store.putSecret(entry.name, entry.value)
          return countEntry(counts, entry)
        case "signingKeys":
          yield* ports.signingKeys.update(() => entry.keys)
          return countEntry(counts, entry)
        case "resource":
          if (keepExisting && (yield* ports.resources.read(entry.kind, entry.id)) !== undefined) return
          yield* ports.resources.write(entry.kind, entry.id, entry.text)
          return countEntry(counts, entry)
        case "apiKey": {
          if (keepExisting) {
            keyIds ??= new Set((yield* ports.keys.list).map((listed) => listed.record.id))
            if (keyIds.has(entry.record.id)) return
          }
          yield* ports.keys.add(entry.record, false)
          return countEntry(counts, entry)
        }
        case "usage": {
          // Added once per copy, whatever the store counted meanwhile (daemons up during a restore).
          yield* ports.usage.applyOnce(entry.offerId, copySource(copyId), 1, fromUsageDelta(entry.delta))
          for (const [source, step] of Object.entries(entry.applied))
            yield* ports.usage.applyOnce(entry.offerId, source, step, emptyUsageState())
          return countEntry(counts, entry)
        }
        case "reviewQueue": {
          if (keepExisting) {
            const held = yield* ports.reviews.queue(entry.team)
            if (held.entries.length > 0 || held.dropped > 0) return
          }
          const queue = emptyTeamQueue()
          for (const stored of entry.entries)
            queue.entries.set(stored.domain, { ...stored, days: { ...stored.days } } as QueueEntry)
          queue.dropped = entry.dropped
          yield* ports.reviews.record(new Map([[entry.team, queue]]), {
            maxPerTeam: Number.MAX_SAFE_INTEGER,
            now: yield* Clock.currentTimeMillis
          })
          return countEntry(counts, entry)
        }
        case "reviewDecision":
          yield* ports.reviews.decide(entry.decision)
          return countEntry(counts, entry)
        case "endedSession":
          yield* ports.endedSessions.end({ nonce: entry.nonce, until: entry.until })
          return countEntry(counts, entry)
        case "verification":
          verifications.push(entry.record)
          if (verifications.length >= VERIFICATION_BATCH) yield* flushVerifications
          return
        case "job": {
          yield* finishJob
          const skipped = keepExisting && (yield* ports.jobs.read(entry.job.jobId)) !== undefined
          job = { entry, skipped, upload: undefined, inputAt: 0, created: false, results: undefined }
          if (!skipped) job.upload = yield* ports.jobs.stage()
          return
        }
        case "jobBytes": {
          const current = job
          if (current === undefined) return yield* Effect.fail(new Error("a job's bytes came before its job"))
          if (current.skipped) return
          const { data } = entry
          if (entry.file === "input") {
            if (current.created || current.upload === undefined)
              return yield* Effect.fail(new Error(`job ${current.entry.job.jobId}'s input came after its results`))
            const upload = current.upload
            yield* Effect.try(() => upload.bytes.write(data, 0, data.length, current.inputAt))
            current.inputAt += data.length
            return
          }
          yield* createJob(current)
          if (current.results === undefined) {
            // Written over, not emptied first: a kind that keeps job files in the data directory may
            // be handed the very file being read (files → redis on one volume); cut to length at the end.
            current.results = { bytes: yield* ports.jobs.open(current.entry.job.jobId, "results"), at: 0 }
          }
          const results = current.results
          yield* Effect.try(() => results.bytes.write(data, 0, data.length, results.at))
          results.at += data.length
          return
        }
      }
    })

  return {
    put: (entry) => (entry.t === "verification" ? write(entry) : Effect.andThen(flushVerifications, write(entry))),
    end: Effect.gen(function* () {
      yield* flushVerifications
      yield* finishJob
      if (identity !== undefined) {
        yield* store.putSecret(identity.name, identity.value)
        countEntry(counts, identity)
      }
      return { ...counts }
    }),
    written: () => ({ ...counts })
  }
}
