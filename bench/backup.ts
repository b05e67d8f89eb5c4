/**
 * `npm run bench:backup`: what `campusgate restore` and `backup` cost for
 * BENCH_VERIFICATIONS verifications (default 100,000) on each store kind —
 * files (a fresh data directory), Redis (BENCH_REDIS_URL, default
 * 127.0.0.1:6379, under a fresh key prefix deleted after) and PostgreSQL
 * (BENCH_DATABASE_URL's server, default postgres@127.0.0.1:5432/test, in a
 * database of its own dropped after). An archive holding the
 * verifications (and an offer's statistics, the secrets and a signing key)
 * is written once; each kind then has it restored into an empty store
 * (timed: the archive read through twice — checked whole, then written —
 * and every record inserted through the port) and backed up again (timed:
 * every record read a page at a time and written to a new archive). The
 * process's peak resident memory is sampled, to show the copy streams.
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { archiveWriter } from "../src/cli/copy/archive.ts"
import { backupStore, restoreStore } from "../src/cli/copy/copyStore.ts"
import { openStoreOf, type StoreKind, type StoreSpec } from "../src/cli/copy/storeKinds.ts"
import { deploymentSecrets } from "../src/deployment/secrets.ts"
import type { VerificationId, VerificationRecord } from "../src/domain/Verification.ts"
import { hashKeyFromSecret } from "../src/stats/hashKey.ts"
import { UsageRecorder } from "../src/stats/UsageRecorder.ts"
import { toUsageDelta } from "../src/stats/UsageState.ts"
import { PgClient, postgresClientLayer } from "../src/store/postgres.ts"
import { eachKeyPage, redisStoreLayer } from "../src/store/redis.ts"
import { newSigningKey } from "../src/verification/signing.ts"

const count = Number(process.env.BENCH_VERIFICATIONS ?? 100_000)
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const kinds = (process.env.BENCH_KINDS ?? "files,redis,postgres").split(",") as Array<StoreKind>
const passphrase = "a passphrase for the benchmark"

const root = mkdtempSync(join(tmpdir(), "campusgate-bench-backup-"))
const log = (text: string) => console.error(text)

/** A verification as the daemon stores one: an address's hash, its sealed address, a message sent. */
const verification = (n: number): VerificationRecord => ({
  id: `ver_${n.toString(36).padStart(26, "0")}` as VerificationId,
  version: 2,
  team: "acme",
  offerId: "spring",
  targetGroupId: "uk",
  method: "code",
  locale: "en",
  status: n % 3 === 0 ? "pending" : "verified",
  domain: "ox.ac.uk",
  addressHash: randomBytes(32).toString("hex"),
  sealedAddress: randomBytes(48).toString("base64url"),
  secretHash: randomBytes(32).toString("hex"),
  institution: { name: "University of Oxford", country: "GB", type: "university" },
  createdAt: 1_764_000_000_000 + n,
  expiresAt: 1_764_000_600_000 + n,
  attempts: 1,
  maxAttempts: 5,
  sentAt: [1_764_000_000_500 + n],
  resendAvailableAt: 1_764_000_030_000 + n,
  delivery: { state: "sent", attempts: 1 },
  notices: []
})

/** The archive every kind restores: the verifications, an offer's statistics, the secrets, a signing key. */
const writeSeedArchive = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const writer = yield* archiveWriter(file, { kind: "files", jobs: "none", passphrase })
      for (const secret of Object.values(deploymentSecrets))
        yield* writer.put({ t: "secret", name: secret.name, value: randomBytes(32).toString("base64url") })
      yield* writer.put({ t: "signingKeys", keys: [newSigningKey("EdDSA", Date.now())] })
      const recorder = new UsageRecorder(hashKeyFromSecret("bench"))
      recorder.recordHostedFlow("spring", "started", Date.now())
      yield* writer.put({
        t: "usage",
        offerId: "spring",
        delta: toUsageDelta(recorder.take().get("spring")!),
        applied: {}
      })
      for (let n = 0; n < count; n++) yield* writer.put({ t: "verification", record: verification(n) })
      return yield* writer.end
    })
  )

/** A fresh, empty store of `kind` and how to remove it after. */
const freshStore = (kind: StoreKind) =>
  Effect.gen(function* () {
    if (kind === "files") {
      const dataDir = join(root, `data-${kind}`)
      mkdirSync(dataDir)
      return { spec: { kind } as StoreSpec, dataDir, remove: Effect.sync(() => rmSync(dataDir, { recursive: true })) }
    }
    if (kind === "redis") {
      const keyPrefix = `cgbench:${randomBytes(6).toString("hex")}:`
      const remove = Effect.gen(function* () {
        const redis = yield* Redis.Redis
        yield* eachKeyPage(redis, keyPrefix, (keys) => Effect.asVoid(redis.send("DEL", ...keys)))
      }).pipe(Effect.provide(Layer.fresh(redisStoreLayer({ url: redisUrl, keyPrefix }))), Effect.ignore)
      return { spec: { kind, url: redisUrl, keyPrefix } as StoreSpec, dataDir: join(root, "data-redis"), remove }
    }
    const name = `cgbench_${randomBytes(6).toString("hex")}`
    const onServer = (statement: string) =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        yield* sql.unsafe(statement)
      }).pipe(Effect.provide(Layer.fresh(postgresClientLayer(databaseUrl))))
    yield* onServer(`create database ${name}`)
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    return {
      spec: { kind, url: url.toString() } as StoreSpec,
      dataDir: join(root, "data-postgres"),
      remove: Effect.ignore(onServer(`drop database if exists ${name} with (force)`))
    }
  })

/** The most heap in use during a phase, sampled: what the copy holds (RSS only grows, so it would say little). */
let peakHeap = 0
const sampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
}, 20)
/** Starts a phase: garbage collected first (`--expose-gc`), so the peak is the phase's own. */
const phase = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  peakHeap = process.memoryUsage().heapUsed
  return { baseline: peakHeap }
}
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10
const seconds = (since: number) => Math.round((performance.now() - since) / 10) / 100

const main = Effect.gen(function* () {
  const seedFile = join(root, "seed.cgb")
  let started = performance.now()
  const seed = yield* writeSeedArchive(seedFile)
  log(`archive of ${count} verifications written in ${seconds(started)} s: ${mb(seed.bytes)} MB`)
  const results: Record<string, unknown> = {}
  for (const kind of kinds) {
    const store = yield* freshStore(kind)
    yield* Effect.scoped(
      Effect.gen(function* () {
        const opened = yield* openStoreOf(store.spec, { configDir: root, dataDir: store.dataDir })
        const restoring = phase()
        started = performance.now()
        const restored = yield* restoreStore(opened, seedFile, { passphrase, keepExisting: false })
        const restoreSeconds = seconds(started)
        const restorePeakMb = mb(peakHeap - restoring.baseline)
        if (restored.written.verifications !== count)
          return yield* Effect.fail(new Error(`${kind}: restored ${restored.written.verifications} of ${count}`))
        log(`${kind}: restored in ${restoreSeconds} s (heap grew at most ${restorePeakMb} MB)`)
        const backupFile = join(root, `backup-${kind}.cgb`)
        const backingUp = phase()
        started = performance.now()
        const made = yield* backupStore(opened, backupFile, { jobs: false, passphrase })
        const backupSeconds = seconds(started)
        const backupPeakMb = mb(peakHeap - backingUp.baseline)
        if (made.counts.verifications !== count)
          return yield* Effect.fail(new Error(`${kind}: backed up ${made.counts.verifications} of ${count}`))
        log(
          `${kind}: backed up in ${backupSeconds} s (heap grew at most ${backupPeakMb} MB), ${mb(statSync(backupFile).size)} MB`
        )
        results[kind] = {
          restoreSeconds,
          backupSeconds,
          restorePerSecond: Math.round(count / restoreSeconds),
          backupPerSecond: Math.round(count / backupSeconds),
          archiveMB: mb(made.bytes),
          restoreHeapGrowthMB: restorePeakMb,
          backupHeapGrowthMB: backupPeakMb
        }
      })
    ).pipe(Effect.ensuring(store.remove))
  }
  return {
    verifications: count,
    archiveMB: mb(seed.bytes),
    bytesPerVerification: Math.round(seed.bytes / count),
    ...results
  }
})

const summary = await Effect.runPromise(main).finally(() => {
  clearInterval(sampler)
  rmSync(root, { recursive: true, force: true })
})
console.log(JSON.stringify(summary))
