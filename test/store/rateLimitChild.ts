/**
 * Child process of the PostgreSQL rate-limit test: connects to the
 * database at argv[2], then, told to go, takes `argv[4]` tokens one request
 * at a time, all at once, from key argv[3] (limit 10 a minute, algorithm
 * argv[5]) and answers how many were admitted and how many refused, by
 * reason.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { postgresClientLayer } from "../../src/store/postgres.ts"
import { layerPostgres } from "../../src/store/rateLimiterPostgres.ts"
import { readyAndWait } from "../childProcesses.ts"

const [url, key, requests, algorithm] = process.argv.slice(2) as [string, string, string, string]

const program = Effect.gen(function* () {
  const limiter = yield* RateLimiter.RateLimiter
  yield* Effect.promise(readyAndWait)
  const outcomes = yield* Effect.all(
    Array.from({ length: Number(requests) }, () =>
      Effect.match(
        limiter.consume({
          key,
          limit: 10,
          window: "60 seconds",
          algorithm: algorithm as "fixed-window" | "token-bucket",
          onExceeded: "fail"
        }),
        { onSuccess: () => "admitted", onFailure: (error) => error.reason._tag }
      )
    ),
    { concurrency: "unbounded" }
  )
  const counts: Record<string, number> = {}
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1
  process.stdout.write(`${JSON.stringify(counts)}\n`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(RateLimiter.layer.pipe(Layer.provide(layerPostgres), Layer.provide(postgresClientLayer(url))))
  )
)
