/**
 * The job store's PostgreSQL adapter: records in `campusgate_jobs` (a row
 * per job, the record as JSON beside the shared queue's state of the job,
 * `JobQueuePostgres.ts`), so every daemon reads the same state, and each
 * job's input and results in the database too, as chunks of at most
 * `CHUNK_BYTES` (`campusgate_job_chunks`, `bytea`, lz4-compressed where
 * the server supports it) with each file's length and generation
 * (`campusgate_job_files`), worked on through a copy in this daemon's data
 * directory (`jobBytesShared.ts`). Daemons need no shared volume.
 *
 * `create` puts the whole input in the database before the row exists, so
 * a job that has a record has its whole input; the chunks of a job whose
 * row never came, and local copies and uploads left behind, are swept once
 * old enough. A write of results fenced by a lease (the runner's) checks
 * the lease token under the job row's lock in the same transaction.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "../store/postgres.ts"
import { Job, type JobId } from "./Job.ts"
import { type JobFile, JobStore, JobStoreError } from "./JobStore.ts"
import { type ChunkBackend, type FileState, makeSharedBytes } from "./jobBytesShared.ts"
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
  },
  {
    id: "jobs-2",
    statements: [
      // A job file's length and generation (`jobBytesShared.ts`), and when its bytes were first written (epoch ms).
      `create table campusgate_job_files (
        job_id text not null,
        file text not null,
        length bigint not null,
        generation integer not null,
        written_at bigint not null,
        primary key (job_id, file)
      )`,
      // Chunk n of a job file: its bytes [n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES).
      `create table campusgate_job_chunks (
        job_id text not null,
        file text not null,
        chunk integer not null,
        bytes bytea not null,
        primary key (job_id, file, chunk)
      )`,
      // lz4 where the server has it (PostgreSQL 14+, built with lz4): faster than the default pglz.
      `do $$ begin
        if current_setting('server_version_num')::int >= 140000 then
          execute 'alter table campusgate_job_chunks alter column bytes set compression lz4';
        end if;
      exception when others then null;
      end $$`
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

/** The job bytes in the database in force: chunks and file states, writes fenced by a lease when given a token. */
const chunkBackend = (sql: PgClient.PgClient, bounded: PostgresBreaker["Service"]["bounded"]): ChunkBackend => ({
  states: (jobId) =>
    Effect.map(
      sql<{ readonly file: JobFile; readonly length: unknown; readonly generation: unknown }>`
        select file, length, generation from campusgate_job_files where job_id = ${jobId}`,
      (rows) => {
        const states: Partial<Record<JobFile, FileState>> = {}
        for (const row of rows) states[row.file] = { length: Number(row.length), generation: Number(row.generation) }
        return states
      }
    ).pipe(bounded),
  read: (jobId, file, from, count) =>
    Effect.map(
      sql<{ readonly chunk: number; readonly bytes: Uint8Array }>`
        select chunk, bytes from campusgate_job_chunks
        where job_id = ${jobId} and file = ${file} and chunk >= ${from} order by chunk limit ${count}`,
      (rows) => rows.map((row) => ({ index: row.chunk, bytes: row.bytes }))
    ).pipe(bounded),
  write: (jobId, file, token, write) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          if (token !== undefined) {
            const held = yield* sql`select 1 from campusgate_jobs
              where job_id = ${jobId} and lease_token = ${token} for update`
            if (held.length === 0) return false
          }
          if (write.dropFrom !== undefined) {
            yield* sql`delete from campusgate_job_chunks
              where job_id = ${jobId} and file = ${file} and chunk >= ${write.dropFrom}`
          }
          for (const chunk of write.chunks) {
            yield* sql`insert into campusgate_job_chunks (job_id, file, chunk, bytes)
              values (${jobId}, ${file}, ${chunk.index}, ${Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength)})
              on conflict (job_id, file, chunk) do update set bytes = excluded.bytes`
          }
          yield* sql`insert into campusgate_job_files (job_id, file, length, generation, written_at)
            values (${jobId}, ${file}, ${write.state.length}, ${write.state.generation}, ${Date.now()})
            on conflict (job_id, file) do update set length = excluded.length, generation = excluded.generation`
          return true
        })
      )
      .pipe(bounded),
  remove: (jobId) =>
    sql
      .withTransaction(
        Effect.andThen(
          sql`delete from campusgate_job_chunks where job_id = ${jobId}`,
          sql`delete from campusgate_job_files where job_id = ${jobId}`
        )
      )
      .pipe(bounded, Effect.asVoid),
  orphans: (before) =>
    Effect.map(
      sql<{ readonly job_id: string }>`
        select distinct f.job_id from campusgate_job_files f
        where f.written_at < ${before}
          and not exists (select 1 from campusgate_jobs j where j.job_id = f.job_id)`,
      (rows) => rows.map((row) => row.job_id)
    ).pipe(bounded),
  hasRecord: (jobId) =>
    Effect.map(sql`select 1 from campusgate_jobs where job_id = ${jobId}`, (rows) => rows.length > 0).pipe(bounded)
})

/** The store over the connection in force, and its shared bytes (the queue opens them under a lease). */
export const makePostgresJobStore = (dataDir: string) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const step = postgresStep(bounded)
    const bytes = yield* makeSharedBytes(dataDir, chunkBackend(sql, bounded))
    const upsert = (job: Job, operation: JobStoreError["operation"]) =>
      sql`insert into campusgate_jobs (job_id, record) values (${job.jobId}, ${recordText(job)}::jsonb)
        on conflict (job_id) do update set record = excluded.record`.pipe(step(operation, job.jobId), Effect.asVoid)
    const store = JobStore.of({
      stage: bytes.stage,
      discard: bytes.discard,
      create: (job, upload) =>
        Effect.andThen(
          bytes.adopt(job.jobId, upload),
          upsert(job, "create").pipe(Effect.tapError(() => Effect.ignore(bytes.remove(job.jobId))))
        ),
      open: (jobId, file) => bytes.open(jobId, file),
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
          bytes.remove(jobId)
        )
    })
    return { store, bytes }
  })

/** The store alone (records and bytes in PostgreSQL, a copy of the bytes under `dataDir`). */
export const layerPostgres = (dataDir: string): Layer.Layer<JobStore, never, PostgresConnection> =>
  Layer.effect(
    JobStore,
    Effect.map(makePostgresJobStore(dataDir), ({ store }) => store)
  )
