/**
 * The store identity's rules (`judgeIdentity`), and the check and watch
 * over a real Redis under a prefix of the test's own: a first start mints
 * the identity and remembers it, a fresh data directory joins it, a store
 * emptied under a running daemon holds the connection's breaker open with
 * the reason (every call refused at once, nothing minted) until the
 * identity is back, a start against the emptied store is refused, and
 * `accept` (`campusgate store accept-new`) adopts it on purpose.
 */
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redis from "effect/persistence/Redis"
import { storeHeldReason } from "../../src/store/breaker.ts"
import { RedisBreaker, RedisKeyPrefix } from "../../src/store/redis.ts"
import { readRedisSecret, redisSecret, secretKey } from "../../src/store/redisSecret.ts"
import { readRemembered, STORE_IDENTITY_FILE } from "../../src/store/rememberedIdentity.ts"
import {
  accept,
  checkAtStart,
  type IdentityOptions,
  judgeIdentity,
  STORE_IDENTITY_NAME,
  StoreLost,
  type WhenEmpty,
  watchIdentity
} from "../../src/store/storeIdentity.ts"
import { describeRedis, testRedisLayer } from "../redisTesting.ts"
import { itAnswersNamed } from "../support/tables.ts"

itAnswersNamed(
  "judges %s",
  ([stored, remembered, whenEmpty]: readonly [string | undefined, string | undefined, WhenEmpty]) =>
    judgeIdentity(stored, remembered, whenEmpty),
  {
    "a new deployment: mint": [[undefined, undefined, "refuse"], { _tag: "mint" }],
    "a fresh data directory: join the store's": [["a", undefined, "refuse"], { _tag: "join", id: "a" }],
    "the remembered store: go on": [["a", "a", "refuse"], { _tag: "same" }],
    "an emptied store: lost": [[undefined, "a", "refuse"], { _tag: "lost", remembered: "a", found: undefined }],
    "another store: lost": [["b", "a", "refuse"], { _tag: "lost", remembered: "a", found: "b" }],
    "an emptied store, start-over: mint": [[undefined, "a", "start-over"], { _tag: "mint" }],
    "another store, start-over: join it": [["b", "a", "start-over"], { _tag: "join", id: "b" }]
  }
)

const dataDir = () => mkdtempSync(join(tmpdir(), "campusgate-identity-"))

const optionsFor = (directory: string, whenEmpty: WhenEmpty = "refuse") =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const breaker = yield* RedisBreaker
    const options: IdentityOptions<Redis.RedisError, Redis.RedisError> = {
      kind: "redis",
      address: `redis://test/ (key prefix ${prefix})`,
      dataDir: directory,
      whenEmpty,
      access: {
        read: Effect.provideService(
          Effect.provideService(readRedisSecret(STORE_IDENTITY_NAME), Redis.Redis, redis),
          RedisKeyPrefix,
          prefix
        ),
        mint: (id) =>
          Effect.provideService(
            Effect.provideService(
              redisSecret(STORE_IDENTITY_NAME, () => id),
              Redis.Redis,
              redis
            ),
            RedisKeyPrefix,
            prefix
          )
      },
      breaker
    }
    return { options, redis, identityKey: secretKey(prefix, STORE_IDENTITY_NAME), breaker }
  })

describeRedis("a Redis store's identity", () => {
  it.live("is minted on first start, joined by a fresh data directory, and refused once the store is emptied", () =>
    Effect.gen(function* () {
      const first = dataDir()
      const { options, redis, identityKey } = yield* optionsFor(first)
      const id = yield* checkAtStart(options)
      expect(yield* redis.send("GET", identityKey)).toBe(id)
      expect(readRemembered(first)).toEqual({ kind: "redis", address: options.address, id })
      expect(JSON.parse(readFileSync(join(first, STORE_IDENTITY_FILE), "utf8")).id).toBe(id)
      // Again: the same.
      expect(yield* checkAtStart(options)).toBe(id)
      // A daemon with a fresh data directory joins it.
      const second = dataDir()
      expect(yield* checkAtStart({ ...options, dataDir: second })).toBe(id)
      expect(readRemembered(second)?.id).toBe(id)
      // The store emptied: refused, naming what to do; nothing minted.
      yield* redis.send("DEL", identityKey)
      const exit = yield* Effect.exit(checkAtStart(options))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      const lost = error?._tag === "Fail" ? error.error : undefined
      expect(lost).toBeInstanceOf(StoreLost)
      expect(String((lost as StoreLost).message)).toMatch(/came back empty.*campusgate restore --from.*accept-new/)
      expect(yield* redis.send("GET", identityKey)).toBeNull()
      // Accepting the emptied store on purpose: a new identity, remembered, and the start goes on.
      const accepted = yield* accept(options)
      expect(accepted).toMatchObject({ minted: true, forgot: id })
      expect(yield* checkAtStart(options)).toBe(accepted.id)
      // Another data directory adopts the same one.
      expect(yield* accept({ ...options, dataDir: second })).toEqual({ id: accepted.id, minted: false, forgot: id })
      yield* redis.send("DEL", identityKey)
      // start-over mints a new one and remembers it.
      const minted = yield* checkAtStart({ ...options, whenEmpty: "start-over" })
      expect(minted).not.toBe(accepted.id)
      expect(readRemembered(first)?.id).toBe(minted)
    }).pipe(Effect.provide(testRedisLayer()))
  )

  it.live("while running, an emptied store holds every call refused at once with the reason until it is restored", () =>
    Effect.gen(function* () {
      const { options, redis, identityKey, breaker } = yield* optionsFor(dataDir())
      const id = yield* checkAtStart(options)
      const isOwn = yield* watchIdentity(options, id)
      expect(yield* isOwn).toBe(true)
      yield* redis.send("DEL", identityKey)
      // Within a poll or two the breaker is held: calls fail at once, with the reason.
      yield* Effect.sleep("1200 millis")
      expect(breaker.heldFor()).toMatch(/came back empty/)
      const started = Date.now()
      const refused = yield* Effect.flip(redis.send("SET", `${identityKey}-other`, "x"))
      expect(Date.now() - started).toBeLessThan(50)
      expect(storeHeldReason(refused)).toMatch(/came back empty/)
      expect(yield* isOwn).toBe(false)
      // Restored (the identity written back, as a restore does): released within a poll or two, without a restart.
      yield* breaker.pastHold(redis.send("SET", identityKey, id))
      yield* Effect.sleep("1200 millis")
      expect(breaker.heldFor()).toBeUndefined()
      expect(yield* redis.send("GET", identityKey)).toBe(id)
      expect(yield* isOwn).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(testRedisLayer()))
  )
})
