/**
 * Child process of the statistics crash test: records validations at a
 * steady rate (a batch every 5 ms) with a short flush interval, and reports
 * `<recorded so far> <epoch ms>` after each batch, until it is killed.
 */
import * as Effect from "effect/Effect"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { eligible, ineligible } from "./fixtures.ts"

const dataDir = process.argv[2]!
const flushIntervalMs = Number(process.argv[3])
const batch = 50
const emails = Array.from({ length: batch }, (_, i) => `student${i}@uni.edu`)
const results = emails.map((email, i) => (i % 5 === 0 ? ineligible(email, "NOT_AN_INSTITUTION") : eligible(email)))

const program = Effect.gen(function* () {
  const stats = yield* UsageStatistics
  process.stdout.write("ready\n")
  for (let recorded = batch; ; recorded += batch) {
    stats.recordMany("o", emails, results)
    process.stdout.write(`${recorded} ${Date.now()}\n`)
    yield* Effect.sleep(5)
  }
})

Effect.runFork(Effect.scoped(program.pipe(Effect.provide(UsageStatistics.layerFile({ dataDir, flushIntervalMs })))))
