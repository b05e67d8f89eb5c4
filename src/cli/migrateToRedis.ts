/**
 * `campusgate migrate --from files --to redis`: copies what a data
 * directory holds into the Redis store the daemons will share — API-created
 * resources, the data directory's API keys, usage statistics (with the
 * job steps already counted), verifications, signing keys, every generated
 * secret (`deploymentSecrets.ts`: signatures, hashes, unique-email counts
 * and console sessions stay valid), the console sessions signed out and
 * jobs (records and queue state; their files stay in the data directory,
 * which becomes the volume the daemons share). Keys in the config directory
 * stay there (git). It refuses a key prefix that already holds data, so it
 * cannot count statistics twice; run it with the daemons stopped.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import { JobStore } from "../jobs/JobStore.ts"
import * as JobStoreFiles from "../jobs/JobStoreFiles.ts"
import { importJobs } from "../jobs/jobQueueKeys.ts"
import { ApiKeyStore } from "../keys/ApiKeyStore.ts"
import { makeRedisApiKeyStore } from "../keys/apiKeyRedis.ts"
import { makeFileResourceStore } from "../resources/ResourceStore.ts"
import { makeRedisResourceStore } from "../resources/resourceRedis.ts"
import { deploymentSecrets } from "../server/deploymentSecrets.ts"
import { EndedSessions } from "../sessions/EndedSessions.ts"
import { makeRedisEndedSessions } from "../sessions/endedSessionsRedis.ts"
import { emptyUsageState } from "../stats/UsageState.ts"
import { readUsageFiles } from "../stats/usageFiles.ts"
import { makeRedisUsageStore } from "../stats/usageRedis.ts"
import { RedisKeyPrefix } from "../store/redis.ts"
import { secretKey } from "../store/redisSecret.ts"
import { readSecret } from "../store/secretFile.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { VerificationStore } from "../verification/VerificationStore.ts"
import { makeRedisVerificationStore } from "../verification/verificationRedis.ts"

export interface Migrated {
  readonly targetGroups: number
  readonly offers: number
  readonly apiKeys: number
  readonly offersWithStatistics: number
  readonly verifications: number
  readonly signingKeys: number
  readonly secrets: number
  readonly endedSessions: number
  readonly jobs: number
}

/** Copies `dataDir` (and the keys `configDir`'s data location holds) into the Redis connection in force. */
export const migrateToRedis = (configDir: string, dataDir: string) =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const prefix = yield* RedisKeyPrefix
    const [, existing] = yield* redis.send<[string, Array<string>]>(
      "SCAN",
      "0",
      "MATCH",
      `${prefix}*`,
      "COUNT",
      "10000"
    )
    if (existing.length > 0) {
      return yield* Effect.fail(
        new Error(
          `the Redis key prefix "${prefix}" already holds data; migrate into an empty prefix (store.keyPrefix), with the daemons stopped`
        )
      )
    }

    const files = makeFileResourceStore(dataDir)
    const resources = yield* makeRedisResourceStore
    const targetGroups = yield* files.list("targetGroup")
    const offers = yield* files.list("offer")
    for (const document of [...targetGroups, ...offers])
      yield* resources.write(document.kind, document.id, document.text)

    const dataKeys = (yield* ApiKeyStore.makeFiles({ configDir, dataDir }).list).filter(
      (listed) => listed.location === "data"
    )
    const keys = yield* makeRedisApiKeyStore(configDir)
    for (const { record } of dataKeys) yield* keys.add(record, false)

    const usage = yield* makeRedisUsageStore
    const statistics = yield* Effect.try(() => readUsageFiles(dataDir))
    for (const [offerId, stored] of statistics) {
      yield* usage.apply(offerId, stored.state)
      for (const [source, step] of stored.applied) yield* usage.applyOnce(offerId, source, step, emptyUsageState())
    }

    const verifications = yield* VerificationStore.use((store) => store.list()).pipe(
      Effect.provide(VerificationStore.layerFiles(dataDir))
    )
    const verificationStore = yield* makeRedisVerificationStore
    for (const record of verifications) yield* verificationStore.insert(record)

    const signing = yield* SigningKeyStore.makeFiles(dataDir).list()
    if (signing.length > 0) yield* (yield* SigningKeyStore.makeRedis).update(() => signing)

    let secrets = 0
    for (const secret of Object.values(deploymentSecrets)) {
      const value = readSecret(secret.file(dataDir))
      if (value === undefined) continue
      yield* redis.send("SET", secretKey(prefix, secret.name), value, "NX")
      secrets++
    }

    // Sessions signed out stay ended: the console secret moves, so their cookies would open again.
    const now = yield* Clock.currentTimeMillis
    const endedSessions = yield* EndedSessions.makeFiles(dataDir).list(now)
    yield* Effect.scoped(
      Effect.flatMap(makeRedisEndedSessions, (inRedis) => Effect.forEach(endedSessions, inRedis.end, { discard: true }))
    )

    const jobs = yield* JobStore.use((store) => store.list()).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))
    yield* importJobs(jobs)

    return {
      targetGroups: targetGroups.length,
      offers: offers.length,
      apiKeys: dataKeys.length,
      offersWithStatistics: statistics.size,
      verifications: verifications.length,
      signingKeys: signing.length,
      secrets,
      endedSessions: endedSessions.length,
      jobs: jobs.length
    } satisfies Migrated
  })
