/**
 * `npm run bench:http` (`-- --quick` or BENCH_QUICK=1 for a short check): the daemon's HTTP
 * throughput and latency against a reference on the same machine, in
 * alternating rounds. Servers, each a child process:
 * - the reference for the goals: a `node:http` server doing only the
 *   essential work of the two measured requests with the daemon's engine
 *   and serialisers (`bench/essentialServer.ts`);
 * - for context, a bare `node:http` hello-world (`bench/bareServer.ts`);
 * - the daemon (`campusgate serve`, the built `dist/`: `npm run build`
 *   after changing `src/`) on a copy of `config/` with rate limits out of
 *   reach, request logging on (to a file) and metrics on.
 * Measured:
 * - single validations (`POST /api/v1/validate/target-group`, cycling
 *   through emails of the benchmark mix that answer 200) at 1, 8, 64 and
 *   256 connections: answers/s and latency percentiles in microseconds;
 * - bulk validation (`POST /api/v1/validate/bulk`, 1,000 emails a request,
 *   compact rows): emails/s, the essential server doing the same bulk work
 *   (checked to answer the same rows); and the daemon's leaner rows
 *   (`reasonText: false`), against its default rows;
 * - start-up: `campusgate serve` spawned until `/healthz` answers.
 * The server runs pinned to one core and wrk to another (`taskset`, where
 * the machine has two). Each round measures every server once per case,
 * the order rotating from round to round; figures are the median and range
 * over rounds, and the daemon's ratio to the reference is taken per round.
 * Goals (DESIGN.md): single >= 0.95x the essential server's answers/s and
 * p99 <= 5 ms at 64 connections, bulk >= 500k emails/s, start-up <= 1 s.
 * Environment: BENCH_ROUNDS, BENCH_SECONDS, BENCH_CONNECTIONS (a list),
 * BENCH_BULK_CONNECTIONS, BENCH_BULK=0 (single validations only), BENCH_CPU_PROF=DIR (CPU
 * profiles of the daemon and of the essential server, in DIR/daemon and DIR/essential, their self
 * time over the measured single-validation runs summed by category by `bench/profileCategories.ts`
 * and printed side by side, with µs an answer; the profiled daemon is the module-by-module build, `dist/cli/bin.js`, whose frames
 * name their modules),
 * BENCH_BEFORE_TREE=DIR (another checkout, built: its daemon joins the
 * rotation as `before`, on its own shipped config, for before/after ratios
 * measured in the same rounds).
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { beforeTree, cpuSeconds, type DaemonProcess, exitOf, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"
import { type CategorySummary, categoryTable, summariseProfileFile } from "./profileCategories.ts"
import { quick, ratios, spread } from "./rounds.ts"
import { timeServe } from "./serveStart.ts"
import { chooseCores, onCores, pinProcess, requireWrk, runWrk, type WrkResult } from "./wrkLoad.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 2 : 5))
const seconds = Number(process.env.BENCH_SECONDS ?? (quick ? 1 : 5))
const warmUpSeconds = quick ? 1 : 3
const concurrencies = (process.env.BENCH_CONNECTIONS ?? "1,8,64,256").split(",").map(Number)
const bulkConnections = Number(process.env.BENCH_BULK_CONNECTIONS ?? 64)
const serveStarts = quick ? 2 : 5
const withBulk = process.env.BENCH_BULK !== "0"
const cpuProfileDir = process.env.BENCH_CPU_PROF
const targetGroupId = "uk-students"
const BULK_EMAILS = 1000
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const log = (message: string) => console.error(message)

requireWrk()
const cpuCount = availableParallelism()
const cores = chooseCores()
// The orchestrator (idle while wrk runs) stays off the server's core.
if (cores !== undefined) pinProcess(process.pid, cores.load)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-http-"))

type Server = DaemonProcess

/** A reference server (`bench/<script>`) on the server core; it prints `{"url": ...}` once it listens. */
const startReference = async (
  script: string,
  args: ReadonlyArray<string> = [],
  nodeArgs: ReadonlyArray<string> = []
): Promise<Server> => {
  const [command, commandArgs] = onCores(cores?.server, process.execPath, [...nodeArgs, here(script), ...args])
  const child = spawn(command, commandArgs, { stdio: ["ignore", "pipe", "inherit"] })
  const exited = exitOf(child)
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve)
    void exited.then((code) => reject(new Error(`${script} exited with ${code}`)))
  })
  return { url: (JSON.parse(line) as { url: string }).url, child, exited }
}

interface Measurement {
  /** 2xx answers per second. */
  readonly perSecond: number
  /** Answers, 2xx or not. */
  readonly requests: number
  readonly non2xx: number
  readonly socketErrors: number
  readonly latencyUs: WrkResult["latencyUs"]
  /** The server's CPU time (all its threads) per answer: steadier than answers/s when other work shares the machine. */
  readonly serverCpuMicrosPerAnswer: number | undefined
}

interface Case {
  readonly name: string
  readonly server: Server
  readonly path: string
  readonly bodiesFile?: string
  readonly connections: number
  /** The API key sent (the `before` daemon has its own); else the main config's. */
  readonly key?: string | undefined
}

const post = (url: string, key: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const dirs = prepareConfig(root, ["validate:target-groups", "validate:bulk"])
const headers = { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" }

/**
 * The measured single-validation runs of each server, as spans of the monotonic clock (µs, the clock of a CPU
 * profile's timestamps) with the requests answered in them: its profile is summed over these alone.
 */
const singleRuns = new Map<Server, { spans: Array<readonly [number, number]>; requests: number }>()
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)

/** One wrk run against a case, with the server's CPU use over it. */
const measure = (test: Case, runSeconds: number): Measurement => {
  const cpuBefore = cpuSeconds(test.server.child.pid)
  const result = runWrk({
    url: `${test.server.url}${test.path}`,
    ...(test.bodiesFile === undefined
      ? {}
      : {
          headers: test.key === undefined ? headers : { ...headers, authorization: `Bearer ${test.key}` },
          bodiesFile: test.bodiesFile
        }),
    connections: test.connections,
    seconds: runSeconds,
    cpus: cores?.load
  })
  const cpuAfter = cpuSeconds(test.server.child.pid)
  const { connect, read, write, timeout } = result.socketErrors
  const ok = result.requests - result.non2xx
  return {
    perSecond: Math.round(ok / (result.durationUs / 1e6)),
    requests: result.requests,
    non2xx: result.non2xx,
    socketErrors: connect + read + write + timeout,
    latencyUs: result.latencyUs,
    serverCpuMicrosPerAnswer:
      cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
        ? undefined
        : Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests)
  }
}

log(
  `node ${process.version}, ${availableParallelism()} CPUs; ${cores === undefined ? "not pinned" : `server on CPU ${cores.server}, wrk on CPU ${cores.load}`}; ${rounds} rounds of ${seconds} s; working in ${root}`
)

const serveMs: Array<number> = []
for (let i = 0; i < serveStarts; i++) serveMs.push(await timeServe(dirs, root, cores?.server))
log(`serve until /healthz answers: ${serveMs.map((ms) => ms.toFixed(0)).join(", ")} ms`)

const table = buildInstitutionTable()
/** Every server started, stopped when the bench ends, also when a later one fails to start. */
const started: Array<{ readonly child: { readonly exitCode: number | null; kill(signal: NodeJS.Signals): boolean } }> =
  []
process.once("exit", () => {
  for (const server of started) if (server.child.exitCode === null) server.child.kill("SIGTERM")
})
const tracked = async <A extends (typeof started)[number]>(starting: Promise<A>): Promise<A> => {
  const server = await starting
  started.push(server)
  return server
}
const bare = await tracked(startReference("bareServer.ts"))
/** Node's options writing a CPU profile of the process into `cpuProfileDir/name`, when profiling. */
const profiled = (name: string): Array<string> =>
  cpuProfileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", join(cpuProfileDir, name)]
const essential = await tracked(
  startReference("essentialServer.ts", [dirs.configDir, dirs.dataDir], profiled("essential"))
)
const logFile = join(root, "daemon.log")
/**
 * A tree whose only build is a link to this one's module-by-module `dist/cli` (`startDaemon` prefers the
 * bundle), for a profile whose frames name their modules; Node resolves the link, so the modules load from here.
 */
const unbundledTree = (): string => {
  const tree = join(root, "unbundled")
  mkdirSync(join(tree, "dist"), { recursive: true })
  symlinkSync(here("../dist/cli"), join(tree, "dist", "cli"))
  return tree
}
const daemon = await tracked(
  startDaemon(cpuProfileDir === undefined ? dirs : { ...dirs, tree: unbundledTree() }, logFile, profiled("daemon"))
)
if (cores !== undefined) pinProcess(daemon.child.pid!, cores.server)
const beforeDirs =
  beforeTree === undefined
    ? undefined
    : prepareConfig(join(root, "before"), ["validate:target-groups", "validate:bulk"], [], beforeTree)
const before = beforeDirs === undefined ? undefined : await tracked(startDaemon(beforeDirs, join(root, "before.log")))
if (before !== undefined && cores !== undefined) pinProcess(before.child.pid!, cores.server)
if (before !== undefined) log(`before: the daemon of ${beforeTree} at ${before.url}`)
log(`bare server at ${bare.url}; essential-work server at ${essential.url}; daemon at ${daemon.url} (log: ${logFile})`)

/**
 * The main thread's profile of each server (`CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile`, thread 0),
 * summed over its measured single-validation runs by category; printed as a table, with µs an answer.
 */
const summariseProfiles = (dir: string): Record<string, CategorySummary & { file: string; answers: number }> => {
  const columns = (["essential", "daemon"] as const).map((name) => {
    const files = readdirSync(join(dir, name)).filter((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file))
    const file = join(dir, name, files.sort().at(-1)!)
    const runs = singleRuns.get(name === "daemon" ? daemon : essential) ?? { spans: [], requests: 0 }
    return { name, file, summary: summariseProfileFile(file, runs.spans), answers: runs.requests }
  })
  log(`CPU profiles (self time by category, bench/profileCategories.ts):\n${categoryTable(columns)}`)
  return Object.fromEntries(columns.map(({ name, file, summary, answers }) => [name, { file, ...summary, answers }]))
}

try {
  const singlePath = "/api/v1/validate/target-group"
  const bulkPath = "/api/v1/validate/bulk"

  // Single requests cycle through emails of the benchmark mix that answer 200 (valid or not; malformed ones are 400s).
  const singleBodies: Array<string> = []
  for (const email of generateEmails(table, 400, 7)) {
    const body = { email, targetGroupId }
    if ((await post(`${daemon.url}${singlePath}`, dirs.key, body)).status === 200)
      singleBodies.push(JSON.stringify(body))
  }
  const singleFile = join(root, "single.txt")
  writeFileSync(singleFile, `${singleBodies.join("\n")}\n`)
  const bulkBodies = [11, 12, 13, 14].map((seed) =>
    JSON.stringify({ emails: generateEmails(table, BULK_EMAILS, seed), targetGroupId })
  )
  const bulkFile = join(root, "bulk.txt")
  writeFileSync(bulkFile, `${bulkBodies.join("\n")}\n`)
  const leanFile = join(root, "bulk-lean.txt")
  const leanBodies = bulkBodies.map((body) => JSON.stringify({ ...JSON.parse(body), reasonText: false }))
  writeFileSync(leanFile, `${leanBodies.join("\n")}\n`)
  // The essential server does the daemon's bulk work: the same rows and summary.
  for (const body of bulkBodies) {
    const answers = await Promise.all(
      [daemon, essential].map(async (server) => {
        const response = await post(`${server.url}${bulkPath}`, dirs.key, JSON.parse(body))
        if (response.status !== 200) throw new Error(`bulk answered ${response.status}: ${await response.text()}`)
        const { requestId: _, ...answer } = (await response.json()) as Record<string, unknown>
        return JSON.stringify(answer)
      })
    )
    if (answers[0] !== answers[1]) throw new Error("the essential server's bulk answer differs from the daemon's")
  }
  const metricsOn = (await fetch(`${daemon.url}/metrics`)).status === 200

  type Name = "bare" | "essential" | "daemon" | "before"
  const servers: Record<Name, Server | undefined> = { bare, essential, daemon, before }
  const names: ReadonlyArray<Name> =
    before === undefined ? ["bare", "essential", "daemon"] : ["bare", "essential", "daemon", "before"]
  const keyOf = (name: string) => (name === "before" ? beforeDirs?.key : undefined)
  const singleCase = (name: Name, connections: number): Case =>
    name === "bare"
      ? { name, server: bare, path: "/", connections }
      : { name, server: servers[name]!, path: singlePath, bodiesFile: singleFile, connections, key: keyOf(name) }
  type BulkName = "essential" | "daemon" | "daemonLean" | "before"
  const bulkNames: ReadonlyArray<BulkName> =
    before === undefined ? ["essential", "daemon", "daemonLean"] : ["essential", "daemon", "daemonLean", "before"]
  const bulkCase = (name: BulkName): Case => ({
    name,
    server: name === "essential" ? essential : name === "before" ? before! : daemon,
    path: bulkPath,
    bodiesFile: name === "daemonLean" ? leanFile : bulkFile,
    connections: bulkConnections,
    key: keyOf(name)
  })

  for (const name of names) {
    log(`warm-up: ${name}`)
    measure(singleCase(name, 64), warmUpSeconds)
    if (withBulk && name !== "bare") measure(bulkCase(name), warmUpSeconds)
    if (withBulk && name === "daemon") measure(bulkCase("daemonLean"), warmUpSeconds)
  }

  /** `items` rotated by `by`: each round starts with another server. */
  const rotated = <A>(items: ReadonlyArray<A>, by: number) => items.map((_, i) => items[(i + by) % items.length]!)
  const single = new Map<number, Record<Name, Array<Measurement>>>(
    concurrencies.map((connections) => [connections, { bare: [], essential: [], daemon: [], before: [] }])
  )
  const bulk: Record<BulkName, Array<Measurement>> = { essential: [], daemon: [], daemonLean: [], before: [] }
  for (let round = 0; round < rounds; round++) {
    for (const connections of concurrencies) {
      for (const name of rotated(names, round)) {
        const from = monotonicUs()
        const result = measure(singleCase(name, connections), seconds)
        const runs = singleRuns.get(servers[name]!) ?? { spans: [], requests: 0 }
        runs.spans.push([from, monotonicUs()])
        runs.requests += result.requests
        singleRuns.set(servers[name]!, runs)
        single.get(connections)![name].push(result)
        log(
          `round ${round + 1}, ${connections} connections, ${name}: ${result.perSecond.toLocaleString()}/s, p50 ${result.latencyUs.p50} µs, p99 ${result.latencyUs.p99} µs, ${result.serverCpuMicrosPerAnswer ?? "?"} µs CPU an answer`
        )
      }
    }
    for (const name of withBulk ? rotated(bulkNames, round) : []) {
      const result = measure(bulkCase(name), seconds)
      bulk[name].push(result)
      log(
        `round ${round + 1}, bulk, ${name}: ${(result.perSecond * BULK_EMAILS).toLocaleString()} emails/s, p99 ${result.latencyUs.p99} µs`
      )
    }
  }

  bare.child.kill("SIGTERM")
  essential.child.kill("SIGTERM")
  daemon.child.kill("SIGTERM")
  before?.child.kill("SIGTERM")
  const [, , daemonExit] = await Promise.all([bare.exited, essential.exited, daemon.exited, before?.exited])
  const daemonLogBytes = statSync(logFile).size
  const profiles = cpuProfileDir === undefined ? undefined : summariseProfiles(cpuProfileDir)

  const perSecond = (measurements: ReadonlyArray<Measurement>) => measurements.map((m) => m.perSecond)
  const summary = (measurements: ReadonlyArray<Measurement>, scale = 1) => ({
    perSecond: spread(
      measurements.map((m) => m.perSecond * scale),
      0
    ),
    p50Us: spread(
      measurements.map((m) => m.latencyUs.p50),
      0
    ),
    p99Us: spread(
      measurements.map((m) => m.latencyUs.p99),
      0
    ),
    p999Us: spread(
      measurements.map((m) => m.latencyUs.p999),
      0
    ),
    cpuMicrosPerAnswer: spread(
      measurements.map((m) => m.serverCpuMicrosPerAnswer ?? Number.NaN),
      0
    ),
    non2xx: measurements.reduce((sum, m) => sum + m.non2xx, 0),
    socketErrors: measurements.reduce((sum, m) => sum + m.socketErrors, 0)
  })
  /** The daemon's answers/s over the reference's, taken per round. */
  const versus = (daemonRuns: ReadonlyArray<Measurement>, referenceRuns: ReadonlyArray<Measurement>) =>
    spread(ratios(perSecond(daemonRuns), perSecond(referenceRuns)), 3)
  const singleFigures = Object.fromEntries(
    [...single].map(([connections, runs]) => [
      connections,
      {
        bare: summary(runs.bare),
        essential: summary(runs.essential),
        daemon: summary(runs.daemon),
        daemonVsEssential: versus(runs.daemon, runs.essential),
        daemonVsBare: versus(runs.daemon, runs.bare),
        ...(before === undefined
          ? {}
          : { before: summary(runs.before), daemonVsBefore: versus(runs.daemon, runs.before) })
      }
    ])
  )
  const bulkFigures = withBulk && {
    connections: bulkConnections,
    emailsPerRequest: BULK_EMAILS,
    essential: summary(bulk.essential, BULK_EMAILS),
    daemon: summary(bulk.daemon, BULK_EMAILS),
    daemonVsEssential: versus(bulk.daemon, bulk.essential),
    /** `reasonText: false`: rows without the reason sentence. */
    daemonLean: summary(bulk.daemonLean, BULK_EMAILS),
    daemonLeanVsDaemon: versus(bulk.daemonLean, bulk.daemon),
    ...(before === undefined
      ? {}
      : { before: summary(bulk.before, BULK_EMAILS), daemonVsBefore: versus(bulk.daemon, bulk.before) })
  }
  const at64 = single.get(64)
  const serve = spread(serveMs, 0)
  console.log(
    JSON.stringify({
      mode: quick ? "quick" : "full",
      rounds,
      seconds,
      pinned: cores ?? null,
      beforeTree: beforeTree ?? null,
      serveToHealthzMs: serve,
      single: singleFigures,
      bulk: bulkFigures || null,
      profiles: profiles ?? null,
      goals: {
        singleVsEssentialAt64: at64 === undefined ? undefined : versus(at64.daemon, at64.essential).median >= 0.95,
        singleP99At64:
          at64 === undefined
            ? undefined
            : spread(
                at64.daemon.map((m) => m.latencyUs.p99),
                0
              ).median <= 5000,
        bulkEmailsPerSecond: bulkFigures && bulkFigures.daemon.perSecond.median >= 500_000,
        serveToHealthz: serve.median <= 1000
      },
      details: {
        node: process.version,
        cpus: cpuCount,
        load: "wrk, one thread, closed loop",
        metricsOn,
        daemonLogBytes,
        daemonExitCode: daemonExit,
        singleEmails: singleBodies.length
      }
    })
  )
} finally {
  for (const server of [bare, essential, daemon, before])
    if (server !== undefined && server.child.exitCode === null) server.child.kill("SIGTERM")
  rmSync(root, { recursive: true, force: true })
}
