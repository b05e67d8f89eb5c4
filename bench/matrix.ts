/**
 * `npm run bench:matrix` (`-- --quick` or BENCH_QUICK=1 for a short check):
 * single validations (`POST /api/v1/validate/target-group`, 64
 * connections, wrk) across the deployment choices that change their cost,
 * measured in the same alternating rounds:
 * - the store, files or Redis, each with request logging on (the default:
 *   `logging.level: info`, a line per answer to the daemon's log file) and
 *   off (`logging.level: warn`);
 * - `serve --workers 2` against one daemon (`--workers 1` is one daemon, no
 *   cluster: the Redis cell with logging on). More than one worker needs a
 *   shared store (the file store refuses it, `server/workers.ts`), so the
 *   workers run on Redis. Two cells: the workers on two cores, a core each
 *   (answers/s, and CPU per answer beside one daemon's) — with the load
 *   generator on a core of its own where the machine has three, else
 *   sharing one with a worker (the JSON says which: `loadSharesCore`); and
 *   both workers on the one server core, more workers than cores, which
 *   costs CPU per answer (two engines' working sets in one core's caches).
 * CPU per answer is the daemon's process tree (the primary and its
 * workers, every thread) over the answers; each Redis daemon has a Redis
 * server of its own, started here (`redis-server` must be installed) and
 * removed after, so its commands per answer (`INFO commandstats`) and its
 * CPU are that daemon's alone, background polls included. The daemons run
 * pinned to one core and wrk to another (`taskset`, as `bench/http.ts`).
 * Ratios are taken within each round (Redis/files, logging on/off, two
 * workers/one), then their median and range reported.
 *
 * BENCH_ROUNDS (default 5), BENCH_SECONDS (default 5), BENCH_CONNECTIONS
 * (default 64); BENCH_BEFORE_TREE=DIR (another checkout, built) adds its
 * daemons on files and on Redis, logging on, and their ratios to this one's.
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import {
  type BenchConfig,
  beforeTree,
  cpuSeconds,
  type DaemonProcess,
  freePort,
  prepareConfig,
  processTree,
  startDaemon,
  treeCpuSeconds
} from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"
import { type BenchRedisServer, startRedisServer } from "./redisServer.ts"
import { quick, ratios, type Spread, spread } from "./rounds.ts"
import { chooseCores, pinProcess, requireWrk, runWrk } from "./wrkLoad.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5))
const seconds = Number(process.env.BENCH_SECONDS ?? (quick ? 1 : 5))
const warmUpSeconds = quick ? 1 : 3
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const targetGroupId = "uk-students"
const path = "/api/v1/validate/target-group"
const log = (message: string) => console.error(message)

requireWrk()
const cpuCount = availableParallelism()
const cores = chooseCores()
/** The CPUs this process may use (`Cpus_allowed_list`), to give two workers two cores without the load's where it can. */
const allowedCpus = (): Array<number> => {
  const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? ""
  return list.split(",").flatMap((part) => {
    const [first, last] = part.split("-").map(Number) as [number, number | undefined]
    return Number.isNaN(first) ? [] : Array.from({ length: (last ?? first) - first + 1 }, (_, i) => first + i)
  })
}
const spareCpu = allowedCpus().find((cpu) => String(cpu) !== cores?.server && String(cpu) !== cores?.load)
/** Two cores for two workers: the server's and a third one, else the server's and the load generator's. */
const workersCores = cores === undefined ? undefined : `${cores.server},${spareCpu ?? cores.load}`
const loadSharesCore = cores === undefined || spareCpu === undefined
// The orchestrator (idle while wrk runs) stays off the server's core.
if (cores !== undefined) pinProcess(process.pid, cores.load)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-matrix-"))

/** The Redis servers started, one a daemon on Redis. */
const redisServers: Array<BenchRedisServer> = []
const startRedis = async (): Promise<BenchRedisServer> => {
  const server = await startRedisServer(root)
  redisServers.push(server)
  return server
}

type CellName =
  | "filesLogOn"
  | "filesLogOff"
  | "redisLogOn"
  | "redisLogOff"
  | "twoWorkersOneCore"
  | "twoWorkersTwoCores"
  | "beforeFilesLogOn"
  | "beforeRedisLogOn"

interface Daemon {
  readonly dirs: BenchConfig
  readonly process: DaemonProcess
  readonly redis: BenchRedisServer | undefined
  readonly workers: number
}

/** A single validation sent to `daemon` on a connection of its own: the answer's status. */
const post = (daemon: Daemon, body: string) =>
  new Promise<number>((resolve, reject) => {
    const sent = request(
      `${daemon.process.url}${path}`,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${daemon.dirs.key}`, "content-type": "application/json" }
      },
      (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
      }
    )
    sent.on("error", reject)
    sent.end(body)
  })

interface Cell {
  readonly name: CellName
  readonly daemon: Daemon
  /** The cores its process tree runs on while it is measured. */
  readonly cpus: string | undefined
}

interface Measurement {
  readonly perSecond: number
  readonly p99Us: number
  readonly non2xx: number
  readonly socketErrors: number
  readonly cpuMicrosPerAnswer: number
  readonly storeCommandsPerAnswer: number | undefined
  readonly storeCpuMicrosPerAnswer: number | undefined
}

const scopes = ["validate:target-groups"] as const
const LOGGING_OFF = [["logging", "level"], "warn"] as const

/** One daemon: on files or on a Redis of its own, logging on or off, one process or `--workers`. */
const startOne = async (
  name: string,
  options: { redis: boolean; logging: boolean; workers?: number; tree?: string | undefined }
): Promise<Daemon> => {
  const redis = options.redis ? await startRedis() : undefined
  const settings: Array<readonly [ReadonlyArray<string>, unknown]> = []
  if (redis !== undefined) settings.push([["store"], { kind: "redis", url: redis.url, keyPrefix: "bench:" }])
  if (!options.logging) settings.push(LOGGING_OFF)
  const dirs = prepareConfig(join(root, name), scopes, settings, options.tree)
  const logFile = join(root, `${name}.log`)
  const workers = options.workers ?? 1
  const serveArgs = workers > 1 ? ["--workers", String(workers)] : []
  const port = await freePort()
  const process = await startDaemon(dirs, logFile, [], serveArgs, cores?.server, port)
  // /healthz answers once one worker listens: wait for the others to say so too.
  for (const deadline = Date.now() + 30_000; ; ) {
    const listening = readFileSync(logFile, "utf8").split('"msg":"listening"').length - 1
    if (workers === 1 || listening >= workers) break
    if (Date.now() > deadline) throw new Error(`${name}: ${listening} of ${workers} workers listen`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  log(`${name}: ${process.url}${redis === undefined ? "" : ` on ${redis.url}`}`)
  return { dirs, process, redis, workers }
}

const daemons: Array<Daemon> = []
const started = async (name: string, options: Parameters<typeof startOne>[1]) => {
  const daemon = await startOne(name, options)
  daemons.push(daemon)
  return daemon
}

/** One wrk run against a cell: answers/s, p99, and the CPU and store commands per answer over it. */
const measure = (cell: Cell, bodiesFile: string, runSeconds: number): Measurement => {
  const { dirs, process, redis } = cell.daemon
  const pid = process.child.pid!
  if (cell.cpus !== undefined) for (const member of processTree(pid)) pinProcess(member, cell.cpus)
  const cpuBefore = treeCpuSeconds(pid)
  const commandsBefore = redis?.commands()
  const redisCpuBefore = cpuSeconds(redis?.child.pid)
  const result = runWrk({
    url: `${process.url}${path}`,
    headers: { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" },
    bodiesFile,
    connections,
    seconds: runSeconds,
    cpus: cores?.load
  })
  const cpuAfter = treeCpuSeconds(pid)
  const commandsAfter = redis?.commands()
  const redisCpuAfter = cpuSeconds(redis?.child.pid)
  const answers = Math.max(1, result.requests)
  const ok = result.requests - result.non2xx
  return {
    perSecond: Math.round(ok / (result.durationUs / 1e6)),
    p99Us: result.latencyUs.p99,
    non2xx: result.non2xx,
    socketErrors: Object.values(result.socketErrors).reduce((sum, count) => sum + count, 0),
    cpuMicrosPerAnswer:
      cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
        ? Number.NaN
        : ((cpuAfter - cpuBefore) * 1e6) / answers,
    // The INFO call that reads the count is one command of its own.
    storeCommandsPerAnswer:
      commandsBefore === undefined || commandsAfter === undefined
        ? undefined
        : (commandsAfter - commandsBefore - 1) / answers,
    storeCpuMicrosPerAnswer:
      redisCpuBefore === undefined || redisCpuAfter === undefined
        ? undefined
        : ((redisCpuAfter - redisCpuBefore) * 1e6) / answers
  }
}

try {
  log(
    `node ${process.version}, ${cpuCount} CPUs; ${cores === undefined ? "not pinned" : `daemons on CPU ${cores.server}, wrk on CPU ${cores.load}, two workers on CPUs ${workersCores}${loadSharesCore ? " (sharing the load generator's)" : ""}`}; ${rounds} rounds of ${seconds} s at ${connections} connections; working in ${root}`
  )
  const cells: Array<Cell> = []
  const add = (name: CellName, daemon: Daemon, cpus = cores?.server) => cells.push({ name, daemon, cpus })
  add("filesLogOn", await started("files-log-on", { redis: false, logging: true }))
  add("filesLogOff", await started("files-log-off", { redis: false, logging: false }))
  const redisLogOn = await started("redis-log-on", { redis: true, logging: true })
  add("redisLogOn", redisLogOn)
  add("redisLogOff", await started("redis-log-off", { redis: true, logging: false }))
  // One daemon of two workers, moved between one core and two before each of its cells.
  const twoWorkers = await started("workers-2", { redis: true, logging: true, workers: 2 })
  add("twoWorkersOneCore", twoWorkers)
  add("twoWorkersTwoCores", twoWorkers, workersCores)
  if (beforeTree !== undefined) {
    add("beforeFilesLogOn", await started("before-files", { redis: false, logging: true, tree: beforeTree }))
    add("beforeRedisLogOn", await started("before-redis", { redis: true, logging: true, tree: beforeTree }))
  }

  // Emails of the benchmark mix that answer 200 (valid or not; malformed ones are 400s), each sent to every
  // daemon first, once per worker (a connection each: the cluster deals connections out in turn), so what a
  // daemon builds on first use (the knowledge of unknown hosts) is built before the clock runs.
  const bodies: Array<string> = []
  const emails = generateEmails(buildInstitutionTable(), 400, 7)
  const first = daemons[0]!
  for (const email of emails) {
    const body = JSON.stringify({ email, targetGroupId })
    if ((await post(first, body)) === 200) bodies.push(body)
  }
  await Promise.all(
    daemons.map(async (daemon) => {
      for (const body of bodies) for (let i = 0; i < daemon.workers; i++) await post(daemon, body)
    })
  )
  const bodiesFile = join(root, "single.txt")
  writeFileSync(bodiesFile, `${bodies.join("\n")}\n`)

  // Warm-up: every daemon (each of its workers, over 64 connections) meets every email before the clock runs.
  for (const cell of cells) {
    log(`warm-up: ${cell.name}`)
    measure(cell, bodiesFile, warmUpSeconds)
  }
  const measured = new Map<CellName, Array<Measurement>>(cells.map((cell) => [cell.name, []]))
  for (let round = 0; round < rounds; round++) {
    // Each round starts with another cell, so a disturbed stretch of the machine does not always hit the same one.
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[(i + round) % cells.length]!
      const result = measure(cell, bodiesFile, seconds)
      measured.get(cell.name)!.push(result)
      log(
        `round ${round + 1}, ${cell.name}: ${result.perSecond.toLocaleString()}/s, p99 ${result.p99Us} µs, ${result.cpuMicrosPerAnswer.toFixed(1)} µs CPU an answer${result.storeCommandsPerAnswer === undefined ? "" : `, ${result.storeCommandsPerAnswer.toFixed(4)} Redis commands an answer`}, non-2xx ${result.non2xx}, socket errors ${result.socketErrors}`
      )
    }
  }

  /** The spread of the finite values (a run that got no answer has no CPU per answer, a ratio over it none). */
  const spreadOf = (values: ReadonlyArray<number>, digits: number): Spread | null => {
    const finite = values.filter(Number.isFinite)
    return finite.length === 0 ? null : spread(finite, digits)
  }
  const runs = (name: CellName) => measured.get(name) ?? []
  const perSecond = (name: CellName) => runs(name).map((run) => run.perSecond)
  const cpu = (name: CellName) => runs(name).map((run) => run.cpuMicrosPerAnswer)
  const figures = Object.fromEntries(
    cells.map(({ name }) => {
      const commands = runs(name).flatMap((run) => run.storeCommandsPerAnswer ?? [])
      const storeCpu = runs(name).flatMap((run) => run.storeCpuMicrosPerAnswer ?? [])
      return [
        name,
        {
          perSecond: spread(perSecond(name), 0),
          cpuMicrosPerAnswer: spreadOf(cpu(name), 1),
          p99Us: spread(
            runs(name).map((run) => run.p99Us),
            0
          ),
          non2xx: runs(name).reduce((sum, run) => sum + run.non2xx, 0),
          socketErrors: runs(name).reduce((sum, run) => sum + run.socketErrors, 0),
          ...(commands.length === 0
            ? {}
            : { storeCommandsPerAnswer: spreadOf(commands, 4), storeCpuMicrosPerAnswer: spreadOf(storeCpu, 2) })
        }
      ]
    })
  )
  /** Per round: `a`'s answers/s over `b`'s, and `a`'s CPU per answer over `b`'s. */
  const versus = (a: CellName, b: CellName): { perSecond: Spread | null; cpuPerAnswer: Spread | null } => ({
    perSecond: spreadOf(ratios(perSecond(a), perSecond(b)), 3),
    cpuPerAnswer: spreadOf(ratios(cpu(a), cpu(b)), 3)
  })
  const redisVsFiles = {
    loggingOn: versus("redisLogOn", "filesLogOn"),
    loggingOff: versus("redisLogOff", "filesLogOff")
  }
  const twoWorkersVsOne = {
    /** A core each (wrk's shared where `loadSharesCore`): answers/s, and what a worker adds to each answer's CPU. */
    aCoreEach: versus("twoWorkersTwoCores", "redisLogOn"),
    /** Both on the one server core, more workers than cores: what two engines on one core's caches cost. */
    bothOnOneCore: versus("twoWorkersOneCore", "redisLogOn"),
    loadSharesCore
  }
  console.log(
    JSON.stringify({
      mode: quick ? "quick" : "full",
      rounds,
      seconds,
      connections,
      cpus: cpuCount,
      pinned: cores === undefined ? null : { ...cores, twoWorkers: workersCores },
      beforeTree: beforeTree ?? null,
      single: figures,
      redisVsFiles,
      loggingOnVsOff: { files: versus("filesLogOn", "filesLogOff"), redis: versus("redisLogOn", "redisLogOff") },
      twoWorkersVsOne,
      ...(beforeTree === undefined
        ? {}
        : {
            afterVsBefore: {
              files: versus("filesLogOn", "beforeFilesLogOn"),
              redis: versus("redisLogOn", "beforeRedisLogOn")
            }
          }),
      goals: {
        redisAtLeast09xFiles: (redisVsFiles.loggingOn.perSecond?.median ?? 0) >= 0.9,
        twoWorkersAddNoCpuPerAnswer:
          (twoWorkersVsOne.aCoreEach.cpuPerAnswer?.median ?? Number.POSITIVE_INFINITY) <= 1.05
      },
      details: {
        node: process.version,
        load: "wrk, one thread, closed loop",
        singleEmails: bodies.length,
        workersOneIs: "redisLogOn: serve --workers 1 runs one daemon, no cluster",
        workersStore: "redis: --workers above 1 is refused on the file store",
        loggingOff: "logging.level: warn (no request lines)"
      }
    })
  )
} finally {
  for (const { process } of daemons) {
    if (process.child.exitCode === null) process.child.kill("SIGTERM")
    await process.exited
  }
  for (const redis of redisServers) await redis.stop()
  rmSync(root, { recursive: true, force: true })
}
