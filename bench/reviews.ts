/**
 * `npm run bench:reviews`: the review queue stays bounded under 1M distinct
 * unknown domains (issue 45). For each adapter (memory, files, and Redis
 * when one answers at CAMPUSGATE_TEST_REDIS_URL or 127.0.0.1:6379), records
 * `BENCH_DOMAINS` (default 1,000,000) distinct random unknown domains — and
 * repeats of a hot set of 1,000 among them, one sighting in ten — through
 * the in-memory buffer (`ReviewQueue`), flushing every 100,000 sightings as
 * the daemon's interval would, with the default bound
 * (`reviews.maxDomainsPerTeam`: 10,000), and reports heap and RSS before
 * and after (after a full collection), entries kept and dropped.
 *
 * Also the hot path's cost: `makeValidation`'s many-emails loop on the
 * benchmark's engine and emails with the review queue's buffer against
 * without, rounds alternating (`bench/rounds.ts`), as the ratio of rates.
 * `--quick` (or BENCH_QUICK=1) for a short check. Prints progress, then one
 * final JSON line.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeValidation } from "../src/app/ValidationService.ts"
import type { ValidationResult } from "../src/domain/ValidationResult.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { DEFAULT_MAX_DOMAINS_PER_TEAM } from "../src/reviews/queueEntries.ts"
import { ReviewBuffer, ReviewQueue } from "../src/reviews/ReviewQueue.ts"
import { ReviewStore } from "../src/reviews/ReviewStore.ts"
import { layerRedis as reviewStoreRedis } from "../src/reviews/reviewRedis.ts"
import { redisAnswers, testRedisLayer, testRedisUrl } from "../test/redisTesting.ts"
import { BENCH_TARGET_GROUP, makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"
import { quick, ratios, spread, timed } from "./rounds.ts"

const domains = Number(process.env.BENCH_DOMAINS ?? (quick ? 100_000 : 1_000_000))
const FLUSH_EVERY = 100_000
const TEAM = "bench"

const gc = (globalThis as { gc?: () => void }).gc
const memory = () => {
  gc?.()
  const { heapUsed, rss } = process.memoryUsage()
  return { heapMb: Math.round(heapUsed / 1e5) / 10, rssMb: Math.round(rss / 1e5) / 10 }
}

/** A deterministic generator, so every adapter meets the same domains. */
const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 2 ** 32
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz"
const randomLabel = (next: () => number): string => {
  let label = ""
  const length = 6 + Math.floor(next() * 10)
  for (let i = 0; i < length; i++) label += LETTERS[Math.floor(next() * 26)]
  return label
}

/** A result as the engine answers an unknown domain (the fields the queue reads). */
const unknownResult = (domain: string, score: number): ValidationResult =>
  ({
    isValid: false,
    reasonCode: "UNKNOWN_INSTITUTION",
    validationDetails: {
      domain: {
        status: "failed",
        domain,
        candidate: { domain, score, signals: [{ signal: "shape", detail: "bench", weight: score }] }
      }
    }
  }) as unknown as ValidationResult

const runAdapter = (name: string, store: Layer.Layer<ReviewStore, unknown>) =>
  Effect.gen(function* () {
    const before = memory()
    const started = performance.now()
    const next = random(7)
    const hot = Array.from({ length: 1000 }, () => `${randomLabel(next)}-college.de`)
    const stats = yield* Effect.gen(function* () {
      const queue = yield* ReviewQueue
      const stored = yield* ReviewStore
      let sightings = 0
      let peakHeap = 0
      for (let i = 0; i < domains; i++) {
        queue.sighted(TEAM, unknownResult(`${randomLabel(next)}.${i % 7 === 0 ? "edu.pl" : "de"}`, next()))
        sightings++
        if (i % 10 === 0) {
          queue.sighted(TEAM, unknownResult(hot[Math.floor(next() * hot.length)]!, 0.8))
          sightings++
        }
        if (sightings % FLUSH_EVERY < 2 && i > 0) {
          yield* queue.flush
          peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
        }
      }
      yield* queue.flush
      const view = yield* stored.queue(TEAM)
      return {
        sightings,
        kept: view.entries.length,
        dropped: view.dropped,
        peakHeapMb: Math.round(peakHeap / 1e5) / 10
      }
    }).pipe(
      Effect.provide(ReviewQueue.layer({ flushIntervalMs: 3_600_000 }).pipe(Layer.provideMerge(store), Layer.orDie))
    )
    const after = memory()
    const seconds = Math.round((performance.now() - started) / 10) / 100
    console.error(
      `${name}: ${stats.sightings} sightings of ${domains} distinct domains in ${seconds} s, kept ${stats.kept}, dropped ${stats.dropped}; heap at flushes at most ${stats.peakHeapMb} MB; heap ${before.heapMb} -> ${after.heapMb} MB, RSS ${before.rssMb} -> ${after.rssMb} MB`
    )
    return { adapter: name, ...stats, seconds, before, after }
  })

const adapters: Array<{ readonly name: string; readonly layer: () => Layer.Layer<ReviewStore, unknown> }> = [
  { name: "memory", layer: () => ReviewStore.layerMemory },
  {
    name: "files",
    layer: () => {
      const dir = mkdtempSync(join(tmpdir(), "campusgate-bench-reviews-"))
      return ReviewStore.layerFiles(dir).pipe(
        Layer.tap(() => Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      )
    }
  }
]
if (await redisAnswers(testRedisUrl)) {
  // Its keys under a fresh prefix, deleted when the layer is released.
  adapters.push({ name: "redis", layer: () => reviewStoreRedis.pipe(Layer.provide(testRedisLayer())) })
} else console.error(`no Redis answers at ${testRedisUrl}: the Redis adapter is left out`)

const stores = []
for (const adapter of adapters)
  stores.push(await Effect.runPromise(Effect.scoped(runAdapter(adapter.name, adapter.layer()))))

// The hot path: the many-emails loop with the buffer against without.
const table = buildInstitutionTable()
const engine = makeBenchEngine(table)
const emails = generateEmails(table, quick ? 50_000 : 300_000)
const snapshot = { current: () => ({ engine }) }
const usage = { record: () => undefined, recordMany: () => undefined }
const counters = { validated: () => undefined, validatedAll: () => undefined }
const buffer = new ReviewBuffer(
  () => DEFAULT_MAX_DOMAINS_PER_TEAM,
  () => Date.now()
)
const without = makeValidation(snapshot, usage, counters)
const withQueue = makeValidation(snapshot, usage, counters, buffer)
const pass = (validation: typeof without) => () => {
  const results = validation.manyTargetGroup(TEAM, emails, BENCH_TARGET_GROUP)
  if (!Array.isArray(results)) throw results
  let valid = 0
  for (const result of results) if (result.isValid) valid++
  return valid
}
const rates = { without: [] as Array<number>, with: [] as Array<number> }
const rounds = quick ? 3 : 7
for (let r = 0; r < rounds + 1; r++) {
  const order = r % 2 === 0 ? (["without", "with"] as const) : (["with", "without"] as const)
  for (const side of order) {
    const { cpuMs } = timed(pass(side === "with" ? withQueue : without))
    if (r > 0) rates[side].push(emails.length / (cpuMs / 1000))
  }
  buffer.take()
}
const ratio = spread(ratios(rates.with, rates.without), 3)
const unknownShare = (() => {
  const results = without.manyTargetGroup(TEAM, emails, BENCH_TARGET_GROUP)
  if (!Array.isArray(results)) return 0
  const met = results.filter(
    (result) => result.reasonCode === "UNKNOWN_INSTITUTION" || result.reasonCode === "LIKELY_INSTITUTION"
  ).length
  return Math.round((met / results.length) * 1000) / 1000
})()
console.error(
  `validation with the review buffer: ${ratio.median}x the rate without (${ratio.min}-${ratio.max}); ${unknownShare * 100}% of the emails met an unknown domain`
)

console.log(
  JSON.stringify({
    domains,
    maxDomainsPerTeam: DEFAULT_MAX_DOMAINS_PER_TEAM,
    stores,
    hotPath: {
      emails: emails.length,
      withOverWithout: ratio,
      withPerSecond: spread(rates.with, 0),
      withoutPerSecond: spread(rates.without, 0),
      unknownShare
    }
  })
)
