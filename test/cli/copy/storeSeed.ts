/**
 * A store of any kind filled through its ports with one of every record a
 * copy carries, and a store's whole content as comparable text (every entry
 * `readStore` hands out, a job with its bytes joined, in a fixed order): two
 * stores hold the same when their `contentOf` are equal.
 */
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type JobsCopied, portsOf, readStore } from "../../../src/cli/copy/readStore.ts"
import { StoreEntry } from "../../../src/cli/copy/storeEntries.ts"
import { type OpenedStore, openStoreOf, type StoreKind } from "../../../src/cli/copy/storeKinds.ts"
import { deploymentSecrets } from "../../../src/deployment/secrets.ts"
import type { ApiKeyId } from "../../../src/domain/ApiKey.ts"
import type { Candidate, ReviewRejection } from "../../../src/domain/InstitutionReview.ts"
import type { VerificationId, VerificationRecord } from "../../../src/domain/Verification.ts"
import { type JobId, newJob } from "../../../src/jobs/Job.ts"
import { hashApiKey } from "../../../src/keys/apiKeys.ts"
import { addSighting, emptyTeamQueue, type QueueBatch } from "../../../src/reviews/queueEntries.ts"
import { hashKeyFromSecret } from "../../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../../src/stats/UsageRecorder.ts"
import { redisStoreLayer } from "../../../src/store/redis.ts"
import { rotate } from "../../../src/verification/signing.ts"
import { universityApproval } from "../../fixtures.ts"
import { liveClock } from "../../liveClock.ts"
import { testDatabase } from "../../postgresTesting.ts"
import { deleteKeys, testPrefix, testRedisUrl } from "../../redisTesting.ts"
import { eligible, MAY_1 } from "../../stats/fixtures.ts"

/** A config and a data directory of their own. */
export const directories = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-copy-"))
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  mkdirSync(configDir)
  mkdirSync(dataDir)
  return { configDir, dataDir }
}

/** An empty store of `kind` for the scope: a new data directory, a fresh Redis key prefix (deleted after), a new database (dropped after). */
export const openTestStore = (kind: StoreKind, dirs = directories()) =>
  Effect.gen(function* () {
    if (kind === "files") return yield* openStoreOf({ kind }, dirs)
    if (kind === "redis") {
      const keyPrefix = testPrefix()
      yield* Effect.addFinalizer(() =>
        Effect.ignore(
          deleteKeys(keyPrefix).pipe(
            Effect.provide(Layer.fresh(redisStoreLayer({ url: testRedisUrl, keyPrefix }))),
            Effect.provide(liveClock)
          )
        )
      )
      return yield* openStoreOf({ kind, url: testRedisUrl, keyPrefix }, dirs)
    }
    const database = yield* testDatabase
    return yield* openStoreOf({ kind, url: database.url }, dirs)
  }).pipe(Effect.orDie)

export const verificationRecord = (n: number): VerificationRecord => ({
  id: `ver_${String(n).padStart(26, "0")}` as VerificationId,
  version: n % 3,
  team: "acme",
  offerId: "spring",
  targetGroupId: "uk",
  method: "code",
  locale: "en",
  status: n % 2 === 0 ? "verified" : "pending",
  domain: "ox.ac.uk",
  addressHash: n.toString(16).padStart(64, "0"),
  sealedAddress: `sealed-${n}`,
  secretHash: "b".repeat(64),
  institution: { name: "University of Oxford", country: "GB", type: "university" },
  createdAt: 1_000 + n,
  expiresAt: 601_000 + n,
  attempts: 0,
  maxAttempts: 5,
  sentAt: [2_000 + n],
  resendAvailableAt: 31_000,
  delivery: { state: "sent", attempts: 1 },
  notices: []
})

const candidate = (score: number): Candidate => ({
  domain: "hfmt-hamburg.de",
  score,
  signals: [{ signal: "academic-word", detail: `score ${score}`, weight: score }]
})

export const jobIds = {
  queued: `job_${"1".padStart(32, "0")}` as JobId,
  finished: `job_${"2".padStart(32, "0")}` as JobId
}

/** Fills `store` (empty) with one of every record, `verifications` verifications, and a queued and a finished job. */
export const seedStore = (store: OpenedStore, options: { readonly verifications?: number } = {}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const ports = yield* portsOf(store)
      const now = Date.now()
      for (const secret of Object.values(deploymentSecrets))
        yield* store.putSecret(secret.name, `${secret.name}-${store.kind}-value`)
      // A secret no list names (the store's identity, say): kinds that list what they hold copy it too.
      if (store.kind !== "files") yield* store.putSecret("store-identity", `identity-of-${store.kind}`)
      yield* ports.signingKeys.update((keys) => rotate(keys, "EdDSA", now, 86_400_000))
      yield* ports.resources.write("targetGroup", "uk", "id: uk\nname: UK students\n")
      yield* ports.resources.write("offer", "spring", "id: spring\ntargetGroup: uk\n")
      yield* ports.keys.add(
        {
          id: "key_copyaaaa" as ApiKeyId,
          team: "acme" as never,
          scopes: ["offers:read" as const],
          hash: hashApiKey("cgk_copy"),
          createdAt: "2026-11-01T00:00:00.000Z"
        },
        false
      )
      const recorder = new UsageRecorder(hashKeyFromSecret("copy"))
      recorder.record("spring", "ada@ox.ac.uk", eligible("ada@ox.ac.uk", "uk"), MAY_1)
      recorder.record("spring", "bob@ox.ac.uk", eligible("bob@ox.ac.uk", "uk"), MAY_1 + 1000)
      const usage = recorder.take().get("spring")!
      yield* ports.usage.apply("spring", usage)
      yield* ports.usage.applyOnce("spring", "job_1", 7, usage)
      const batch: QueueBatch = new Map([["acme", emptyTeamQueue()]])
      addSighting(batch.get("acme")!.entries, "hfmt-hamburg.de", true, candidate(0.8), now, 3)
      addSighting(batch.get("acme")!.entries, "kunst-uni.de", false, candidate(0.4), now)
      yield* ports.reviews.record(batch, { maxPerTeam: 100, now })
      yield* ports.reviews.decide({
        kind: "approve",
        approval: universityApproval("acme", "hfmt-hamburg.de", "HfMT Hamburg", new Date(now).toISOString())
      })
      yield* ports.reviews.decide({
        kind: "reject",
        rejection: {
          domain: "shop.de",
          team: "acme",
          reason: "a shop",
          rejectedBy: "key_1",
          rejectedAt: new Date(now).toISOString()
        } as ReviewRejection
      })
      yield* ports.endedSessions.end({ nonce: "nonce-ended", until: now + 3_600_000 })
      yield* Effect.forEach(
        Array.from({ length: options.verifications ?? 25 }, (_, n) => verificationRecord(n)),
        (record) => ports.verifications.insert(record),
        { discard: true, concurrency: 16 }
      )
      const queued = newJob({
        jobId: jobIds.queued,
        team: "acme" as never,
        target: { targetGroupId: "uk" as never },
        total: 1,
        createdAt: "2026-11-01T00:00:00.000Z"
      })
      const finished = {
        ...queued,
        jobId: jobIds.finished,
        status: "completed" as const,
        finishedAt: "2026-11-01T00:01:00.000Z",
        expiresAt: "2099-01-01T00:00:00.000Z"
      }
      for (const [job, input, results] of [
        [queued, '"a@x.edu"\n', ""],
        [finished, '"b@x.edu"\n"c@x.edu"\n', '{"email":"b@x.edu","valid":true}\n']
      ] as const) {
        const upload = yield* ports.jobs.stage()
        const bytes = Buffer.from(input)
        upload.bytes.write(bytes, 0, bytes.length, 0)
        yield* ports.jobs.create(job, upload)
        if (results !== "") {
          const file = yield* ports.jobs.open(job.jobId, "results")
          const written = Buffer.from(results)
          file.write(written, 0, written.length, 0)
          yield* Effect.promise(() => file.flush())
          file.close()
        }
      }
    })
  )

const encodeEntry = Schema.encodeSync(StoreEntry)

/** JSON with every object's keys in order (PostgreSQL's jsonb keeps its own order). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, held) =>
    held !== null && typeof held === "object" && !Array.isArray(held)
      ? Object.fromEntries(Object.entries(held).sort(([a], [b]) => (a < b ? -1 : 1)))
      : held
  )

/**
 * Every entry of `store` as sorted JSON lines (a job's bytes joined onto it,
 * review entries in domain order); `secrets`: which secret names to keep
 * (a files store lists only the ones `deployment/secrets.ts` names).
 */
export const contentOf = (store: OpenedStore, jobs: JobsCopied, secrets?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    let job: { entry: Record<string, unknown>; input: string; results: string } | undefined
    const close = () => {
      if (job !== undefined) lines.push(canonical(job))
      job = undefined
    }
    yield* readStore(store, jobs, (entry) =>
      Effect.sync(() => {
        if (entry.t === "jobBytes") {
          job![entry.file] += Buffer.from(entry.data).toString("utf8")
          return
        }
        close()
        if (entry.t === "job") {
          job = { entry: encodeEntry(entry) as never, input: "", results: "" }
          return
        }
        if (entry.t === "secret" && secrets !== undefined && !secrets.includes(entry.name)) return
        const encoded = encodeEntry(entry) as Record<string, unknown>
        // The step a copy adds its statistics under is the copy's, not the store's.
        if (entry.t === "usage")
          encoded.applied = Object.fromEntries(
            Object.entries(entry.applied).filter(([source]) => !source.startsWith("copy:"))
          )
        // The registers as a digest: a difference stays visible, a failure stays readable.
        if (entry.t === "usage" && entry.delta.hyperLogLog !== null)
          encoded.delta = {
            ...entry.delta,
            hyperLogLog: createHash("sha256").update(entry.delta.hyperLogLog).digest("hex").slice(0, 16)
          }
        if (entry.t === "reviewQueue")
          encoded.entries = [...entry.entries].sort((a, b) => (a.domain < b.domain ? -1 : 1))
        lines.push(canonical(encoded))
      })
    )
    close()
    return lines.sort()
  })

/** The lines only one side holds (empty when both hold the same). */
export const differences = (left: ReadonlyArray<string>, right: ReadonlyArray<string>) => ({
  onlyLeft: left.filter((line) => !right.includes(line)).map((line) => line.slice(0, 600)),
  onlyRight: right.filter((line) => !left.includes(line)).map((line) => line.slice(0, 600))
})
