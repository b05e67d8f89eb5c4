/**
 * Child process of the PostgreSQL usage test: a daemon's recorder over the
 * store at argv[2], flushing every 10 ms. Told to go, it records argv[3]
 * validations of offer "o" in batches of 50 (emails numbered from argv[4],
 * every fifth ineligible), a batch every millisecond or so, then stops,
 * which flushes the rest, and answers how many it recorded.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { layerPostgres } from "../../src/stats/usagePostgres.ts"
import { postgresClientLayer } from "../../src/store/postgres.ts"
import { readyAndWait } from "../childProcesses.ts"
import { eligible, ineligible } from "./fixtures.ts"

const [url, count, first] = process.argv.slice(2).map((arg, i) => (i === 0 ? arg : Number(arg))) as [
  string,
  number,
  number
]

const program = Effect.gen(function* () {
  const stats = yield* UsageStatistics
  yield* Effect.promise(readyAndWait)
  for (let at = 0; at < count; at += 50) {
    const emails = Array.from({ length: Math.min(50, count - at) }, (_, i) => `user${first + at + i}@x.edu`)
    const results = emails.map((email, i) =>
      (at + i) % 5 === 0 ? ineligible(email, "NOT_AN_INSTITUTION") : eligible(email)
    )
    stats.recordMany("o", emails, results)
    yield* Effect.sleep("1 millis")
  }
})

await Effect.runPromise(
  Effect.scoped(
    program.pipe(
      Effect.provide(
        UsageStatistics.layer({ flushIntervalMs: 10, key: hashKeyFromSecret("test") }).pipe(
          Layer.provide(layerPostgres),
          Layer.provide(postgresClientLayer(url))
        )
      )
    )
  )
)
process.stdout.write(`${JSON.stringify({ recorded: count })}\n`)
