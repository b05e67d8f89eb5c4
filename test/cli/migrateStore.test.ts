import { mkdirSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { migrateStore } from "../../src/cli/copy/copyStore.ts"
import { openStoreOf } from "../../src/cli/copy/storeKinds.ts"
import { secretsFrom } from "../../src/config/environment.ts"
import { postgresAdapters, postgresMigrations, secretInPostgres } from "../../src/deployment/postgresStores.ts"
import { secretInRedis } from "../../src/deployment/redisStores.ts"
import { deploymentSecrets, secretInDataDir } from "../../src/deployment/secrets.ts"
import type { ApiKeyId } from "../../src/domain/ApiKey.ts"
import { type JobId, newJob } from "../../src/jobs/Job.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../../src/jobs/JobStoreFiles.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import { layerRedis as apiKeyStoreRedis } from "../../src/keys/apiKeyRedis.ts"
import { hashApiKey } from "../../src/keys/apiKeys.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import { layerRedis as resourceStoreRedis } from "../../src/resources/resourceRedis.ts"
import { makeSessionKeys } from "../../src/server/consoleSession.ts"
import { EndedSessions } from "../../src/sessions/EndedSessions.ts"
import * as EndedSessionsRedis from "../../src/sessions/endedSessionsRedis.ts"
import { hashKeyFor } from "../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../src/stats/UsageRecorder.ts"
import { toOfferUsage } from "../../src/stats/UsageState.ts"
import { UsageStore } from "../../src/stats/UsageStore.ts"
import { layerRedis as usageStoreRedis } from "../../src/stats/usageRedis.ts"
import { PgClient } from "../../src/store/postgres.ts"
import { Redis } from "../../src/store/redis.ts"
import { secretKey } from "../../src/store/redisSecret.ts"
import { SigningKeyStore } from "../../src/verification/SigningKeyStore.ts"
import { rotate } from "../../src/verification/signing.ts"
import * as SigningKeyRedis from "../../src/verification/signingKeyRedis.ts"
import { webhookSecretFor } from "../../src/webhooks/secret.ts"
import { staged } from "../jobs/jobTesting.ts"
import { describePostgres, TestDatabase, testPostgresLayer } from "../postgresTesting.ts"
import { currentPrefix, describeRedis, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { eligible, MAY_1 } from "../stats/fixtures.ts"

/** A data directory (and config directory) as one daemon on files leaves it, with what the checks need. */
const seedDataDir = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-migrate-"))
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  mkdirSync(configDir)
  mkdirSync(dataDir)
  return Effect.gen(function* () {
    yield* ResourceStore.use((store) => store.write("offer", "spring", "id: spring\n")).pipe(
      Effect.provide(ResourceStore.layerFiles(dataDir))
    )
    const key = {
      id: "key_migrateaa" as ApiKeyId,
      team: "acme" as never,
      scopes: ["offers:read" as const],
      hash: hashApiKey("cgk_x"),
      createdAt: "2026-11-01T00:00:00.000Z"
    }
    yield* ApiKeyStore.makeFiles({ configDir, dataDir }).add(key, false)
    const recorder = new UsageRecorder(hashKeyFor(dataDir, undefined))
    recorder.record("spring", "ada@ox.ac.uk", eligible("ada@ox.ac.uk", "uk"), MAY_1)
    const usage = recorder.take().get("spring")!
    yield* UsageStore.use((store) =>
      Effect.andThen(store.apply("spring", usage), store.applyOnce("spring", "job_1", 7, usage))
    ).pipe(Effect.provide(UsageStore.layerFiles(dataDir)))
    yield* SigningKeyStore.makeFiles(dataDir).update((keys) => rotate(keys, "EdDSA", 0, 86_400_000))
    const webhookSecret = webhookSecretFor(dataDir, undefined)
    // Every secret the deployment generates, as the daemon on files made them.
    const noEnvironment = secretsFrom({})
    const generated = Object.values(deploymentSecrets).map((secret) => ({
      secret,
      value: secretInDataDir(secret, dataDir, noEnvironment)
    }))
    const sessionKeys = makeSessionKeys(secretInDataDir(deploymentSecrets.console, dataDir, noEnvironment))
    const session = sessionKeys.issue("key_migrateaa" as ApiKeyId, 0, Date.now() + 60_000)
    // A session signed out on files stays ended on Redis.
    const signedOut = sessionKeys.issue("key_migrateaa" as ApiKeyId, 0, Date.now() + 60_000).claims
    yield* EndedSessions.makeFiles(dataDir).end({ nonce: signedOut.nonce, until: signedOut.expiresAt })
    const jobs = yield* Effect.gen(function* () {
      const store = yield* JobStore
      const queued = newJob({
        jobId: `job_${"1".padStart(32, "0")}` as JobId,
        team: "acme" as never,
        target: { targetGroupId: "edu" as never },
        total: 1,
        createdAt: "2026-11-01T00:00:00.000Z"
      })
      const finished = {
        ...queued,
        jobId: `job_${"2".padStart(32, "0")}` as JobId,
        status: "completed" as const,
        finishedAt: "2026-11-01T00:01:00.000Z",
        expiresAt: "2099-01-01T00:00:00.000Z"
      }
      yield* store.create(queued, yield* staged('"a@x.edu"\n'))
      yield* store.create(finished, yield* staged('"b@x.edu"\n'))
      return [queued, finished]
    }).pipe(Effect.provide(JobStoreFiles.layerFiles(dataDir)))

    return { configDir, dataDir, key, usage, webhookSecret, noEnvironment, generated, session, signedOut, jobs }
  })
}

/** `migrate --from files --to redis`, into the test layer's key prefix. */
const migrateIntoRedis = (configDir: string, dataDir: string) =>
  Effect.gen(function* () {
    const keyPrefix = yield* currentPrefix
    const directories = { configDir, dataDir }
    const source = yield* openStoreOf({ kind: "files" }, directories)
    return yield* migrateStore(source, yield* openStoreOf({ kind: "redis", url: testRedisUrl, keyPrefix }, directories))
  }).pipe(Effect.scoped)

/** `migrate --from files --to postgres`, into the test layer's database. */
const migrateIntoPostgres = (configDir: string, dataDir: string) =>
  Effect.gen(function* () {
    const { url } = yield* TestDatabase
    const directories = { configDir, dataDir }
    const source = yield* openStoreOf({ kind: "files" }, directories)
    return yield* migrateStore(source, yield* openStoreOf({ kind: "postgres", url }, directories))
  }).pipe(Effect.scoped)

describeRedis("campusgate migrate --from files --to redis", () => {
  it.effect("moves resources, data keys, statistics, signing keys, secrets and jobs, and refuses to run twice", () =>
    Effect.gen(function* () {
      const { configDir, dataDir, key, usage, webhookSecret, noEnvironment, generated, session, signedOut, jobs } =
        yield* seedDataDir()
      const moved = yield* migrateIntoRedis(configDir, dataDir)
      expect(moved).toMatchObject({
        resources: 1,
        apiKeys: 1,
        offersWithStatistics: 1,
        signingKeys: 1,
        secrets: generated.length,
        endedSessions: 1,
        jobs: 2
      })

      const redis = yield* Redis
      const prefix = yield* currentPrefix
      expect(
        yield* ResourceStore.use((store) => store.read("offer", "spring")).pipe(Effect.provide(resourceStoreRedis))
      ).toMatchObject({ text: "id: spring\n" })
      const keys = yield* ApiKeyStore.use((store) => store.list).pipe(Effect.provide(apiKeyStoreRedis(configDir)))
      expect(keys.map((listed) => listed.record.id)).toEqual([key.id])
      const counted = yield* UsageStore.use((store) => store.get("spring")).pipe(Effect.provide(usageStoreRedis))
      expect(toOfferUsage(counted).validations).toBe(2)
      // The job step already counted stays counted once.
      yield* UsageStore.use((store) => store.applyOnce("spring", "job_1", 7, usage)).pipe(
        Effect.provide(usageStoreRedis)
      )
      expect(
        toOfferUsage(yield* UsageStore.use((store) => store.get("spring")).pipe(Effect.provide(usageStoreRedis)))
          .validations
      ).toBe(2)
      expect(
        yield* SigningKeyStore.use((store) => store.list()).pipe(Effect.provide(SigningKeyRedis.layerRedis))
      ).toHaveLength(1)
      expect(yield* redis.send("GET", secretKey(prefix, "webhook-secret"))).toBe(webhookSecret)
      expect(yield* redis.send("GET", secretKey(prefix, "stats-hash-key"))).toBe(
        readFileSync(join(dataDir, "stats", "hash-key"), "utf8").trim()
      )
      // Daemons on Redis find every secret as it was, so a console session signed before the move still opens.
      for (const { secret, value } of generated) {
        expect(yield* secretInRedis(secret, noEnvironment), secret.name).toBe(value)
      }
      expect(
        makeSessionKeys(yield* secretInRedis(deploymentSecrets.console, noEnvironment)).open(session.token)
      ).toEqual(session.claims)
      const ended = yield* Effect.scoped(
        Effect.map(Layer.build(EndedSessionsRedis.layerRedis), (context) => Context.get(context, EndedSessions))
      )
      expect(ended.hasEnded(signedOut.nonce, Date.now())).toBe(true)
      expect(ended.hasEnded(session.claims.nonce, Date.now())).toBe(false)
      expect(yield* redis.send("ZRANGE", `${prefix}jobs:waiting`, "0", "-1")).toEqual([jobs[0]!.jobId])
      expect(yield* redis.send("ZRANGE", `${prefix}jobs:expiring`, "0", "-1")).toEqual([jobs[1]!.jobId])

      const again = yield* Effect.flip(migrateIntoRedis(configDir, dataDir))
      expect(String(again)).toContain("already holds data")
    }).pipe(Effect.provide(Layer.mergeAll(testRedisLayer())))
  )
})

describePostgres("campusgate migrate --from files --to postgres", () => {
  it.effect("moves resources, data keys, statistics, signing keys, secrets and jobs, and refuses to run twice", () =>
    Effect.gen(function* () {
      const { configDir, dataDir, key, usage, noEnvironment, generated, session, signedOut, jobs } =
        yield* seedDataDir()
      const moved = yield* migrateIntoPostgres(configDir, dataDir)
      expect(moved).toMatchObject({
        resources: 1,
        apiKeys: 1,
        offersWithStatistics: 1,
        signingKeys: 1,
        secrets: generated.length,
        endedSessions: 1,
        jobs: 2
      })
      const shared = postgresAdapters({ configDir, dataDir })
      expect(
        yield* ResourceStore.use((store) => store.read("offer", "spring")).pipe(Effect.provide(shared.resources))
      ).toMatchObject({ text: "id: spring\n" })
      const keys = yield* ApiKeyStore.use((store) => store.list).pipe(Effect.provide(shared.keys))
      expect(keys.map((listed) => listed.record.id)).toEqual([key.id])
      const counted = () => UsageStore.use((store) => store.get("spring")).pipe(Effect.provide(shared.usage))
      expect(toOfferUsage(yield* counted()).validations).toBe(2)
      // The job step already counted stays counted once.
      yield* UsageStore.use((store) => store.applyOnce("spring", "job_1", 7, usage)).pipe(Effect.provide(shared.usage))
      expect(toOfferUsage(yield* counted()).validations).toBe(2)
      expect(yield* SigningKeyStore.use((store) => store.list()).pipe(Effect.provide(shared.signingKeys))).toHaveLength(
        1
      )
      // Daemons on PostgreSQL find every secret as it was, so a console session signed before the move still opens.
      for (const { secret, value } of generated) {
        expect(yield* secretInPostgres(secret, noEnvironment), secret.name).toBe(value)
      }
      expect(
        makeSessionKeys(yield* secretInPostgres(deploymentSecrets.console, noEnvironment)).open(session.token)
      ).toEqual(session.claims)
      const ended = yield* Effect.scoped(
        Effect.map(Layer.build(shared.endedSessions), (context) => Context.get(context, EndedSessions))
      )
      expect(ended.hasEnded(signedOut.nonce, Date.now())).toBe(true)
      // The queued job waits, the finished one expires when it would have.
      const sql = yield* PgClient.PgClient
      const queue = yield* sql<{ job_id: string; waiting: boolean; expiring: boolean }>`
        select job_id, waiting_since is not null as waiting, expires_at is not null as expiring
        from campusgate_jobs order by job_id`
      expect(queue).toEqual([
        { job_id: jobs[0]!.jobId, waiting: true, expiring: false },
        { job_id: jobs[1]!.jobId, waiting: false, expiring: true }
      ])

      const again = yield* Effect.flip(migrateIntoPostgres(configDir, dataDir))
      expect(String(again)).toContain("already holds data")
    }).pipe(Effect.provide(testPostgresLayer(postgresMigrations)))
  )
})
