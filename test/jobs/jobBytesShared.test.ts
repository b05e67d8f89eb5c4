/**
 * The job bytes of the shared stores (Redis, PostgreSQL) live in the store:
 * daemons with their own data directories read, resume and download each
 * other's jobs; a writer whose lease was taken writes nothing; removal and
 * the sweep leave no chunk and no local copy behind.
 */
import { randomBytes } from "node:crypto"
import { existsSync, utimesSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { type JobId, newJob } from "../../src/jobs/Job.ts"
import * as JobQueuePostgres from "../../src/jobs/JobQueuePostgres.ts"
import * as JobQueueRedis from "../../src/jobs/JobQueueRedis.ts"
import { type JobBytes, JobStore } from "../../src/jobs/JobStore.ts"
import { jobFiles, jobsDirectory } from "../../src/jobs/JobStoreFiles.ts"
import type { SharedJobStore } from "../../src/jobs/jobQueueState.ts"
import { PgClient, postgresStoreLayer } from "../../src/store/postgres.ts"
import { RedisKeyPrefix } from "../../src/store/redis.ts"
import { testDatabase, whenPostgres } from "../postgresTesting.ts"
import { testRedisLayer, whenRedis } from "../redisTesting.ts"
import { bytesText, makeDataDir, staged } from "./jobTesting.ts"

/** One shared store: a daemon's view of it over a data directory, and what the store holds of a job. */
interface SharedKind {
  readonly daemon: (dataDir: string) => Effect.Effect<SharedJobStore>
  /** Whether the store holds any bytes of the job. */
  readonly holdsBytes: (jobId: string) => Effect.Effect<boolean>
  /** Makes the job's bytes look written two hours ago (a create a crash cut short long ago). */
  readonly age: (jobId: string) => Effect.Effect<void>
}

const kinds: ReadonlyArray<readonly [string, Effect.Effect<SharedKind, never, Scope.Scope>]> = [
  ...whenRedis("shared job bytes", [
    [
      "redis",
      Effect.gen(function* () {
        const context = yield* Layer.build(testRedisLayer())
        const redis = Context.get(context, Redis.Redis)
        const prefix = Context.get(context, RedisKeyPrefix)
        return {
          daemon: (dataDir: string) => Effect.provide(JobQueueRedis.makeRedisSharedStore(dataDir), context),
          holdsBytes: (jobId: string) =>
            Effect.map(Effect.orDie(redis.send<number>("EXISTS", `${prefix}jobs:bytes:${jobId}`)), (n) => n === 1),
          age: (jobId: string) =>
            Effect.orDie(
              Effect.asVoid(redis.send("ZADD", `${prefix}jobs:bytes-written`, String(Date.now() - 7_200_000), jobId))
            )
        } satisfies SharedKind
      })
    ] as const
  ]),
  ...whenPostgres("shared job bytes", [
    [
      "postgres",
      Effect.gen(function* () {
        const database = yield* Effect.orDie(testDatabase)
        const context = yield* Layer.build(
          postgresStoreLayer({ url: database.url, migrations: JobQueuePostgres.migrations }).pipe(Layer.orDie)
        )
        const sql = Context.get(context, PgClient.PgClient)
        return {
          daemon: (dataDir: string) => Effect.provide(JobQueuePostgres.makePostgresSharedStore(dataDir), context),
          holdsBytes: (jobId: string) =>
            Effect.map(
              Effect.orDie(sql`select 1 from campusgate_job_chunks where job_id = ${jobId}
                union all select 1 from campusgate_job_files where job_id = ${jobId}`),
              (rows) => rows.length > 0
            ),
          age: (jobId: string) =>
            Effect.orDie(
              Effect.asVoid(
                sql`update campusgate_job_files set written_at = ${Date.now() - 7_200_000} where job_id = ${jobId}`
              )
            )
        } satisfies SharedKind
      })
    ] as const
  ])
]

const freshJob = () =>
  newJob({
    jobId: `job_${randomBytes(16).toString("hex")}` as JobId,
    team: "acme" as never,
    target: { targetGroupId: "edu" as never },
    total: 1,
    createdAt: new Date().toISOString()
  })

/** `count` distinct rows, several chunks' worth when `count` is large. */
const rowsText = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `{"email":"user${from + i}@school.edu","isValid":true}\n`).join("")

const withFile = <A>(daemon: SharedJobStore, jobId: JobId, file: "input" | "results", use: (bytes: JobBytes) => A) =>
  Effect.acquireUseRelease(
    daemon.store.open(jobId, file),
    (bytes) => Effect.sync(() => use(bytes)),
    (bytes) => Effect.sync(() => bytes.close())
  )

const flushed = (bytes: JobBytes) => Effect.promise(() => bytes.flush())

describe.each(kinds)("job bytes in the shared store (%s)", (_, kind) => {
  it.live(
    "a job created by one daemon is read, resumed and downloaded by others, each with its own data directory",
    () =>
      Effect.gen(function* () {
        const shared = yield* kind
        const [one, two, three] = [
          yield* shared.daemon(makeDataDir()),
          yield* shared.daemon(makeDataDir()),
          yield* shared.daemon(makeDataDir())
        ]
        const job = freshJob()
        const input = rowsText(0, 40_000) // about 1.9 MB: two chunks
        yield* one.store.create(job, yield* staged(input).pipe(Effect.provideService(JobStore, one.store)))
        // The first daemon writes 3 MB of results and flushes them.
        const first = Buffer.from(rowsText(0, 60_000))
        const writer = yield* one.store.open(job.jobId, "results")
        writer.write(first, 0, first.length, 0)
        yield* flushed(writer)
        // A reader kept open here while another daemon cuts the results goes on reading what it opened.
        const reader = yield* one.store.open(job.jobId, "results")
        writer.close()
        expect(yield* withFile(two, job.jobId, "input", bytesText)).toBe(input)
        expect(yield* withFile(two, job.jobId, "results", bytesText)).toBe(first.toString())
        // The second resumes at a checkpoint mid-chunk and goes on.
        const checkpoint = Buffer.from(rowsText(0, 25_000)).length
        const more = Buffer.from(rowsText(100_000, 10))
        const resumed = yield* two.store.open(job.jobId, "results")
        resumed.truncate(checkpoint)
        resumed.write(more, 0, more.length, checkpoint)
        yield* flushed(resumed)
        resumed.close()
        const expected = rowsText(0, 25_000) + rowsText(100_000, 10)
        expect(yield* withFile(one, job.jobId, "results", bytesText)).toBe(expected)
        expect(yield* withFile(three, job.jobId, "results", bytesText)).toBe(expected)
        expect(bytesText(reader)).toBe(first.toString())
        reader.close()
        // Appends without a cut reach a copy made before them by the tail alone.
        const tail = Buffer.from(rowsText(200_000, 5))
        const appended = yield* three.store.open(job.jobId, "results")
        appended.write(tail, 0, tail.length, appended.size())
        yield* flushed(appended)
        appended.close()
        expect(yield* withFile(one, job.jobId, "results", bytesText)).toBe(expected + tail.toString())
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("a writer whose lease was taken writes nothing: the next holder's results are as it left them", () =>
    Effect.gen(function* () {
      const shared = yield* kind
      const [one, two] = [yield* shared.daemon(makeDataDir()), yield* shared.daemon(makeDataDir())]
      const job = freshJob()
      yield* one.bytes.adopt(job.jobId, yield* staged(rowsText(0, 3)).pipe(Effect.provideService(JobStore, one.store)))
      expect(yield* one.state.submit(job, 10, "")).toEqual({ outcome: "created" })
      expect((yield* one.state.claim("first", 100)).jobId).toBe(job.jobId)
      const stale = yield* one.bytes.open(job.jobId, "results", "first")
      const rows = Buffer.from(rowsText(0, 2))
      stale.write(rows, 0, rows.length, 0)
      yield* flushed(stale)
      // The lease lapses (a long pause of this daemon) and another daemon takes the job.
      yield* Effect.sleep("300 millis")
      expect((yield* two.state.claim("second", 10_000)).jobId).toBe(job.jobId)
      const late = Buffer.from(rowsText(50, 2))
      stale.write(late, 0, late.length, rows.length)
      expect(yield* Effect.flip(Effect.tryPromise(() => stale.flush()))).toBeDefined()
      stale.close()
      const holder = yield* two.bytes.open(job.jobId, "results", "second")
      expect(bytesText(holder)).toBe(rows.toString())
      const next = Buffer.from(rowsText(2, 1))
      holder.write(next, 0, next.length, rows.length)
      yield* flushed(holder)
      holder.close()
      expect(yield* withFile(one, job.jobId, "results", bytesText)).toBe(rowsText(0, 3))
    }).pipe(Effect.scoped)
  )

  it.live(
    "a daemon that takes a job again under a new lease writes on a copy of its own: the old run's writes go nowhere",
    () =>
      Effect.gen(function* () {
        const shared = yield* kind
        const one = yield* shared.daemon(makeDataDir())
        const job = freshJob()
        yield* one.bytes.adopt(
          job.jobId,
          yield* staged(rowsText(0, 3)).pipe(Effect.provideService(JobStore, one.store))
        )
        yield* one.state.submit(job, 10, "")
        expect((yield* one.state.claim("old", 100)).jobId).toBe(job.jobId)
        const old = yield* one.bytes.open(job.jobId, "results", "old")
        const rows = Buffer.from(rowsText(0, 1))
        old.write(rows, 0, rows.length, 0)
        yield* flushed(old)
        yield* Effect.sleep("300 millis")
        expect((yield* one.state.claim("new", 10_000)).jobId).toBe(job.jobId)
        // The old run, still open, goes on appending; the new one starts from what the store holds.
        const late = Buffer.from(rowsText(50, 1))
        old.write(late, 0, late.length, rows.length)
        const fresh = yield* one.bytes.open(job.jobId, "results", "new")
        expect(bytesText(fresh)).toBe(rows.toString())
        expect(yield* Effect.flip(Effect.tryPromise(() => old.flush()))).toBeDefined()
        old.close()
        const next = Buffer.from(rowsText(1, 2))
        fresh.write(next, 0, next.length, rows.length)
        yield* flushed(fresh)
        fresh.close()
        const other = yield* shared.daemon(makeDataDir())
        expect(yield* withFile(other, job.jobId, "results", bytesText)).toBe(rowsText(0, 3))
      }).pipe(Effect.scoped)
  )

  it.live("a job whose files are only in a data directory (the shared volume of before) is put in the store", () =>
    Effect.gen(function* () {
      const shared = yield* kind
      const [oldDir, newDir] = [makeDataDir(), makeDataDir()]
      const [one, two] = [yield* shared.daemon(oldDir), yield* shared.daemon(newDir)]
      const job = freshJob()
      // As the store kept a job before: its record in the store, its files in the data directory.
      const files = jobFiles(oldDir)
      const upload = files.stage()
      const input = Buffer.from(rowsText(0, 4))
      upload.bytes.write(input, 0, input.length, 0)
      files.adopt(job.jobId, upload)
      const results = files.open(job.jobId, "results")
      const rows = Buffer.from(rowsText(0, 2))
      results.write(rows, 0, rows.length, 0)
      results.close()
      yield* one.store.write(job)
      expect(yield* withFile(one, job.jobId, "input", bytesText)).toBe(input.toString())
      expect(yield* withFile(two, job.jobId, "input", bytesText)).toBe(input.toString())
      expect(yield* withFile(two, job.jobId, "results", bytesText)).toBe(rows.toString())
      // Files without a record are no job: nothing is put in the store.
      const stray = freshJob()
      const strayUpload = files.stage()
      files.adopt(stray.jobId, strayUpload)
      expect((yield* Effect.flip(one.store.open(stray.jobId, "input"))).operation).toBe("open")
      expect(yield* shared.holdsBytes(stray.jobId)).toBe(false)
    }).pipe(Effect.scoped)
  )

  it.live("remove deletes the chunks and the local copy; the sweep takes what a crash or another daemon left", () =>
    Effect.gen(function* () {
      const shared = yield* kind
      const [oneDir, twoDir] = [makeDataDir(), makeDataDir()]
      const [one, two] = [yield* shared.daemon(oneDir), yield* shared.daemon(twoDir)]
      const job = freshJob()
      yield* one.store.create(job, yield* staged(rowsText(0, 10)).pipe(Effect.provideService(JobStore, one.store)))
      expect(yield* withFile(two, job.jobId, "input", bytesText)).toBe(rowsText(0, 10))
      expect(yield* shared.holdsBytes(job.jobId)).toBe(true)
      yield* one.store.remove(job.jobId)
      expect(yield* shared.holdsBytes(job.jobId)).toBe(false)
      expect(existsSync(join(jobsDirectory(oneDir), job.jobId))).toBe(false)
      expect((yield* Effect.flip(two.store.open(job.jobId, "input"))).operation).toBe("open")
      // The other daemon's copy of the removed job goes at its sweep, once old.
      const copy = join(jobsDirectory(twoDir), job.jobId)
      expect(existsSync(copy)).toBe(true)
      const longAgo = new Date(Date.now() - 7_200_000)
      utimesSync(copy, longAgo, longAgo)
      // Bytes whose record never came (a crash in a create) go too, once old.
      const orphan = freshJob()
      yield* one.bytes.adopt(orphan.jobId, yield* staged("x\n").pipe(Effect.provideService(JobStore, one.store)))
      const young = freshJob()
      yield* one.bytes.adopt(young.jobId, yield* staged("y\n").pipe(Effect.provideService(JobStore, one.store)))
      yield* shared.age(orphan.jobId)
      yield* two.bytes.sweep
      expect(existsSync(copy)).toBe(false)
      expect(yield* shared.holdsBytes(orphan.jobId)).toBe(false)
      expect(yield* shared.holdsBytes(young.jobId)).toBe(true)
    }).pipe(Effect.scoped)
  )
})
