/**
 * `npm run bench:verifications`: what proof of ownership costs the daemon,
 * measured in one run on the same machine:
 * - the baseline: `POST /api/v1/validate/offer` (plain validation) of
 *   eligible addresses;
 * - `POST /api/v1/verifications` of the same addresses: validation, the
 *   record appended to the journal and fsync'd (group commit), the code's
 *   hash, and the message queued; the outbox transport (the embedded
 *   default) writes each message as an .eml file in the same process.
 * Latency: both sent open-loop at the same fixed rate, BENCH_RATE requests
 * per second (default 200) over up to BENCH_CONNECTIONS (64) kept-alive
 * connections, for BENCH_SECONDS (10) each after a warm-up (a closed loop
 * would only measure how long 64 requests queue behind each other, and
 * autocannon's rate mode counts its own waiting as latency); the p99 the
 * start adds over validation is the figure. Throughput: starts as
 * fast as 64 connections get answers, i.e. verifications started per
 * second on the daemon's one core (one Node process), with the server's CPU
 * time per answer and how many messages had reached the outbox when the run
 * ended. Against the built daemon (`npm run build` first). The per-address
 * message limit and the mailbox cap are raised out of reach, since
 * autocannon's connections send the same addresses; everything else is the default. Progress goes to standard error;
 * the final line on standard output is JSON.
 *
 * Rounds (BENCH_ROUNDS, default 1) each measure the plain validation, then
 * the starts, at the fixed rate, with the daemon's CPU microseconds per
 * request (a figure the shared machine's load moves less than the p99; its
 * difference is what a start adds, its background send included). With
 * BENCH_BEFORE_TREE=DIR (another checkout, built) its daemon runs beside
 * this one, on a config and data directory of its own, the two measured in
 * turn in every round (default 3 rounds), the pair's order alternating;
 * the JSON then carries both and, per round, this daemon's added p99 minus
 * the other's. Goal (jobs and verification issue): added p99 <= 3 ms.
 * Each round also measures the floor under it: an append made durable in
 * the data directory, p99 (`durableAppendP99Ms`), which a start waits for.
 */
import { execFileSync } from "node:child_process"
import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { Agent, request } from "node:http"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { beforeTree, cpuSeconds, prepareConfig, startDaemon } from "./daemonProcess.ts"
import type { LoadOptions } from "./httpLoad.ts"
import { spread } from "./rounds.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const rate = Number(process.env.BENCH_RATE ?? 200)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const warmUpSeconds = Math.max(1, Math.min(3, Math.round(seconds / 3)))
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-verifications-"))
const log = (message: string) => console.error(message)
const offerId = "acme-student-discount"

interface LoadResult {
  readonly perSecond: number
  readonly ok: number
  readonly non2xx: number
  readonly statusCodes: Record<string, number>
  readonly errors: number
  readonly latencyMs: { average: number; p50: number; p90: number; p99: number; max: number }
  readonly seconds: number
}

const measure = (
  side: { name: string; daemon: { url: string; child: { pid?: number | undefined } }; headers: Record<string, string> },
  name: string,
  path: string
) => {
  const options = { url: `${side.daemon.url}${path}`, method: "POST" as const, headers: side.headers, bodies }
  log(`${name}: warm-up ${warmUpSeconds} s`)
  load(side.daemon.child.pid, options, warmUpSeconds)
  log(`${name}: ${seconds} s at ${connections} connections`)
  const result = load(side.daemon.child.pid, options, seconds)
  log(
    `${name}: ${result.perSecond.toLocaleString()} answers/s (2xx), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}, server CPU ${result.cpuMicrosPerAnswer ?? "?"} µs an answer`
  )
  return result
}

const load = (pid: number | undefined, options: Omit<LoadOptions, "connections" | "seconds">, runSeconds: number) => {
  const file = join(root, "load.json")
  writeFileSync(file, JSON.stringify({ ...options, connections, seconds: runSeconds }))
  const before = cpuSeconds(pid)
  const output = execFileSync(process.execPath, [here("httpLoad.ts"), file], { encoding: "utf8", maxBuffer: 1 << 24 })
  const after = cpuSeconds(pid)
  const result = JSON.parse(output.trim().split("\n").at(-1)!) as LoadResult
  const answers = result.ok + result.non2xx
  const cpuMicrosPerAnswer =
    before === undefined || after === undefined || answers === 0
      ? undefined
      : Math.round(((after - before) * 1e6) / answers)
  return { ...result, cpuMicrosPerAnswer }
}

/** Open-loop latencies: one request every 1/rate seconds, whatever the answers, for `runSeconds`. */
const openLoop = async (
  url: string,
  headers: Record<string, string>,
  bodies: ReadonlyArray<string>,
  runSeconds: number
) => {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const target = new URL(url)
  const latencies: Array<number> = []
  const statuses: Record<string, number> = {}
  const total = Math.round(rate * runSeconds)
  const started = performance.now()
  const pending: Array<Promise<void>> = []
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const body = bodies[i % bodies.length]!
    const sent = performance.now()
    pending.push(
      new Promise<void>((resolve) => {
        const call = request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: "POST",
            agent,
            headers: { ...headers, "content-length": Buffer.byteLength(body) }
          },
          (response) => {
            response.resume()
            response.on("end", () => {
              latencies.push(performance.now() - sent)
              statuses[response.statusCode ?? 0] = (statuses[response.statusCode ?? 0] ?? 0) + 1
              resolve()
            })
          }
        )
        call.on("error", () => resolve())
        call.end(body)
      })
    )
  }
  await Promise.all(pending)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 100) / 100
  return {
    requests: total,
    answered: latencies.length,
    statuses,
    latencyMs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) }
  }
}

const settings: ReadonlyArray<readonly [ReadonlyArray<string>, unknown]> = [
  [["rateLimits", "verifications", "requests"], 1_000_000_000],
  [["verification", "maxMessagesPerAddress"], 1_000_000_000],
  [["verification", "mail", "maxMessagesPerMailbox"], 1_000_000_000]
]
const scopes = ["validate:offers", "verifications:write"] as const
const rounds = Number(process.env.BENCH_ROUNDS ?? (beforeTree === undefined ? 1 : 3))
const hosts = ["ox.ac.uk", "cam.ac.uk", "tum.de", "mit.edu", "ethz.ch", "uva.nl", "kuleuven.be", "harvard.edu"]
const bodies = Array.from({ length: 4000 }, (_, i) =>
  JSON.stringify({ email: `student${i}@${hosts[i % hosts.length]}`, offerId })
)

/** A daemon of this checkout, or of BENCH_BEFORE_TREE, on a config and data directory of its own under `root/name`. */
const started = async (name: string, tree: string | undefined) => {
  const dirs = prepareConfig(join(root, name), scopes, settings, tree)
  const daemon = await startDaemon(
    dirs,
    join(root, `${name}.log`),
    process.env.BENCH_CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
  )
  const headers = { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" }
  const check = await fetch(`${daemon.url}/api/v1/verifications`, { method: "POST", headers, body: bodies[1]! })
  if (check.status !== 201) throw new Error(`${name}: start answered ${check.status}: ${await check.text()}`)
  return { name, dirs, daemon, headers }
}
type Started = Awaited<ReturnType<typeof started>>

/** Open-loop latencies of `path` on `side` after a warm-up, with the daemon's CPU microseconds per request. */
const latencyOf = async (side: Started, what: string, path: string) => {
  const url = `${side.daemon.url}${path}`
  log(`${side.name}, ${what}: warm-up ${warmUpSeconds} s`)
  await openLoop(url, side.headers, bodies, warmUpSeconds)
  log(`${side.name}, ${what}: ${seconds} s at ${rate} requests/s`)
  const before = cpuSeconds(side.daemon.child.pid)
  const result = await openLoop(url, side.headers, bodies, seconds)
  const after = cpuSeconds(side.daemon.child.pid)
  const cpuMicrosPerRequest =
    before === undefined || after === undefined ? undefined : Math.round(((after - before) * 1e6) / result.requests)
  log(
    `${side.name}, ${what}: p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, daemon CPU ${cpuMicrosPerRequest ?? "?"} µs a request, answers ${JSON.stringify(result.statuses)}`
  )
  return { ...result, cpuMicrosPerRequest }
}

/**
 * The floor under a start's latency: a record appended and made durable
 * (`fsync`) in `directory`, again and again for `ms`, as the journal
 * does for each group of starts; its p50 and p99 in ms. A start is answered
 * only once its record is durable, so its p99 cannot be below this disk's.
 */
const durableAppendLatency = (directory: string, ms: number) => {
  const file = join(directory, "bench-fsync-probe")
  const fd = openSync(file, "a")
  const record = Buffer.alloc(300, 0x61)
  const took: Array<number> = []
  try {
    for (const until = Date.now() + ms; Date.now() < until; ) {
      const started = process.hrtime.bigint()
      writeSync(fd, record)
      fsyncSync(fd)
      took.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  } finally {
    closeSync(fd)
    rmSync(file, { force: true })
  }
  took.sort((a, b) => a - b)
  const at = (q: number) => Math.round(took[Math.floor(q * (took.length - 1))]! * 100) / 100
  return { p50: at(0.5), p99: at(0.99), appends: took.length }
}

/** One round on `side`: the plain validation, then starts, at the same rate; the p99 (and CPU) a start adds. */
const roundOf = async (side: Started) => {
  const validation = await latencyOf(side, `validate/offer at ${rate}/s (baseline)`, "/api/v1/validate/offer")
  const starts = await latencyOf(side, `verifications at ${rate}/s`, "/api/v1/verifications")
  const durableAppendMs = durableAppendLatency(side.dirs.dataDir, 3000)
  log(
    `${side.name}, an append made durable in the data directory: p50 ${durableAppendMs.p50} ms, p99 ${durableAppendMs.p99} ms`
  )
  return {
    durableAppendMs,
    addedP99Ms: Math.round((starts.latencyMs.p99 - validation.latencyMs.p99) * 100) / 100,
    addedCpuMicros:
      starts.cpuMicrosPerRequest === undefined || validation.cpuMicrosPerRequest === undefined
        ? undefined
        : starts.cpuMicrosPerRequest - validation.cpuMicrosPerRequest,
    validation,
    starts
  }
}

const sides: Array<Started> = []
try {
  const main = await started("after", undefined)
  sides.push(main)
  const before = beforeTree === undefined ? undefined : await started("before", beforeTree)
  if (before !== undefined) sides.push(before)
  log(`node ${process.version}, ${availableParallelism()} CPUs; daemon at ${main.daemon.url}; working in ${root}`)
  const measured = new Map<string, Array<Awaited<ReturnType<typeof roundOf>>>>()
  for (let round = 0; round < rounds; round++) {
    // The pair's order alternates, so neither daemon always runs on a machine the other just warmed.
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      measured.set(side.name, [...(measured.get(side.name) ?? []), await roundOf(side)])
    }
  }
  const outboxBefore = readdirSync(join(main.dirs.dataDir, "outbox")).length
  const starts = measure(main, "verifications as fast as answered (outbox transport)", "/api/v1/verifications")
  await new Promise((resolve) => setTimeout(resolve, 200))
  const delivered = readdirSync(join(main.dirs.dataDir, "outbox")).length - outboxBefore
  const exitCodes = await Promise.all(
    sides.map((side) => {
      side.daemon.child.kill("SIGTERM")
      return side.daemon.exited
    })
  )
  const summary = (name: string) => {
    const runs = measured.get(name)!
    const cpu = runs.flatMap((run) => (run.addedCpuMicros === undefined ? [] : [run.addedCpuMicros]))
    return {
      addedP99Ms: spread(runs.map((run) => run.addedP99Ms)),
      addedCpuMicros: cpu.length === 0 ? undefined : spread(cpu),
      validationP99Ms: spread(runs.map((run) => run.validation.latencyMs.p99)),
      startP99Ms: spread(runs.map((run) => run.starts.latencyMs.p99)),
      startCpuMicros: spread(runs.flatMap((run) => run.starts.cpuMicrosPerRequest ?? [])),
      durableAppendP99Ms: spread(runs.map((run) => run.durableAppendMs.p99))
    }
  }
  const after = summary(main.name)
  const lastRound = measured.get(main.name)!.at(-1)!
  console.log(
    JSON.stringify({
      seconds,
      connections,
      rate,
      rounds,
      startsPerSecond: starts.perSecond,
      validationP99Ms: after.validationP99Ms.median,
      startP99Ms: after.startP99Ms.median,
      addedP99Ms: after.addedP99Ms.median,
      /** The data directory's disk: an append made durable, p99 (the floor under a start's p99). */
      durableAppendP99Ms: after.durableAppendP99Ms.median,
      /** The daemon's CPU a start takes over a plain validation, at the fixed rate (its background work included). */
      addedCpuMicros: after.addedCpuMicros?.median,
      startCpuMicrosPerAnswer: starts.cpuMicrosPerAnswer,
      after,
      ...(before === undefined
        ? {}
        : {
            beforeTree,
            before: summary(before.name),
            /** Within each round: this daemon's figure minus the before daemon's. */
            addedP99MsOverBefore: spread(
              measured
                .get(main.name)!
                .map((run, i) => Math.round((run.addedP99Ms - measured.get(before.name)![i]!.addedP99Ms) * 100) / 100)
            )
          }),
      goals: { addedP99Ms: after.addedP99Ms.median <= 3 },
      details: {
        node: process.version,
        cpus: availableParallelism(),
        daemonExitCodes: exitCodes,
        messagesInOutbox: delivered,
        startsAnswered: starts.ok + starts.non2xx,
        validation: lastRound.validation,
        startsAtRate: lastRound.starts,
        starts
      }
    })
  )
} finally {
  for (const side of sides) if (side.daemon.child.exitCode === null) side.daemon.child.kill("SIGTERM")
  rmSync(root, { recursive: true, force: true })
}
