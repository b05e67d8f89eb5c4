/**
 * `npm run bench:stores`: single validations (`POST /api/v1/validate/target-group`)
 * on every store kind in the same rounds — one daemon each on files, on
 * Redis, on PostgreSQL, and on PostgreSQL with rate-limit counters in Redis
 * (`cache: redis`) — so a figure of one kind is always set beside the
 * others' measured moments apart. The target: PostgreSQL with Redis at
 * least 0.9× files (a validation records its usage asynchronously, so the
 * store should stay off the request path).
 *
 * The daemons run pinned to one core and wrk to another (`taskset`, where
 * the machine allows); the stores are servers of their own — a Redis the
 * script starts (`redis-server` must be installed) and a fresh database on
 * the PostgreSQL of `CAMPUSGATE_BENCH_DATABASE_URL` (default
 * `postgres://postgres@127.0.0.1:5432/test`), dropped afterwards — and run
 * where the scheduler puts them, as they would beside a daemon.
 *
 * BENCH_ROUNDS (default 5), BENCH_SECONDS (default 5) and BENCH_CONNECTIONS
 * (default 64) shape the run; `--quick` makes it a check that it works.
 * Progress goes to standard error; the final line on standard output is
 * JSON: answers/s, p99 and server CPU per answer of each kind (median, min,
 * max over the rounds), and each kind's ratio to files, taken per round.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { PgClient, postgresClientLayer } from "../src/store/postgres.ts"
import { type BenchConfig, cpuSeconds, type DaemonProcess, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"
import { startRedisServer } from "./redisServer.ts"
import { quick, ratios, spread } from "./rounds.ts"
import { chooseCores, pinProcess, requireWrk, runWrk } from "./wrkLoad.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5))
const seconds = Number(process.env.BENCH_SECONDS ?? (quick ? 1 : 5))
const warmUpSeconds = quick ? 1 : 3
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const serverUrl = process.env.CAMPUSGATE_BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const targetGroupId = "uk-students"
const log = (message: string) => console.error(message)

requireWrk()
const cpuCount = availableParallelism()
const cores = chooseCores()
if (cores !== undefined) pinProcess(process.pid, cores.load)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-stores-"))

/** Runs `statement` on the server's own database (creating and dropping the bench's). */
const onServer = (statement: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(postgresClientLayer(serverUrl)))
  )

const databaseName = `cgbench_${randomBytes(6).toString("hex")}`
const databaseUrl = (() => {
  const url = new URL(serverUrl)
  url.pathname = `/${databaseName}`
  return url.toString()
})()

const redis = await startRedisServer(root)
const redisUrl = redis.url
await onServer(`create database ${databaseName}`)

type Kind = "files" | "redis" | "postgres" | "postgresRedis"
const kinds: ReadonlyArray<Kind> = ["files", "redis", "postgres", "postgresRedis"]
const storeOf: Record<Kind, unknown> = {
  files: undefined,
  redis: { kind: "redis", url: redisUrl, keyPrefix: "bench-redis:" },
  postgres: { kind: "postgres", url: databaseUrl },
  // Its own key prefix, and the same database: the PostgreSQL daemons share their records as replicas would.
  postgresRedis: { kind: "postgres", url: databaseUrl, cache: "redis", cacheUrl: redisUrl, keyPrefix: "bench-pgr:" }
}

interface Measurement {
  readonly perSecond: number
  readonly p99Us: number
  readonly non2xx: number
  readonly cpuMicrosPerAnswer: number | undefined
}

const daemons = new Map<Kind, { readonly dirs: BenchConfig; readonly process: DaemonProcess }>()
try {
  log(
    `node ${process.version}, ${cpuCount} CPUs; ${cores === undefined ? "not pinned" : `daemons on CPU ${cores.server}, wrk on CPU ${cores.load}`}; Redis at ${redisUrl}; database ${databaseName}; ${rounds} rounds of ${seconds} s at ${connections} connections`
  )
  // One at a time: the first PostgreSQL daemon applies the schema, the second finds it.
  for (const kind of kinds) {
    const store = storeOf[kind]
    const dirs = prepareConfig(
      join(root, kind),
      ["validate:target-groups"],
      store === undefined ? [] : [[["store"], store]]
    )
    const process = await startDaemon(dirs, join(root, `${kind}.log`), [], [], cores?.server)
    daemons.set(kind, { dirs, process })
    log(`${kind}: ${process.url}`)
  }

  // Emails of the benchmark mix that answer 200 (valid or not; malformed ones are 400s), each sent once to every
  // daemon first: what a daemon builds on first use (the knowledge of unknown hosts) is built before the clock runs.
  const table = buildInstitutionTable()
  const bodies: Array<string> = []
  for (const email of generateEmails(table, 400, 7)) {
    const body = JSON.stringify({ email, targetGroupId })
    const statuses = await Promise.all(
      kinds.map(async (kind) => {
        const { dirs, process } = daemons.get(kind)!
        const answer = await fetch(`${process.url}/api/v1/validate/target-group`, {
          method: "POST",
          headers: { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" },
          body
        })
        return answer.status
      })
    )
    if (statuses.every((status) => status === 200)) bodies.push(body)
  }
  const bodiesFile = join(root, "single.txt")
  writeFileSync(bodiesFile, `${bodies.join("\n")}\n`)

  const measure = (kind: Kind, runSeconds: number): Measurement => {
    const { dirs, process } = daemons.get(kind)!
    const cpuBefore = cpuSeconds(process.child.pid)
    const result = runWrk({
      url: `${process.url}/api/v1/validate/target-group`,
      headers: { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" },
      bodiesFile,
      connections,
      seconds: runSeconds,
      cpus: cores?.load
    })
    const cpuAfter = cpuSeconds(process.child.pid)
    const ok = result.requests - result.non2xx
    return {
      perSecond: Math.round(ok / (result.durationUs / 1e6)),
      p99Us: result.latencyUs.p99,
      non2xx: result.non2xx,
      cpuMicrosPerAnswer:
        cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
          ? undefined
          : Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests)
    }
  }

  for (const kind of kinds) {
    log(`warm-up: ${kind}`)
    measure(kind, warmUpSeconds)
  }
  const measured: Record<Kind, Array<Measurement>> = { files: [], redis: [], postgres: [], postgresRedis: [] }
  for (let round = 0; round < rounds; round++) {
    // Each round starts with another kind, so a disturbed stretch of the machine does not always hit the same one.
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(i + round) % kinds.length]!
      const result = measure(kind, seconds)
      measured[kind].push(result)
      log(
        `round ${round + 1}, ${kind}: ${result.perSecond.toLocaleString()}/s, p99 ${result.p99Us} µs, ${result.cpuMicrosPerAnswer ?? "?"} µs CPU an answer, non-2xx ${result.non2xx}`
      )
    }
  }

  const figures = Object.fromEntries(
    kinds.map((kind) => {
      const runs = measured[kind]
      const cpu = runs.flatMap((run) => (run.cpuMicrosPerAnswer === undefined ? [] : [run.cpuMicrosPerAnswer]))
      return [
        kind,
        {
          perSecond: spread(
            runs.map((run) => run.perSecond),
            0
          ),
          p99Ms: spread(runs.map((run) => run.p99Us / 1000)),
          cpuMicrosPerAnswer: cpu.length === 0 ? null : spread(cpu, 0),
          non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0)
        }
      ]
    })
  )
  const perSecond = (kind: Kind) => measured[kind].map((run) => run.perSecond)
  const vsFiles = Object.fromEntries(
    kinds.filter((kind) => kind !== "files").map((kind) => [kind, spread(ratios(perSecond(kind), perSecond("files")))])
  ) as Record<Exclude<Kind, "files">, ReturnType<typeof spread>>
  console.log(
    JSON.stringify({
      rounds,
      seconds,
      connections,
      cpus: cpuCount,
      pinned: cores ?? null,
      single: figures,
      vsFiles,
      postgresRedisGoal: vsFiles.postgresRedis.median >= 0.9
    })
  )
} finally {
  for (const { process } of daemons.values()) {
    if (process.child.exitCode === null) process.child.kill("SIGTERM")
    await process.exited
  }
  await redis.stop()
  await onServer(`drop database if exists ${databaseName} with (force)`).catch(() => undefined)
  rmSync(root, { recursive: true, force: true })
}
