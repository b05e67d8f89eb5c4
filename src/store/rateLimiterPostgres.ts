/**
 * Effect's `RateLimiterStore` in PostgreSQL, shared by every daemon as
 * `RateLimiter.layerStoreRedis` is: the counters of the fixed window
 * (`campusgate_rate_limit_windows`), the token buckets
 * (`campusgate_rate_limit_buckets`) and the adaptive states
 * (`campusgate_rate_limit_adaptive`), each a row per key, timed by the
 * database server's clock (milliseconds since the epoch, the statement's
 * start) so that daemons with skewed clocks still count one window.
 *
 * A take of the fixed window or of a bucket is one `INSERT … ON CONFLICT DO
 * UPDATE`: the row is locked while the new state is computed from the one
 * it holds, so takes of one key from every daemon follow one another and a
 * limit of 10 admits exactly 10 of 11 concurrent requests. The semantics are
 * those of `RateLimiter.layerStoreMemory`: a counter restarts once its
 * expiry has passed, each token taken pushes the expiry by the refill rate,
 * and a take over the limit changes nothing and reports the count it would
 * have reached (kept in `attempted`, as RETURNING sees only the new row);
 * a bucket refills by whole refill intervals up to its limit (the step is
 * `campusgate_rate_limit_bucket_take`, a function of the migration). The
 * adaptive state (unused by the daemon, part of the interface) changes in a
 * transaction holding its row's lock. Rows past their expiry count as
 * absent and are swept now and then.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { type Migration, PgClient, PostgresBreaker, type PostgresConnection } from "./postgres.ts"
import { type AdaptiveState, adaptiveConsumeStep, adaptiveFeedbackStep } from "./rateLimiterAdaptive.ts"

export const migrations: ReadonlyArray<Migration> = [
  {
    id: "ratelimit-1",
    statements: [
      `create table campusgate_rate_limit_windows (
        key text primary key,
        count double precision not null,
        expires_at double precision not null,
        attempted double precision not null
      )`,
      "create index campusgate_rate_limit_windows_expires on campusgate_rate_limit_windows (expires_at)",
      `create table campusgate_rate_limit_buckets (
        key text primary key,
        tokens double precision not null,
        last_refill double precision not null,
        expires_at double precision not null,
        remaining double precision not null,
        elapsed double precision not null
      )`,
      "create index campusgate_rate_limit_buckets_expires on campusgate_rate_limit_buckets (expires_at)",
      `create table campusgate_rate_limit_adaptive (
        key text primary key,
        state jsonb,
        expires_at double precision not null
      )`,
      // A bucket's take, from its stored state (null or expired: full); as
      // the Redis store's script, with the bucket expiring once it would be
      // full again.
      `create function campusgate_rate_limit_bucket_take(
        stored double precision, stored_last_refill double precision, stored_expires_at double precision,
        now double precision, tokens double precision, lim double precision, refill double precision,
        overflow boolean,
        out tokens_after double precision, out last_refill_after double precision,
        out expires_after double precision, out remaining double precision, out elapsed double precision
      ) language plpgsql immutable as $$
      declare
        current double precision;
        last_refill double precision;
        refills double precision;
      begin
        if stored is null or stored_expires_at <= now then
          current := lim;
          last_refill := now;
        else
          current := stored;
          last_refill := stored_last_refill;
        end if;
        refills := floor((now - last_refill) / refill);
        if refills > 0 then
          current := least(current + refills, lim);
          last_refill := last_refill + refills * refill;
        end if;
        if current >= lim then last_refill := now; end if;
        remaining := current - tokens;
        tokens_after := case when remaining >= 0 or overflow then remaining else current end;
        elapsed := greatest(0, now - last_refill);
        last_refill_after := last_refill;
        expires_after := now + greatest(1, ceil(ceil(lim - tokens_after) * refill - elapsed));
      end
      $$`
    ]
  }
]

/** The statement's time on the server, in epoch milliseconds. */
const NOW = "(extract(epoch from now()) * 1000)"

/** One take in this many also sweeps the rows past their expiry. */
const SWEEP_EVERY = 500
/** A row is swept this long after its expiry (an adaptive state's grace is a minute). */
const SWEEP_AFTER_MS = 120_000

const storeError = (operation: string) => (cause: unknown) =>
  new RateLimiter.RateLimiterError({
    reason: new RateLimiter.RateLimitStoreError({
      message: `Failed to execute ${operation} rate limiting command`,
      cause
    })
  })

export const makeStorePostgres = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const { bounded } = yield* PostgresBreaker
  let takes = 0
  const sweep = () =>
    ++takes % SWEEP_EVERY === 0
      ? Effect.ignore(
          bounded(
            Effect.all([
              sql.unsafe(`delete from campusgate_rate_limit_windows where expires_at < ${NOW} - ${SWEEP_AFTER_MS}`),
              sql.unsafe(`delete from campusgate_rate_limit_buckets where expires_at < ${NOW} - ${SWEEP_AFTER_MS}`),
              sql.unsafe(`delete from campusgate_rate_limit_adaptive where expires_at < ${NOW} - ${SWEEP_AFTER_MS}`)
            ])
          )
        )
      : Effect.void

  const fixedWindow: RateLimiter.RateLimiterStore["Service"]["fixedWindow"] = (options) => {
    const limit = options.limit === undefined || options.limit === 0 ? null : options.limit
    return bounded(
      sql.unsafe<{ readonly attempted: number; readonly ttl: number }>(
        `with take as (select $2::float8 as tokens, $3::float8 as refill, $4::float8 as lim, ${NOW} as now)
        insert into campusgate_rate_limit_windows as w (key, count, expires_at, attempted)
        select $1, case when take.tokens > take.lim then 0 else take.tokens end,
          take.now + case when take.tokens > take.lim then 0 else take.refill * take.tokens end, take.tokens
        from take
        on conflict (key) do update set (count, expires_at, attempted) = (
          select case when fresh.base + take.tokens > take.lim then fresh.base else fresh.base + take.tokens end,
            fresh.expiry + case when fresh.base + take.tokens > take.lim then 0 else take.refill * take.tokens end,
            fresh.base + take.tokens
          from take, lateral (
            select case when w.expires_at <= take.now then 0 else w.count end as base,
              case when w.expires_at <= take.now then take.now else w.expires_at end as expiry
          ) as fresh
        )
        returning attempted, expires_at - ${NOW} as ttl`,
        [options.key, options.tokens, Duration.toMillis(options.refillRate), limit]
      )
    ).pipe(
      Effect.tap(sweep),
      Effect.map(([row]) => [Number(row!.attempted), Number(row!.ttl)] as const),
      Effect.mapError(storeError("fixedWindow"))
    )
  }

  const tokenBucket: RateLimiter.RateLimiterStore["Service"]["tokenBucket"] = (options) =>
    bounded(
      sql.unsafe<{ readonly remaining: number; readonly elapsed: number }>(
        `insert into campusgate_rate_limit_buckets as b (key, tokens, last_refill, expires_at, remaining, elapsed)
        select $1, t.* from campusgate_rate_limit_bucket_take(null, null, null, ${NOW}, $2, $3, $4, $5) as t
        on conflict (key) do update set (tokens, last_refill, expires_at, remaining, elapsed) = (
          select t.* from campusgate_rate_limit_bucket_take(b.tokens, b.last_refill, b.expires_at, ${NOW}, $2, $3, $4, $5) as t
        )
        returning remaining, elapsed`,
        [options.key, options.tokens, options.limit, Duration.toMillis(options.refillRate), options.allowOverflow]
      )
    ).pipe(
      Effect.tap(sweep),
      Effect.map(([row]) => [Number(row!.remaining), Number(row!.elapsed)] as const),
      Effect.mapError(storeError("tokenBucket"))
    )

  /**
   * Runs `step` over the key's adaptive state (undefined: none, or expired)
   * under its row's lock, and stores what it leaves (undefined: nothing to store).
   */
  const withAdaptiveState = <A>(
    key: string,
    create: boolean,
    step: (state: AdaptiveState | undefined, now: number) => readonly [A, AdaptiveState | undefined]
  ) =>
    sql.withTransaction(
      Effect.gen(function* () {
        if (create) {
          yield* sql`insert into campusgate_rate_limit_adaptive (key, state, expires_at)
            values (${key}, null, 0) on conflict (key) do nothing`
        }
        const [row] = yield* sql.unsafe<{
          readonly state: AdaptiveState | null
          readonly expires_at: number
          readonly now: number
        }>(`select state, expires_at, ${NOW} as now from campusgate_rate_limit_adaptive where key = $1 for update`, [
          key
        ])
        const now = Number(row?.now ?? Date.now())
        const held = row?.state === null || row === undefined || Number(row.expires_at) <= now ? undefined : row.state
        const [answer, next] = step(held === undefined ? undefined : { ...held }, now)
        if (next !== undefined) {
          yield* sql`update campusgate_rate_limit_adaptive set state = ${JSON.stringify(next)}::jsonb,
            expires_at = ${next.expiresAt}::float8 where key = ${key}`
        }
        return answer
      })
    )

  return RateLimiter.RateLimiterStore.of({
    fixedWindow,
    tokenBucket,
    adaptiveConsume: (options) =>
      bounded(withAdaptiveState(options.key, false, (state, now) => adaptiveConsumeStep(state, now, options))).pipe(
        Effect.mapError(storeError("adaptiveConsume"))
      ),
    adaptiveFeedback: (options) =>
      options.status !== 429 || options.retryAfter === undefined
        ? Effect.void
        : bounded(withAdaptiveState(options.key, true, (state, now) => adaptiveFeedbackStep(state, now, options))).pipe(
            Effect.mapError(storeError("adaptiveFeedback"))
          )
  })
})

/** The rate-limit counters in the shared PostgreSQL database. */
export const layerPostgres: Layer.Layer<RateLimiter.RateLimiterStore, never, PostgresConnection> = Layer.effect(
  RateLimiter.RateLimiterStore,
  makeStorePostgres
)
