/**
 * The job store's PostgreSQL adapter: records in `campusgate_jobs` (a row
 * per job, the record as JSON beside the shared queue's state of the job,
 * `JobQueuePostgres.ts`), so every daemon reads the same state, and each
 * job's input and results as files under `<dataDir>/jobs/` (`jobFiles`),
 * on a volume every daemon mounts, for the reasons `JobStoreRedis.ts` gives.
 *
 * `create` moves the upload into place before the row exists, so a job
 * that has a record has its whole input; directories whose row never came
 * and uploads left behind are swept once old enough (`sweepOrphanFiles`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { Job, type JobId } from "./Job.ts"
import { JobStore, JobStoreError } from "./JobStore.ts"
import { jobFiles, sweepOrphanFiles } from "./JobStoreFiles.ts"
import { fileStep, readableJobs } from "./jobQueueState.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "jobs-1",
    statements: [
      // A job's record, and its state in the shared queue: waiting (since
      // when; 0 puts it first), leased (token and deadline, the server's
      // clock in ms), a cancellation asked of its lease holder, the end of
      // its retention and when its callback is due again (epoch ms).
      `create table campusgate_jobs (
        job_id text primary key,
        record jsonb not null,
        idempotency_field text unique,
        waiting_since bigint,
        lease_token text,
        lease_until double precision,
        cancel_asked boolean not null default false,
        expires_at bigint,
        callback_due bigint
      )`,
      "create index campusgate_jobs_waiting on campusgate_jobs (waiting_since, job_id) where waiting_since is not null",
      "create index campusgate_jobs_leased on campusgate_jobs (lease_until) where lease_token is not null",
      "create index campusgate_jobs_expiring on campusgate_jobs (expires_at) where expires_at is not null",
      "create index campusgate_jobs_callbacks on campusgate_jobs (callback_due) where callback_due is not null"
    ]
  }
]

const encodeJob = Schema.encodeSync(Job)
export const decodeJob = Schema.decodeUnknownSync(Job)

/** A job's record as the statements take it (JSON text, cast to jsonb). */
export const recordText = (job: Job): string => JSON.stringify(encodeJob(job))

/** A PostgreSQL step of a job-store operation, bounded by the connection's breaker, its error a `JobStoreError` naming the operation (and job). */
export const postgresStep =
  (bounded: PostgresBreaker["Service"]["bounded"]) =>
  (operation: JobStoreError["operation"], jobId?: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.mapError(
      bounded(effect),
      (cause) => new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause })
    )

/** The store over the connection in force, and the file operations the shared queue needs besides. */
export const makePostgresJobStore = (dataDir: string) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const step = postgresStep((yield* PostgresBreaker).bounded)
    const files = jobFiles(dataDir)
    const upsert = (job: Job, operation: JobStoreError["operation"]) =>
      sql`insert into campusgate_jobs (job_id, record) values (${job.jobId}, ${recordText(job)}::jsonb)
        on conflict (job_id) do update set record = excluded.record`.pipe(step(operation, job.jobId), Effect.asVoid)
    const sweepFiles = sweepOrphanFiles(files, (jobId) =>
      sql`select 1 from campusgate_jobs where job_id = ${jobId}`.pipe(
        step("list", jobId),
        Effect.map((rows) => rows.length > 0)
      )
    )
    const store = JobStore.of({
      stage: () => fileStep("stage", undefined, files.stage),
      discard: (upload) => Effect.sync(() => files.discard(upload)).pipe(Effect.ignore),
      create: (job, upload) =>
        Effect.andThen(
          fileStep("create", job.jobId, () => files.adopt(job.jobId, upload)),
          upsert(job, "create")
        ),
      open: (jobId, file) => fileStep("open", jobId, () => files.open(jobId, file)),
      read: (jobId: JobId) =>
        sql<{ readonly record: unknown }>`select record from campusgate_jobs where job_id = ${jobId}`.pipe(
          step("read", jobId),
          Effect.flatMap(([row]) =>
            row === undefined ? Effect.succeed(undefined) : fileStep("read", jobId, () => decodeJob(row.record))
          )
        ),
      write: (job) => upsert(job, "write"),
      list: () =>
        sql<{ readonly job_id: string; readonly record: unknown }>`select job_id, record from campusgate_jobs`.pipe(
          step("list"),
          Effect.flatMap((rows) =>
            readableJobs(
              rows.map((row) => [row.job_id, row.record] as const),
              decodeJob
            )
          )
        ),
      remove: (jobId) =>
        Effect.andThen(
          sql`delete from campusgate_jobs where job_id = ${jobId}`.pipe(step("remove", jobId)),
          fileStep("remove", jobId, () => files.remove(jobId))
        )
    })
    return { store, files, sweepFiles }
  })

/** The store alone (records in PostgreSQL, bytes under `dataDir`). */
export const layerPostgres = (dataDir: string): Layer.Layer<JobStore, never, PostgresConnection> =>
  Layer.effect(
    JobStore,
    Effect.map(makePostgresJobStore(dataDir), ({ store }) => store)
  )
