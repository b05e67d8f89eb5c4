/**
 * The job queue shared by every daemon on one PostgreSQL database
 * (`jobQueueShared.ts` says what it promises): the queue's state of a job
 * in its row of `campusgate_jobs` (`JobStorePostgres.ts`, which keeps the
 * record there too), each step one statement or a short transaction:
 *
 * - a submit takes a transaction-scoped advisory lock, so that the count of
 *   waiting jobs (`maxQueued`) and the Idempotency-Key (a unique column)
 *   are decided one submit at a time across daemons, and announces the job
 *   with `NOTIFY` (delivered at commit) to every daemon's `LISTEN`; one
 *   whose reply was lost is answered as created when its row is there
 *   (`store/postgresLostReply.ts`), so it is not stored twice by a retry;
 * - a claim is one `UPDATE … WHERE job_id = (SELECT … FOR UPDATE SKIP
 *   LOCKED)`: of the jobs whose lease lapsed (first) and the waiting, the
 *   first no other claim is taking, leased with a fresh token until the
 *   server's clock plus the lease; so two daemons never take one job, and a
 *   dead daemon's job is taken over once its lease lapses;
 * - a renewal, a checkpoint and a job's end are `UPDATE … WHERE lease_token
 *   = $token`: fenced, so a daemon that lost its lease writes nothing;
 * - the sweeps of expired jobs and due callbacks take their rows with
 *   `FOR UPDATE SKIP LOCKED`, so each is taken by one daemon.
 *
 * Idle workers wait for a notification or poll (`jobQueueLease.ts`), so a
 * lost `LISTEN` costs at most the poll's second.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type { SqlError } from "effect/sql/SqlError"
import { PgClient, PostgresBreaker, type PostgresConnection, STATEMENT_TIMEOUT_MS } from "../store/postgres.ts"
import { settlingLostReply } from "../store/postgresLostReply.ts"
import { isFinished, type Job } from "./Job.ts"
import type { JobQueue } from "./JobQueue.ts"
import { type JobStore, JobStoreError } from "./JobStore.ts"
import { makePostgresJobStore, postgresStep, recordText } from "./JobStorePostgres.ts"
import { layerShared, type SharedJobQueueOptions } from "./jobQueueShared.ts"
import type { SharedJobStore, SharedQueueState } from "./jobQueueState.ts"
import { idempotencyField } from "./jobQueueState.ts"

export { migrations } from "./JobStorePostgres.ts"

/** The channel every submit notifies. */
const WAKE_CHANNEL = "campusgate_jobs_wake"
/** Any fixed number: the advisory lock submits take. */
const SUBMIT_LOCK = 0x63676a62
/** The statement's time on the server, in epoch milliseconds: the clock of every lease. */
const NOW = "(extract(epoch from now()) * 1000)"

/** `job`'s end of retention (epoch ms), as its final record says. */
const expiryOf = (job: Job): number => Date.parse(job.expiresAt!)

/** The queue's state in the PostgreSQL database in force, with the store of records and bytes beside it. */
export const makePostgresSharedStore = (
  dataDir: string
): Effect.Effect<SharedJobStore, never, PgClient.PgClient | PostgresBreaker> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { bounded } = yield* PostgresBreaker
    const step = postgresStep(bounded)
    const { store, bytes } = yield* makePostgresJobStore(dataDir)
    const callbackDue = (due: string) => (due === "" ? null : Number(due))
    const ids = (rows: ReadonlyArray<{ readonly job_id: string }>) => rows.map((row) => row.job_id)

    const state: SharedQueueState = {
      submit: (job, maxQueued, field) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`select pg_advisory_xact_lock(${SUBMIT_LOCK})`
              if (field !== "") {
                const [held] = yield* sql<{ readonly job_id: string }>`
                  select job_id from campusgate_jobs where idempotency_field = ${field}`
                if (held !== undefined) return { outcome: "existing" as const, holder: held.job_id }
              }
              const [waiting] = yield* sql<{ readonly n: unknown; readonly last: unknown }>`
                select count(*) as n, max(waiting_since) as last from campusgate_jobs where waiting_since is not null`
              if (Number(waiting?.n ?? 0) >= maxQueued) return { outcome: "full" as const }
              // After every job already waiting, whatever this daemon's clock says (one millisecond holds many submits).
              const last = waiting?.last === null || waiting?.last === undefined ? -1 : Number(waiting.last)
              yield* sql`
                insert into campusgate_jobs (job_id, record, idempotency_field, waiting_since)
                values (${job.jobId}, ${recordText(job)}::jsonb, ${field === "" ? null : field},
                  ${Math.max(Date.parse(job.createdAt), last + 1)})`
              yield* sql`select pg_notify(${WAKE_CHANNEL}, ${job.jobId})`
              return { outcome: "created" as const }
            })
          )
          .pipe(
            bounded,
            // A new job's id is this submit's own: its row found after a lost reply was stored by this submit.
            (submit) =>
              settlingLostReply(
                submit,
                sql`select 1 from campusgate_jobs where job_id = ${job.jobId}`.pipe(
                  Effect.map((rows) => rows.length > 0)
                ),
                { outcome: "created" as const }
              ),
            Effect.mapError((cause) => new JobStoreError({ operation: "create", jobId: job.jobId, cause }))
          ),
      freeKey: (field) =>
        sql`update campusgate_jobs set idempotency_field = null where idempotency_field = ${field}`.pipe(
          step("create"),
          Effect.asVoid
        ),
      cancel: (final, due) =>
        Effect.gen(function* () {
          const ended = yield* sql`
            update campusgate_jobs set record = ${recordText(final)}::jsonb, waiting_since = null,
              expires_at = ${expiryOf(final)}, callback_due = ${callbackDue(due)}
            where job_id = ${final.jobId} and waiting_since is not null
            returning 1`
          if (ended.length > 0) return "ended" as const
          const asked = yield* sql`
            update campusgate_jobs set cancel_asked = true
            where job_id = ${final.jobId} and lease_token is not null
            returning 1`
          return asked.length > 0 ? ("asked" as const) : ("finished" as const)
        }).pipe(step("write", final.jobId)),
      takeExpired: (now) =>
        sql<{ readonly job_id: string }>`
          update campusgate_jobs set expires_at = null
          where job_id in (
            select job_id from campusgate_jobs where expires_at <= ${now}
            order by expires_at limit 64 for update skip locked)
          returning job_id`.pipe(step("list"), Effect.map(ids)),
      drop: (job) =>
        sql`delete from campusgate_jobs where job_id = ${job.jobId}`.pipe(step("remove", job.jobId), Effect.asVoid),
      claim: (token, leaseMs) =>
        sql
          .unsafe<{ readonly job_id: string | null; readonly waiting: unknown }>(
            `with taken as (
              update campusgate_jobs set lease_token = $1, lease_until = ${NOW} + $2::float8, waiting_since = null
              where job_id = (
                select job_id from campusgate_jobs
                where waiting_since is not null or (lease_token is not null and lease_until < ${NOW})
                order by coalesce(waiting_since, 0), job_id
                limit 1 for update skip locked)
              returning job_id
            )
            select (select job_id from taken) as job_id,
              (select count(*) from campusgate_jobs
                where waiting_since is not null and job_id is distinct from (select job_id from taken)) as waiting`,
            [token, leaseMs]
          )
          .pipe(
            step("read"),
            Effect.map(([row]) => ({ jobId: row?.job_id ?? "", waiting: Number(row?.waiting ?? 0) }))
          ),
      renew: (jobId, token, leaseMs) =>
        sql
          .unsafe<{ readonly cancel_asked: boolean }>(
            `update campusgate_jobs set lease_until = ${NOW} + $3::float8
            where job_id = $1 and lease_token = $2 returning cancel_asked`,
            [jobId, token, leaseMs]
          )
          .pipe(
            step("write", jobId),
            Effect.map(([row]) => (row === undefined ? "lost" : row.cancel_asked ? "cancelAsked" : "renewed"))
          ),
      fencedWrite: (jobId, token, record) =>
        sql`update campusgate_jobs set record = ${recordText(record)}::jsonb
          where job_id = ${jobId} and lease_token = ${token} returning 1`.pipe(
          step("write", jobId),
          Effect.map((rows) => rows.length > 0)
        ),
      finish: (jobId, token, final, expiresAt, due) =>
        (final === undefined
          ? sql`delete from campusgate_jobs where job_id = ${jobId} and lease_token = ${token} returning 1`
          : sql`update campusgate_jobs set record = ${recordText(final)}::jsonb, lease_token = null,
              lease_until = null, cancel_asked = false, waiting_since = null, expires_at = ${expiresAt},
              callback_due = ${callbackDue(due)}
            where job_id = ${jobId} and lease_token = ${token} returning 1`
        ).pipe(
          step("write", jobId),
          Effect.map((rows) => rows.length > 0)
        ),
      updateFinished: (record) =>
        sql`update campusgate_jobs set record = ${recordText(record)}::jsonb where job_id = ${record.jobId}`.pipe(
          step("write", record.jobId),
          Effect.asVoid
        ),
      takeDueCallbacks: (now, next) =>
        sql<{ readonly job_id: string }>`
          update campusgate_jobs set callback_due = ${next}
          where job_id in (
            select job_id from campusgate_jobs where callback_due <= ${now}
            order by callback_due limit 64 for update skip locked)
          returning job_id`.pipe(step("list"), Effect.map(ids)),
      settleCallback: (jobId) =>
        sql`update campusgate_jobs set callback_due = null where job_id = ${jobId}`.pipe(
          step("write", jobId),
          Effect.asVoid
        ),
      wakeOnSubmit: (wake) =>
        Effect.gen(function* () {
          const listening = yield* Deferred.make<void>()
          yield* Effect.forkScoped(
            Effect.scoped(
              Effect.gen(function* () {
                const notifications = yield* sql.listen(WAKE_CHANNEL)
                Deferred.doneUnsafe(listening, Exit.void)
                for (;;) {
                  yield* Queue.take(notifications)
                  wake()
                }
              })
            ).pipe(
              Effect.tapError((error) =>
                Effect.logWarning("the job queue cannot listen for submits; polling meanwhile", {
                  error: String(error)
                })
              ),
              Effect.retry(Schedule.spaced("1 second")),
              Effect.ignore
            )
          )
          // Listening before the daemon serves, unless the database is slow to answer: then workers poll meanwhile.
          yield* Deferred.await(listening).pipe(Effect.timeout(STATEMENT_TIMEOUT_MS), Effect.ignore)
        })
    }
    return { store, state, bytes }
  })

/** The queue and its store, shared by every daemon on the PostgreSQL database in force. */
export const layerPostgres = (
  options: SharedJobQueueOptions
): Layer.Layer<JobQueue | JobStore, never, PostgresConnection> =>
  layerShared(options, makePostgresSharedStore(options.dataDir))

/**
 * Puts jobs of another store (a data directory being migrated) into the
 * shared queue as they are, as `jobQueueKeys.ts` does for Redis: finished
 * ones expire when they would have (a callback not yet delivered is tried
 * again), queued and running ones wait (running ones first, resumed at their
 * checkpoint). Their files are not copied here: a daemon running on the
 * data directory they are in puts them in the store at their first open
 * (`jobBytesShared.ts`), unless the caller wrote them through the store.
 */
export const importJobs = (jobs: ReadonlyArray<Job>): Effect.Effect<void, SqlError, PgClient.PgClient> =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    for (const job of jobs) {
      const field = job.idempotency === undefined ? null : idempotencyField(job.team, job.idempotency.key)
      const finished = isFinished(job.status)
      const waitingSince = finished ? null : job.status === "running" ? 0 : Date.parse(job.createdAt)
      const expiresAt = finished ? Date.parse(job.expiresAt ?? job.createdAt) : null
      const callbackDue = finished && job.callback !== undefined && !job.callback.delivered ? 0 : null
      // Over the row the job store's `create` may have made (a copy through the port, `cli/copy/`).
      yield* sql`insert into campusgate_jobs (job_id, record, idempotency_field, waiting_since, expires_at, callback_due)
        values (${job.jobId}, ${recordText(job)}::jsonb, ${field}, ${waitingSince}, ${expiresAt}, ${callbackDue})
        on conflict (job_id) do update set record = excluded.record, idempotency_field = excluded.idempotency_field,
          waiting_since = excluded.waiting_since, expires_at = excluded.expires_at, callback_due = excluded.callback_due`
    }
  })
