/**
 * A real Redis server for the suites that need one: `CAMPUSGATE_TEST_REDIS_URL`,
 * else 127.0.0.1:6379. Each layer gets a random key prefix and deletes its
 * keys when released. Without a server the suites are skipped and say so
 * loudly; with `CAMPUSGATE_REQUIRE_REDIS=1` (CI) they fail instead.
 */
import { randomBytes } from "node:crypto"
import { appendFileSync, mkdtempSync } from "node:fs"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { eachKeyPage, Redis, RedisKeyPrefix, redisStoreLayer } from "../src/store/redis.ts"
import { liveClock } from "./liveClock.ts"

export const testRedisUrl = process.env.CAMPUSGATE_TEST_REDIS_URL || "redis://127.0.0.1:6379"

/** Whether a Redis server answers PING at `url` within a second. */
export const redisAnswers = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port || 6379) })
    const done = (answer: boolean) => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write("PING\r\n"))
    socket.once("data", (data) => done(data.toString().startsWith("+PONG") || data.toString().startsWith("-NOAUTH")))
  })

export const redisAvailable = await redisAnswers(testRedisUrl)

const required = process.env.CAMPUSGATE_REQUIRE_REDIS === "1"

/** Says loudly that `suite` did not run, here and in the run's summary (`redisSummary.ts`). */
export const skippedForWantOfRedis = (suite: string, why: string): void => {
  console.warn(`\n!!! SKIPPED "${suite}": ${why}\n`)
  const file = process.env.CAMPUSGATE_SKIPPED_SUITES_FILE
  if (file !== undefined) appendFileSync(file, `${suite}\n`)
}

/** A suite of tests, as a contract is declared in. */
export type Suite = (name: string, body: () => void) => void

/** Plain `describe`. */
export const everywhere: Suite = (name, body) => {
  describe(name, body)
}

/** `describe` when Redis answers; otherwise a loud skip (or, when Redis is required, a failure). */
export const describeRedis: Suite = (name, body) => {
  if (redisAvailable) {
    describe(name, body)
    return
  }
  if (required) {
    describe(name, () => {
      throw new Error(`Redis is required (CAMPUSGATE_REQUIRE_REDIS=1) but does not answer at ${testRedisUrl}`)
    })
    return
  }
  skippedForWantOfRedis(name, `no Redis server answers at ${testRedisUrl}`)
  describe.skip(name, body)
}

/** `entries` (a suite's Redis adapters) when Redis answers; otherwise none, said loudly (or a failure when required). */
export const whenRedis = <A>(suite: string, entries: ReadonlyArray<A>): ReadonlyArray<A> => {
  if (redisAvailable) return entries
  if (required) throw new Error(`Redis is required (CAMPUSGATE_REQUIRE_REDIS=1) but does not answer at ${testRedisUrl}`)
  skippedForWantOfRedis(`${suite} (redis)`, `no Redis server answers at ${testRedisUrl}`)
  return []
}

/** A fresh key prefix for one test. */
export const testPrefix = (): string => `cgtest:${randomBytes(6).toString("hex")}:`

/** Deletes every key under `prefix`. */
export const deleteKeys = (prefix: string) =>
  Effect.flatMap(Redis, (redis) => eachKeyPage(redis, prefix, (keys) => Effect.asVoid(redis.send("DEL", ...keys))))

/** The test server's connection under a fresh prefix (or `prefix`), its keys deleted when the layer is released. */
export const testRedisLayer = (prefix: string = testPrefix()) =>
  Layer.effectDiscard(Effect.addFinalizer(() => Effect.ignore(deleteKeys(prefix)))).pipe(
    Layer.provideMerge(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })),
    // The connection's timeouts and its breaker's probe run on real time, whatever clock the test runs on.
    Layer.provide(liveClock),
    Layer.orDie
  )

/** The prefix the layer in force writes under. */
export const currentPrefix = RedisKeyPrefix

/**
 * A store contract's adapters, as `describe.each` takes them, each made
 * afresh for every test: the port's memory layer; its files layer, in a new
 * directory; and `redis`, over the test server under a fresh prefix, when
 * it answers (see `whenRedis`).
 */
export const storeAdapters = <S>(
  suite: string,
  port: {
    readonly layerMemory: Layer.Layer<S, unknown>
    readonly layerFiles: (dataDir: string) => Layer.Layer<S, unknown>
  },
  redis: Layer.Layer<S, unknown, Layer.Success<ReturnType<typeof testRedisLayer>>>
): ReadonlyArray<readonly [string, () => Layer.Layer<S, unknown>]> => [
  ["memory", () => port.layerMemory],
  ["files", () => port.layerFiles(mkdtempSync(join(tmpdir(), "campusgate-store-")))],
  ...whenRedis(suite, [["redis", () => redis.pipe(Layer.provide(testRedisLayer()))] as const])
]
