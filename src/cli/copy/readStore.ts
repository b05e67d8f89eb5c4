/**
 * The entries of an open store, read through its ports and handed one at a
 * time to `emit` (the other store's writer, or an archive): secrets and
 * signing keys first, then resources, keys, statistics, the review queue,
 * ended sessions, verifications a page at a time, and jobs with their bytes
 * in pieces — so nothing but one page of verifications or one piece of a
 * job is held at once. Only the data location's API keys are read: the
 * config directory's stay in git.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { isFinished } from "../../jobs/Job.ts"
import { JobStore } from "../../jobs/JobStore.ts"
import { ApiKeyStore } from "../../keys/ApiKeyStore.ts"
import { ResourceStore } from "../../resources/ResourceStore.ts"
import { ReviewStore } from "../../reviews/ReviewStore.ts"
import { EndedSessions } from "../../sessions/EndedSessions.ts"
import { toUsageDelta } from "../../stats/UsageState.ts"
import { UsageStore } from "../../stats/UsageStore.ts"
import { SigningKeyStore } from "../../verification/SigningKeyStore.ts"
import { VerificationStore } from "../../verification/VerificationStore.ts"
import type { StoreEntry } from "./storeEntries.ts"
import type { OpenedStore } from "./storeKinds.ts"

/** Which jobs travel: every one (a migration), the finished ones (`backup --jobs`) or none. */
export type JobsCopied = "all" | "finished" | "none"

/** Where entries go; a failure stops the copy. */
export type Emit = (entry: StoreEntry) => Effect.Effect<void, unknown>

/** A page of verifications read at a time. */
export const VERIFICATION_PAGE = 1_000

/** A piece of a job's bytes. */
export const JOB_PIECE = 1 << 20

/** The ports' services of `store`, for the scope. */
export const portsOf = (store: OpenedStore) =>
  Effect.map(
    Layer.build(
      Layer.mergeAll(
        store.adapters.resources,
        store.adapters.keys,
        store.adapters.usage,
        store.adapters.verifications,
        store.adapters.signingKeys,
        store.adapters.endedSessions,
        store.adapters.reviews,
        store.adapters.jobStore
      )
    ),
    (context) => ({
      resources: Context.get(context, ResourceStore),
      keys: Context.get(context, ApiKeyStore),
      usage: Context.get(context, UsageStore),
      verifications: Context.get(context, VerificationStore),
      signingKeys: Context.get(context, SigningKeyStore),
      endedSessions: Context.get(context, EndedSessions),
      reviews: Context.get(context, ReviewStore),
      jobs: Context.get(context, JobStore)
    })
  )

export type Ports = Effect.Success<ReturnType<typeof portsOf>>

/** Hands every entry of `store` to `emit`, in order. */
export const readStore = (store: OpenedStore, jobsCopied: JobsCopied, emit: Emit) =>
  Effect.scoped(
    Effect.gen(function* () {
      const ports = yield* portsOf(store)
      for (const [name, value] of yield* store.secrets) yield* emit({ t: "secret", name, value })
      const signingKeys = yield* ports.signingKeys.list()
      if (signingKeys.length > 0) yield* emit({ t: "signingKeys", keys: signingKeys })

      for (const kind of ["targetGroup", "offer"] as const) {
        for (const document of yield* ports.resources.list(kind))
          yield* emit({ t: "resource", kind, id: document.id, text: document.text })
      }
      for (const listed of yield* ports.keys.list) {
        if (listed.location === "data") yield* emit({ t: "apiKey", record: listed.record })
      }
      for (const offerId of yield* ports.usage.offerIds()) {
        const state = yield* ports.usage.get(offerId)
        if (state === undefined) continue
        const applied = Object.fromEntries(yield* ports.usage.applied(offerId))
        yield* emit({ t: "usage", offerId, delta: toUsageDelta(state), applied })
      }
      for (const team of yield* ports.reviews.teams()) {
        const queue = yield* ports.reviews.queue(team)
        yield* emit({ t: "reviewQueue", team, entries: queue.entries, dropped: queue.dropped })
      }
      const decisions = yield* ports.reviews.decisions()
      for (const approval of decisions.approvals)
        yield* emit({ t: "reviewDecision", decision: { kind: "approve", approval } })
      for (const rejection of decisions.rejections)
        yield* emit({ t: "reviewDecision", decision: { kind: "reject", rejection } })
      for (const ended of yield* ports.endedSessions.list(yield* Clock.currentTimeMillis))
        yield* emit({ t: "endedSession", nonce: ended.nonce, until: ended.until })

      yield* ports.verifications.eachPage(VERIFICATION_PAGE, (records) =>
        Effect.forEach(records, (record) => emit({ t: "verification", record }), { discard: true })
      )

      if (jobsCopied === "none") return
      for (const job of yield* ports.jobs.list()) {
        if (jobsCopied === "finished" && !isFinished(job.status)) continue
        yield* Effect.scoped(
          Effect.gen(function* () {
            const open = (file: "input" | "results") =>
              Effect.acquireRelease(ports.jobs.open(job.jobId, file), (bytes) => Effect.sync(() => bytes.close()))
            const input = yield* open("input")
            const results = yield* open("results")
            yield* emit({ t: "job", job, input: input.size(), results: results.size() })
            for (const [file, bytes] of [
              ["input", input],
              ["results", results]
            ] as const) {
              const size = bytes.size()
              for (let position = 0; position < size; ) {
                const piece = new Uint8Array(Math.min(JOB_PIECE, size - position))
                const read = yield* Effect.try(() => bytes.read(piece, 0, piece.length, position))
                if (read === 0) return yield* Effect.fail(new Error(`job ${job.jobId}'s ${file} ended early`))
                yield* emit({ t: "jobBytes", file, data: piece.subarray(0, read) })
                position += read
              }
            }
          })
        )
      }
    })
  )
