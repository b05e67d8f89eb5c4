import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { JobQueue, newJobFor } from "../../src/jobs/JobQueue.ts"
import * as JobQueuePostgres from "../../src/jobs/JobQueuePostgres.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import { isStoreOutage } from "../../src/store/outage.ts"
import { postgresStoreLayer } from "../../src/store/postgres.ts"
import { holdingLock } from "../postgresLocks.ts"
import { describePostgres, testDatabase } from "../postgresTesting.ts"
import { startFaultProxy } from "../support/faultProxy.ts"
import { makeDataDir, postgresQueueLayer, request, resultLines } from "./jobTesting.ts"

const items = ["ada@mit.edu", "bob@gmail.com", "carl@ox.ac.uk", "dora@newcollege.edu"]

/** A connection to `url`, as one daemon opens it (migrating when it must). */
const connection = (url: string) =>
  postgresStoreLayer({ url, migrations: JobQueuePostgres.migrations }).pipe(Layer.orDie)

/** A daemon's queue on the database at `url` and its data directory (the job bytes are in the database), built in the test's scope. */
const daemon = (url: string, dataDir: string, onEnded?: (jobId: string) => void) =>
  Effect.map(
    Layer.build(
      postgresQueueLayer(connection(url), {
        dataDir,
        concurrency: 2,
        ...(onEnded === undefined ? {} : { onEnded: (job) => onEnded(job.jobId) })
      })
    ),
    (context) => ({ queue: Context.get(context, JobQueue), store: Context.get(context, JobStore) })
  )

describePostgres("the job queue shared through PostgreSQL", () => {
  it.live(
    "two daemons take every job once: 12 jobs submitted to both end once each, on either",
    () =>
      Effect.gen(function* () {
        const database = yield* testDatabase
        const dataDir = makeDataDir()
        const ended: Array<string> = []
        const one = yield* daemon(database.url, dataDir, (jobId) => ended.push(jobId))
        const two = yield* daemon(database.url, dataDir, (jobId) => ended.push(jobId))
        const jobs = yield* Effect.forEach(Array.from({ length: 12 }), (_, i) =>
          Effect.gen(function* () {
            const { queue } = i % 2 === 0 ? one : two
            return (yield* queue.submit(yield* request(items).pipe(Effect.provideService(JobStore, one.store)))).job
          })
        )
        const done = yield* Effect.forEach(jobs, (job) => two.queue.awaitFinished("acme", job.jobId), {
          concurrency: "unbounded"
        })
        expect(done.map((job) => job.status)).toEqual(jobs.map(() => "completed"))
        expect(ended.sort()).toEqual(jobs.map((job) => job.jobId).sort())
        const rows = yield* resultLines(jobs[5]!.jobId).pipe(Effect.provideService(JobStore, one.store))
        expect(rows.map((row) => row.email)).toEqual(items)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "a job whose daemon died is taken over once its lease lapses, and the dead daemon's writes are refused",
    () =>
      Effect.gen(function* () {
        const database = yield* testDatabase
        const dataDir = makeDataDir()
        // The daemon that dies: it takes the job under a lease it will never renew.
        const dead = yield* JobQueuePostgres.makePostgresSharedStore(dataDir).pipe(
          Effect.provide(yield* Layer.build(connection(database.url)))
        )
        const submitted = yield* request(items).pipe(Effect.provideService(JobStore, dead.store))
        const job = newJobFor(submitted, Date.now())
        yield* dead.bytes.adopt(job.jobId, submitted.input)
        expect(yield* dead.state.submit(job, 10, "")).toEqual({ outcome: "created" })
        expect((yield* dead.state.claim("dead-token", 200)).jobId).toBe(job.jobId)
        // Another daemon, with its own data directory, takes the job once the lease lapses, and runs it to the end.
        const alive = yield* daemon(database.url, makeDataDir())
        const done = yield* alive.queue.awaitFinished("acme", job.jobId)
        expect(done).toMatchObject({ status: "completed", progress: { processed: 4 } })
        expect(yield* dead.state.fencedWrite(job.jobId, "dead-token", { ...job, status: "failed" })).toBe(false)
        expect(yield* dead.state.renew(job.jobId, "dead-token", 10_000)).toBe("lost")
        expect((yield* alive.queue.get("acme", job.jobId)).status).toBe("completed")
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("a submit on one daemon wakes another's idle workers at once (LISTEN/NOTIFY), not at their next poll", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const dataDir = makeDataDir()
      const open = Effect.flatMap(Layer.build(connection(database.url)), (context) =>
        JobQueuePostgres.makePostgresSharedStore(dataDir).pipe(Effect.provide(context))
      )
      const [one, two] = [yield* open, yield* open]
      const woken = yield* Deferred.make<number>()
      yield* two.state.wakeOnSubmit(() => Deferred.doneUnsafe(woken, Exit.succeed(Date.now())))
      const submitted = yield* request(items).pipe(Effect.provideService(JobStore, one.store))
      const job = newJobFor(submitted, Date.now())
      yield* one.bytes.adopt(job.jobId, submitted.input)
      const sentAt = Date.now()
      yield* one.state.submit(job, 10, "")
      expect((yield* Deferred.await(woken)) - sentAt).toBeLessThan(500)
    }).pipe(Effect.scoped)
  )

  it.live("a submit the database does not answer in time fails as the store's outage, not a hang", () =>
    Effect.gen(function* () {
      const database = yield* testDatabase
      const { queue, store } = yield* daemon(database.url, makeDataDir())
      const submitted = yield* request(items).pipe(Effect.provideService(JobStore, store))
      yield* holdingLock(database.url, "campusgate_jobs")
      const error = yield* Effect.flip(queue.submit(submitted))
      expect(error._tag).toBe("JobStoreError")
      expect(isStoreOutage(error)).toBe(true)
    }).pipe(Effect.scoped)
  )

  it.live(
    "a database cut off mid-run stops the run at its checkpoint, not the job: it is resumed and ends with every row once",
    () =>
      Effect.gen(function* () {
        const database = yield* testDatabase
        const upstream = new URL(database.url)
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) })),
          (opened) => Effect.promise(() => opened.close())
        )
        const context = yield* Layer.build(
          postgresQueueLayer(connection(proxy.url(database.url)), { chunkItems: 2000, concurrency: 1 })
        )
        const [queue, store] = [Context.get(context, JobQueue), Context.get(context, JobStore)]
        const emails = Array.from({ length: 150_000 }, (_, i) => `user${i}@school${i % 40}.edu`)
        const { job } = yield* queue.submit(yield* request(emails).pipe(Effect.provideService(JobStore, store)))
        for (;;) {
          const now = yield* store.read(job.jobId)
          if ((now?.checkpoint.processed ?? 0) > 0) break
          yield* Effect.sleep("5 millis")
        }
        // The next flush meets the partition: more than a blip, less than the lease.
        proxy.partition()
        yield* Effect.sleep("2 seconds")
        proxy.heal()
        const done = yield* queue.awaitFinished("acme", job.jobId).pipe(Effect.retry({ times: 20 }))
        expect(done).toMatchObject({ status: "completed", progress: { processed: emails.length } })
        const rows = yield* resultLines(job.jobId).pipe(Effect.provideService(JobStore, store))
        expect(rows.map((row) => row.email)).toEqual(emails)
      }).pipe(Effect.scoped),
    60_000
  )
})
