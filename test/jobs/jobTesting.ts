/**
 * Shared pieces of the job tests: a data directory per test, the store
 * adapters to run a suite against, an evaluation on the fixture engine (as
 * the server builds it), inputs, and a queue layer over a store.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { toOfferResultRow, toResultRow } from "../../src/domain/ResultRow.ts"
import { makeEngine } from "../../src/engine/makeEngine.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { emailLine } from "../../src/jobs/inputLines.ts"
import type { JobQueue, JobQueueOptions, SubmitJob } from "../../src/jobs/JobQueue.ts"
import * as JobQueueLocal from "../../src/jobs/JobQueueLocal.ts"
import * as JobQueuePostgres from "../../src/jobs/JobQueuePostgres.ts"
import * as JobQueueRedis from "../../src/jobs/JobQueueRedis.ts"
import { type JobBytes, JobStore, type JobStoreError } from "../../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../../src/jobs/JobStoreFiles.ts"
import * as JobStoreMemory from "../../src/jobs/JobStoreMemory.ts"
import * as JobStorePostgres from "../../src/jobs/JobStorePostgres.ts"
import * as JobStoreRedis from "../../src/jobs/JobStoreRedis.ts"
import { type Evaluate, evaluateHere } from "../../src/jobs/jobBatches.ts"
import type { PostgresConnection } from "../../src/store/postgres.ts"
import { fixtureContext } from "../fixtures.ts"
import { testPostgresLayer, whenPostgres } from "../postgresTesting.ts"
import { testRedisLayer, whenRedis } from "../redisTesting.ts"

export const makeDataDir = (): string => mkdtempSync(join(tmpdir(), "campusgate-jobs-"))

/** Every adapter of the job store, fresh for each call: suites run once per adapter. */
export const storeAdapters: ReadonlyArray<readonly [string, () => Layer.Layer<JobStore>]> = [
  ["files", () => JobStoreFiles.layerFiles(makeDataDir())],
  ["memory", () => JobStoreMemory.layerMemory],
  ...whenRedis("JobStore contract", [
    ["redis", () => JobStoreRedis.layerRedis(makeDataDir()).pipe(Layer.provide(testRedisLayer()))] as const
  ]),
  ...whenPostgres("JobStore contract", [
    [
      "postgres",
      () =>
        JobStorePostgres.layerPostgres(makeDataDir()).pipe(
          Layer.provide(testPostgresLayer(JobStorePostgres.migrations))
        )
    ] as const
  ])
]

/** `text` as job bytes in memory. */
export const textBytes = (text: string): JobStoreMemory.MemoryBytes => {
  const bytes = new JobStoreMemory.MemoryBytes()
  const encoded = Buffer.from(text, "utf8")
  bytes.write(encoded, 0, encoded.length, 0)
  return bytes
}

/** All of `bytes` as text. */
export const bytesText = (bytes: JobBytes): string => {
  const buffer = Buffer.alloc(bytes.size())
  bytes.read(buffer, 0, buffer.length, 0)
  return buffer.toString("utf8")
}

/** An upload staged in the store, holding `text`. */
export const staged = (text: string) =>
  Effect.gen(function* () {
    const upload = yield* (yield* JobStore).stage()
    const encoded = Buffer.from(text, "utf8")
    upload.bytes.write(encoded, 0, encoded.length, 0)
    return upload
  })

/** The whole of one of a job's files, as text. */
export const fileText = (jobId: string, file: "input" | "results"): Effect.Effect<string, JobStoreError, JobStore> =>
  Effect.gen(function* () {
    const store = yield* JobStore
    return yield* Effect.acquireUseRelease(
      store.open(jobId as never, file),
      (bytes) => Effect.sync(() => bytesText(bytes)),
      (bytes) => Effect.sync(() => bytes.close())
    )
  })

const engine = (() => {
  const made = makeEngine(fixtureContext(), {
    targetGroups: [{ id: "edu", name: "Any institution", criteria: { institutions: { includeSuffixRules: true } } }],
    offers: [{ id: "deal", team: "acme", name: "Deal", status: "active", targetGroups: ["edu"] }]
  })
  if (made instanceof InvalidConfiguration) throw made
  return made
})()

/** What the server passes: the engine's verdicts as result rows (throws for an unknown target), offers counted in the tally. */
export const evaluate: Evaluate = (target, emails, tally) => {
  if ("targetGroupId" in target) {
    return engine.validateMany(emails, target.targetGroupId).map((result, i) => toResultRow(emails[i]!, result))
  }
  const results = engine.validateManyOffer(emails, target.offerId)
  tally?.recordMany(emails, results, Date.now())
  return results.map((result, i) => toOfferResultRow(emails[i]!, result))
}

export const inputText = (items: ReadonlyArray<InputItem>): string =>
  items.map((item) => (typeof item === "string" ? emailLine(item) : JSON.stringify(item))).join("\n") +
  (items.length > 0 ? "\n" : "")

/** A job request for team acme against the target group `edu`, its input staged in the store. */
export const request = (items: ReadonlyArray<InputItem>, overrides: Partial<SubmitJob> = {}) =>
  Effect.map(
    staged(inputText(items)),
    (input): SubmitJob => ({
      team: "acme" as never,
      target: { targetGroupId: "edu" as never },
      total: items.length,
      input,
      ...overrides
    })
  )

/** A queue over `store` (a data directory's files, or a store layer). */
export const queueLayer = (
  store: string | Layer.Layer<JobStore>,
  options: Partial<JobQueueOptions> = {}
): Layer.Layer<JobQueue | JobStore> =>
  JobQueueLocal.layer({
    concurrency: 1,
    maxQueued: 10,
    retentionHours: 24,
    evaluator: evaluateHere(evaluate),
    chunkItems: 4,
    ...options
  }).pipe(Layer.provideMerge(typeof store === "string" ? JobStoreFiles.layerFiles(store) : store))

export type ResultLine = { email: string; isValid: boolean; reasonCode?: string; duplicateOf?: number }

export const parseLines = (text: string): Array<ResultLine> =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line))

/** The rows of a job's results. */
export const resultLines = (jobId: string): Effect.Effect<Array<ResultLine>, JobStoreError, JobStore> =>
  Effect.map(fileText(jobId, "results"), parseLines)

/** 200,000 items for the crash test: repeats (so duplicates matter) and some bad input. */
export const crashInput = (): Array<InputItem> =>
  Array.from({ length: 200_000 }, (_, i) =>
    i % 997 === 0 ? { bad: `item ${i}`, reason: "Not a string." } : `User${i % 150_000}@school${i % 40}.edu`
  )

/** Every kind of queue, fresh for each call: the queue over each store adapter, and the queues shared through Redis and PostgreSQL. */
export const queueAdapters: ReadonlyArray<
  readonly [string, (options?: Partial<JobQueueOptions>) => Layer.Layer<JobQueue | JobStore>]
> = [
  // The one-daemon queue over each store but PostgreSQL's, which serves the shared queue only.
  ...storeAdapters
    .filter(([name]) => name !== "postgres")
    .map(([name, store]) => [name, (options?: Partial<JobQueueOptions>) => queueLayer(store(), options)] as const),
  ...whenRedis("JobQueue contract", [
    [
      "redis (shared queue)",
      (options: Partial<JobQueueOptions> = {}) =>
        JobQueueRedis.layerRedis({
          concurrency: 1,
          maxQueued: 10,
          retentionHours: 24,
          evaluator: evaluateHere(evaluate),
          chunkItems: 4,
          dataDir: makeDataDir(),
          ...options
        }).pipe(Layer.provide(testRedisLayer()))
    ] as const
  ]),
  ...whenPostgres("JobQueue contract", [
    [
      "postgres (shared queue)",
      (options: Partial<JobQueueOptions> = {}) =>
        postgresQueueLayer(testPostgresLayer(JobQueuePostgres.migrations), options)
    ] as const
  ])
]

/** The queue shared through PostgreSQL over `connection`, with the test queue's options. */
export const postgresQueueLayer = (
  connection: Layer.Layer<PostgresConnection>,
  options: Partial<JobQueueOptions> & { readonly dataDir?: string } = {}
): Layer.Layer<JobQueue | JobStore> =>
  JobQueuePostgres.layerPostgres({
    concurrency: 1,
    maxQueued: 10,
    retentionHours: 24,
    evaluator: evaluateHere(evaluate),
    chunkItems: 4,
    dataDir: makeDataDir(),
    ...options
  }).pipe(Layer.provide(connection))
