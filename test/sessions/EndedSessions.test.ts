/**
 * The ended-sessions store's contract, against every adapter: a sign-out
 * counts at once in the process that made it and soon in every other
 * process sharing the store (two instances over one directory, one Redis
 * prefix or one PostgreSQL database play two daemons); a record lasts until its token's own end and
 * no longer, so the store cleans itself. Time is real (Redis expires keys
 * on its own clock, and another process's view is kept current in the
 * background): short records last tens of milliseconds.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ENDED_SESSIONS_FILE, EndedSessions, type EndedSessionsService } from "../../src/sessions/EndedSessions.ts"
import * as EndedSessionsPostgres from "../../src/sessions/endedSessionsPostgres.ts"
import * as EndedSessionsRedis from "../../src/sessions/endedSessionsRedis.ts"
import { PgClient, type PostgresConnection } from "../../src/store/postgres.ts"
import { type RedisConnection, Redis as RedisService } from "../../src/store/redis.ts"
import { dropListeners, timeUntil } from "../postgresListening.ts"
import { type TestDatabase, testPostgresLayer, whenPostgres } from "../postgresTesting.ts"
import { currentPrefix, testRedisLayer, whenRedis } from "../redisTesting.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** Two processes' views of one store. */
type Pair = Effect.Effect<
  readonly [EndedSessionsService, EndedSessionsService],
  unknown,
  RedisConnection | PostgresConnection | Scope.Scope
>
/** Where a pair's store lives: none (memory, files), a Redis prefix, or a PostgreSQL database of its own. */
type Backing = "none" | "redis" | "postgres"

const filesPair = (dir: string): Pair => Effect.sync(() => [EndedSessions.makeFiles(dir), EndedSessions.makeFiles(dir)])

/** The Redis adapter's service, its view kept current until the scope closes. */
const redisStore = Effect.map(Layer.build(EndedSessionsRedis.layerRedis), (context) =>
  Context.get(context, EndedSessions)
)

/** The PostgreSQL adapter's service, its view kept current until the scope closes. */
const postgresStore = Effect.map(Layer.build(EndedSessionsPostgres.layerPostgres), (context) =>
  Context.get(context, EndedSessions)
)

const adapters: ReadonlyArray<readonly [string, () => Pair, Backing]> = [
  [
    "memory",
    () =>
      Effect.sync(() => {
        const one = EndedSessions.makeMemory()
        return [one, one] as const
      }),
    "none"
  ],
  ["files", () => filesPair(mkdtempSync(join(tmpdir(), "campusgate-ended-"))), "none"],
  ...whenRedis("EndedSessions contract", [["redis", () => Effect.all([redisStore, redisStore]), "redis"] as const]),
  ...whenPostgres("EndedSessions contract", [
    ["postgres", () => Effect.all([postgresStore, postgresStore]), "postgres"] as const
  ])
]

/** Waits until `check` holds (within 3 s). */
const eventually = (check: () => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 3000
    while (!check()) {
      if (Date.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return true
  })

const startNow = Clock.currentTimeMillis
const SHORT = 40
const pastShort = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, SHORT + 20)))

describe.each(adapters)("EndedSessions contract (%s)", (_, pair, backing) => {
  const run = <A, E>(effect: Effect.Effect<A, E, RedisConnection | PostgresConnection | Scope.Scope>) =>
    backing === "redis"
      ? Effect.scoped(effect as Effect.Effect<A, E, RedisConnection | Scope.Scope>).pipe(
          Effect.provide(testRedisLayer())
        )
      : backing === "postgres"
        ? Effect.scoped(effect as Effect.Effect<A, E, PostgresConnection | Scope.Scope>).pipe(
            Effect.provide(testPostgresLayer(EndedSessionsPostgres.migrations))
          )
        : (effect as Effect.Effect<A, E, Scope.Scope>)

  it.live("counts a sign-out at once where it was made, and soon in every process sharing the store", () =>
    run(
      Effect.gen(function* () {
        const [here, there] = yield* pair()
        // Times count from when the stores are ready: opening one over a network takes a few round trips.
        const now = yield* startNow
        expect(here.hasEnded("nonce-a", now)).toBe(false)
        yield* here.end({ nonce: "nonce-a", until: now + HOUR })
        expect(here.hasEnded("nonce-a", now)).toBe(true)
        expect(yield* eventually(() => there.hasEnded("nonce-a", now))).toBe(true)
        expect(there.hasEnded("nonce-b", now)).toBe(false)
        expect(yield* there.list(now)).toEqual([{ nonce: "nonce-a", until: now + HOUR }])
      })
    )
  )

  it.live("keeps a record until its token's own end and no longer: the store cleans itself", () =>
    run(
      Effect.gen(function* () {
        const [here] = yield* pair()
        const now = yield* startNow
        yield* here.end({ nonce: "short", until: now + SHORT })
        yield* here.end({ nonce: "long", until: now + HOUR })
        expect(here.hasEnded("short", now + SHORT - 1)).toBe(true)
        expect(here.hasEnded("short", now + SHORT)).toBe(false)
        // Ending a session again never shortens its record.
        yield* here.end({ nonce: "long", until: now + SHORT })
        expect(here.hasEnded("long", now + MINUTE)).toBe(true)
        yield* pastShort
        yield* here.end({ nonce: "later", until: now + HOUR })
        const listed = yield* here.list(now)
        expect(listed.map((ended) => ended.nonce).sort()).toEqual(["later", "long"])
      })
    )
  )
})

describe("EndedSessions files", () => {
  it.live("keep the record readable by its owner only, without what is over", () =>
    Effect.gen(function* () {
      const now = yield* startNow
      const dir = mkdtempSync(join(tmpdir(), "campusgate-ended-"))
      const store = EndedSessions.makeFiles(dir)
      yield* store.end({ nonce: "over-soon", until: now + SHORT })
      yield* pastShort
      yield* store.end({ nonce: "kept", until: now + HOUR })
      const path = join(dir, ENDED_SESSIONS_FILE)
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: 1, ended: { kept: now + HOUR } })
    })
  )

  it("refuse every session while the record cannot be read (it cannot say a session goes on)", () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-ended-"))
    writeFileSync(join(dir, ENDED_SESSIONS_FILE), "not json")
    expect(EndedSessions.makeFiles(dir).hasEnded("any", Date.now())).toBe(true)
  })
})

describe.each(whenRedis("EndedSessions redis", [["redis"] as const]))("EndedSessions %s", () => {
  it.live("lets the set expire with its last session", () =>
    Effect.gen(function* () {
      const now = yield* startNow
      const store = yield* redisStore
      yield* store.end({ nonce: "one", until: now + HOUR })
      const redis = yield* RedisService
      const ttl = yield* redis.send<number>("PTTL", `${yield* currentPrefix}console:ended`)
      expect(ttl).toBeGreaterThan(HOUR - MINUTE)
      expect(ttl).toBeLessThanOrEqual(HOUR)
    }).pipe(Effect.scoped, Effect.provide(testRedisLayer()))
  )
})

describe.each(whenPostgres("EndedSessions postgres", [["postgres"] as const]))("EndedSessions %s", () => {
  const inDatabase = <A, E>(effect: Effect.Effect<A, E, PostgresConnection | TestDatabase | Scope.Scope>) =>
    effect.pipe(Effect.scoped, Effect.provide(testPostgresLayer(EndedSessionsPostgres.migrations)))

  it.live("reaches another daemon within a second, also after its listening connection was cut", () =>
    inDatabase(
      Effect.gen(function* () {
        const now = yield* startNow
        const [here, there] = yield* Effect.all([postgresStore, postgresStore])
        yield* here.end({ nonce: "announced", until: now + HOUR })
        expect(yield* timeUntil(() => there.hasEnded("announced", now), 1000)).toBeLessThan(1000)
        expect(yield* dropListeners).toBeGreaterThanOrEqual(2)
        yield* here.end({ nonce: "after-the-cut", until: now + HOUR })
        expect(yield* timeUntil(() => there.hasEnded("after-the-cut", now), 1000)).toBeLessThan(1000)
        // And listening again: the next sign-out is announced as before.
        yield* Effect.sleep("1200 millis")
        yield* here.end({ nonce: "listening-again", until: now + HOUR })
        expect(yield* timeUntil(() => there.hasEnded("listening-again", now), 1000)).toBeLessThan(1000)
      })
    )
  )

  it.live("keeps no row past its token's end once another session ends", () =>
    inDatabase(
      Effect.gen(function* () {
        const now = yield* startNow
        const store = yield* postgresStore
        yield* store.end({ nonce: "over-soon", until: now + SHORT })
        yield* pastShort
        yield* store.end({ nonce: "kept", until: now + HOUR })
        const sql = yield* PgClient.PgClient
        const rows = yield* sql<{ readonly nonce: string }>`select nonce from campusgate_sessions_ended`
        expect(rows.map((row) => row.nonce)).toEqual(["kept"])
      })
    )
  )
})
