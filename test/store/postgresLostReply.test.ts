/**
 * Writes whose reply is lost, against the real server through the loopback
 * fault proxy (`loseReplies`: the server commits, the connection drops
 * before its answer arrives): a verification inserted or replaced is
 * answered as written (not as an outage, which its retry would then find
 * no longer pending), a job submitted is answered as created and stored
 * once, a resource created as created (not refused on its retry as already
 * there), and an Idempotency-Key claimed is this request's (not a claim that
 * refuses its retry as still running for minutes).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import type { VerificationId, VerificationRecord } from "../../src/domain/Verification.ts"
import { IdempotencyStore } from "../../src/idempotency/IdempotencyStore.ts"
import * as IdempotencyPostgres from "../../src/idempotency/idempotencyPostgres.ts"
import { newJobFor } from "../../src/jobs/JobQueue.ts"
import * as JobQueuePostgres from "../../src/jobs/JobQueuePostgres.ts"
import type { StagedUpload } from "../../src/jobs/JobStore.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import * as ResourcePostgres from "../../src/resources/resourcePostgres.ts"
import { PgClient, postgresClientLayer, postgresStoreLayer } from "../../src/store/postgres.ts"
import * as ConfigVersion from "../../src/store/postgresConfigVersion.ts"
import { VerificationStore } from "../../src/verification/VerificationStore.ts"
import * as VerificationPostgres from "../../src/verification/verificationPostgres.ts"
import { describePostgres, testDatabase, testPostgresUrl } from "../postgresTesting.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"

const isCommitReply = (chunk: Buffer) => chunk.includes("COMMIT\0")

const record = (version: number, attempts: number): VerificationRecord => ({
  id: "ver_00000000000000000000000001" as VerificationId,
  version,
  team: "acme",
  offerId: "spring",
  targetGroupId: "uk",
  method: "code",
  locale: "en",
  status: "pending",
  domain: "ox.ac.uk",
  addressHash: "a".repeat(64),
  sealedAddress: "sealed",
  secretHash: "b".repeat(64),
  institution: { name: "University of Oxford", country: "GB", type: "university" },
  createdAt: 1_000,
  expiresAt: 601_000,
  attempts,
  maxAttempts: 5,
  sentAt: [],
  resendAvailableAt: 31_000,
  delivery: { state: "queued", attempts: 0 },
  notices: []
})

/** A database of the test's own, reached through a fault proxy; `direct` is its URL without the proxy. */
const throughProxy = Effect.gen(function* () {
  const database = yield* testDatabase
  const server = new URL(testPostgresUrl)
  const proxy: FaultProxy = yield* Effect.acquireRelease(
    Effect.promise(() => startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) })),
    (proxy) => Effect.promise(() => proxy.close())
  )
  return { proxy, url: proxy.url(database.url), direct: database.url }
})

const rowsOf = <A extends object>(url: string, statement: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe<A>(statement)).pipe(Effect.provide(postgresClientLayer(url)))

describePostgres("a PostgreSQL write whose reply is lost", () => {
  it.live("answers a verification inserted and replaced as written", () =>
    Effect.gen(function* () {
      const { proxy, url, direct } = yield* throughProxy
      const store = VerificationPostgres.layerPostgres.pipe(
        Layer.provide(postgresStoreLayer({ url, migrations: VerificationPostgres.migrations })),
        Layer.orDie
      )
      yield* Effect.gen(function* () {
        const verifications = yield* VerificationStore
        const lost = proxy.loseReplies(isCommitReply)
        yield* verifications.insert(record(0, 0))
        yield* Effect.promise(() => lost)
        const lostAgain = proxy.loseReplies(isCommitReply)
        expect(yield* verifications.replace(record(1, 1))).toBe(true)
        yield* Effect.promise(() => lostAgain)
        expect((yield* verifications.get(record(0, 0).id))?.attempts).toBe(1)
        // A replacement that did not happen is still refused.
        expect(yield* verifications.replace(record(1, 2))).toBe(false)
      }).pipe(Effect.provide(store))
      const rows = yield* rowsOf<{ version: number }>(direct, "select version from campusgate_verification_records")
      expect(rows).toEqual([{ version: 1 }])
    }).pipe(Effect.scoped)
  )

  it.live("answers a job submitted as created, stored once", () =>
    Effect.gen(function* () {
      const { proxy, url, direct } = yield* throughProxy
      const job = newJobFor(
        {
          team: "acme" as TeamId,
          target: { targetGroupId: "uk-students" } as never,
          total: 1,
          input: {} as StagedUpload
        },
        Date.now()
      )
      const outcome = yield* Effect.gen(function* () {
        const { state } = yield* JobQueuePostgres.makePostgresSharedStore(
          mkdtempSync(join(tmpdir(), "campusgate-lost-reply-"))
        )
        const lost = proxy.loseReplies(isCommitReply)
        const outcome = yield* state.submit(job, 100, "")
        yield* Effect.promise(() => lost)
        return outcome
      }).pipe(Effect.provide(postgresStoreLayer({ url, migrations: JobQueuePostgres.migrations }).pipe(Layer.orDie)))
      expect(outcome).toEqual({ outcome: "created" })
      const rows = yield* rowsOf<{ job_id: string }>(direct, "select job_id from campusgate_jobs")
      expect(rows).toEqual([{ job_id: job.jobId }])
    }).pipe(Effect.scoped)
  )

  it.live("answers an Idempotency-Key claimed, released and answered as done", () =>
    Effect.gen(function* () {
      const { proxy, url } = yield* throughProxy
      const store = IdempotencyPostgres.layerPostgres.pipe(
        Layer.provide(postgresStoreLayer({ url, migrations: IdempotencyPostgres.migrations })),
        Layer.orDie
      )
      yield* Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const now = Date.now()
        /** `effect` with the reply tagged `tag` (its statement's) lost. */
        const lose = <A, E>(tag: string, effect: Effect.Effect<A, E>) =>
          Effect.gen(function* () {
            const lost = proxy.loseReplies((chunk) => chunk.includes(`${tag}\0`))
            const result = yield* effect
            yield* Effect.promise(() => lost)
            return result
          })
        expect(yield* lose("SELECT 1", keys.claim("k", "request-a", now, now + 60_000))).toBeUndefined()
        yield* lose("DELETE 1", keys.release("k", "request-a", now + 60_000))
        // Released: the retry claims it.
        expect(yield* keys.claim("k", "request-a", now, now + 60_000)).toBeUndefined()
        yield* lose("INSERT 0 1", keys.answer("k", "request-a", { status: 201, headers: {}, body: "" }, now + 60_000))
        expect(yield* keys.claim("k", "request-a", now, now + 60_000)).toMatchObject({ state: "answered" })
      }).pipe(Effect.provide(store))
    }).pipe(Effect.scoped)
  )

  it.live("answers a resource created and removed as done", () =>
    Effect.gen(function* () {
      const { proxy, url, direct } = yield* throughProxy
      const store = ResourcePostgres.layerPostgres.pipe(
        Layer.provide(
          postgresStoreLayer({ url, migrations: [...ConfigVersion.migrations, ...ResourcePostgres.migrations] })
        ),
        Layer.orDie
      )
      yield* Effect.gen(function* () {
        const resources = yield* ResourceStore
        const lost = proxy.loseReplies(isCommitReply)
        expect(yield* resources.write("targetGroup", "g", "id: g\n", null)).toBe(true)
        yield* Effect.promise(() => lost)
        expect(yield* rowsOf<{ id: string }>(direct, "select id from campusgate_resources").pipe(Effect.orDie)).toEqual(
          [{ id: "g" }]
        )
        const lostAgain = proxy.loseReplies(isCommitReply)
        yield* resources.remove("targetGroup", "g")
        yield* Effect.promise(() => lostAgain)
        expect(yield* resources.read("targetGroup", "g")).toBeUndefined()
      }).pipe(Effect.provide(store))
    }).pipe(Effect.scoped)
  )
})
