/**
 * `npm run bench:http`: the daemon's HTTP throughput, measured in one run
 * against a baseline on the same machine. Three child processes serve, and
 * the load generator (autocannon, `bench/httpLoad.ts`) runs in a fourth:
 * - a bare `node:http` hello-world server (`bench/bareServer.ts`), GET /;
 * - a reference, not a goal: a minimal `node:http` server doing only the
 *   essential work of a single validation (`bench/essentialServer.ts`),
 *   the ceiling of the daemon's hot path on this machine;
 * - the daemon (`campusgate serve` from source) on a copy of `config/` with
 *   rate limits raised so they never trigger, request logging on (to a
 *   file) and metrics on: `POST /api/v1/validate/target-group` with a bearer
 *   key, cycling through emails of the benchmark mix that answer 200;
 * - the same daemon: `POST /api/v1/validate/bulk` with 1000 emails
 *   (BENCH_BULK=0 skips it, e.g. to profile the single path alone).
 * 64 connections, BENCH_SECONDS (default 10) each, after a short warm-up.
 * Goals (DESIGN.md): single >= 0.6x the bare server's requests/s, single
 * p99 <= 10 ms, bulk >= 500k emails/s. BENCH_CPU_PROF=DIR writes a CPU
 * profile of the daemon there. Each measurement also reports the server's
 * CPU time per answer, steadier than answers/s when other work shares the
 * machine. Progress goes to standard error; the final line on standard
 * output is JSON.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { cpuSeconds, type DaemonProcess, exitOf, prepareConfig, startDaemon } from "./daemonProcess.ts"
import { generateEmails } from "./generateEmails.ts"
import type { LoadOptions } from "./httpLoad.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const warmUpSeconds = Math.max(1, Math.min(3, Math.round(seconds / 3)))
const cpuProfileDir = process.env.BENCH_CPU_PROF
const runBulk = process.env.BENCH_BULK !== "0"
const targetGroupId = "uk-students"
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-http-"))
const log = (message: string) => console.error(message)

type Server = DaemonProcess

/** A reference server (`bench/<script>`) that prints `{"url": ...}` once it listens. */
const startReference = async (script: string, args: ReadonlyArray<string> = []): Promise<Server> => {
  const child = spawn(process.execPath, [here(script), ...args], { stdio: ["ignore", "pipe", "inherit"] })
  const exited = exitOf(child)
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve)
    void exited.then((code) => reject(new Error(`${script} exited with ${code}`)))
  })
  return { url: (JSON.parse(line) as { url: string }).url, child, exited }
}

interface LoadResult {
  readonly seconds: number
  readonly perSecond: number
  readonly ok: number
  readonly non2xx: number
  readonly statusCodes: Record<string, number>
  readonly errors: number
  readonly timeouts: number
  readonly latencyMs: { average: number; p50: number; p90: number; p99: number; max: number }
  readonly loadCpuPercent: number
}

/** One autocannon run in its own process; also the server's CPU use over it. */
const load = (server: Server, options: Omit<LoadOptions, "connections" | "seconds">, runSeconds: number) => {
  const file = join(root, "load.json")
  writeFileSync(file, JSON.stringify({ ...options, connections, seconds: runSeconds }))
  const cpuBefore = cpuSeconds(server.child.pid)
  const output = execFileSync(process.execPath, [here("httpLoad.ts"), file], {
    encoding: "utf8",
    maxBuffer: 1 << 24
  })
  const cpuAfter = cpuSeconds(server.child.pid)
  const result = JSON.parse(output.trim().split("\n").at(-1)!) as LoadResult
  const serverCpuPercent =
    cpuBefore === undefined || cpuAfter === undefined
      ? undefined
      : Math.round(((cpuAfter - cpuBefore) / result.seconds) * 100)
  // CPU time per answer moves less than answers/s when other work shares the cores.
  const answers = result.ok + result.non2xx
  const serverCpuMicrosPerAnswer =
    cpuBefore === undefined || cpuAfter === undefined || answers === 0
      ? undefined
      : Math.round(((cpuAfter - cpuBefore) * 1e6) / answers)
  return { ...result, serverCpuPercent, serverCpuMicrosPerAnswer }
}

const measure = (name: string, server: Server, options: Omit<LoadOptions, "connections" | "seconds">) => {
  log(`${name}: warm-up ${warmUpSeconds} s`)
  load(server, options, warmUpSeconds)
  log(`${name}: ${seconds} s at ${connections} connections`)
  const result = load(server, options, seconds)
  log(
    `${name}: ${result.perSecond.toLocaleString()} answers/s (2xx), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}; server CPU ${result.serverCpuPercent ?? "?"}% (${result.serverCpuMicrosPerAnswer ?? "?"} µs an answer), load generator CPU ${result.loadCpuPercent}%`
  )
  return result
}

const post = (url: string, key: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const dirs = prepareConfig(root, ["validate:target-groups", "validate:bulk"])
log(`node ${process.version}, ${availableParallelism()} CPUs; working in ${root}`)
const table = buildInstitutionTable()
const bare = await startReference("bareServer.ts")
const essential = await startReference("essentialServer.ts", [dirs.configDir, dirs.dataDir])
const logFile = join(root, "daemon.log")
const daemon = await startDaemon(
  dirs,
  logFile,
  cpuProfileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", cpuProfileDir]
)
log(`bare server at ${bare.url}; essential-work server at ${essential.url}; daemon at ${daemon.url} (log: ${logFile})`)

try {
  const singleUrl = `${daemon.url}/api/v1/validate/target-group`
  const bulkUrl = `${daemon.url}/api/v1/validate/bulk`
  const headers = { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" }

  // Single requests cycle through emails of the benchmark mix that answer 200 (valid or not; malformed ones are 400s).
  const singleBodies: Array<string> = []
  for (const email of generateEmails(table, 400, 7)) {
    const body = { email, targetGroupId }
    if ((await post(singleUrl, dirs.key, body)).status === 200) singleBodies.push(JSON.stringify(body))
  }
  const bulkEmails = generateEmails(table, 1000, 11)
  const bulkBody = JSON.stringify({ emails: bulkEmails, targetGroupId })
  const bulkCheck = await post(bulkUrl, dirs.key, JSON.parse(bulkBody))
  if (bulkCheck.status !== 200) throw new Error(`bulk answered ${bulkCheck.status}: ${await bulkCheck.text()}`)
  const metricsOn = (await fetch(`${daemon.url}/metrics`)).status === 200

  const bareResult = measure("bare node:http", bare, { url: `${bare.url}/`, method: "GET" })
  const essentialResult = measure("essential-work node:http (reference)", essential, {
    url: `${essential.url}/api/v1/validate/target-group`,
    method: "POST",
    headers,
    bodies: singleBodies
  })
  essential.child.kill("SIGTERM")
  const single = measure("daemon validate/target-group", daemon, {
    url: singleUrl,
    method: "POST",
    headers,
    bodies: singleBodies
  })
  const bulk = runBulk
    ? measure("daemon validate/bulk (1000 emails)", daemon, {
        url: bulkUrl,
        method: "POST",
        headers,
        bodies: [bulkBody]
      })
    : undefined

  bare.child.kill("SIGTERM")
  daemon.child.kill("SIGTERM")
  const [, , daemonExit] = await Promise.all([bare.exited, essential.exited, daemon.exited])
  const daemonLogBytes = statSync(logFile).size
  log(`daemon exited with ${daemonExit}; it logged ${(daemonLogBytes / 1e6).toFixed(1)} MB`)
  if (cpuProfileDir !== undefined) log(`CPU profile of the daemon written to ${cpuProfileDir}`)

  const round2 = (value: number) => Math.round(value * 100) / 100
  const singleVsBare = round2(single.perSecond / bareResult.perSecond)
  const bulkEmailsPerSecond = bulk === undefined ? undefined : bulk.perSecond * bulkEmails.length
  console.log(
    JSON.stringify({
      seconds,
      connections,
      bareRps: bareResult.perSecond,
      essentialRps: essentialResult.perSecond,
      singleRps: single.perSecond,
      singleVsBare,
      singleVsEssential: round2(single.perSecond / essentialResult.perSecond),
      singleP99Ms: single.latencyMs.p99,
      cpuMicrosPerAnswer: {
        bare: bareResult.serverCpuMicrosPerAnswer,
        essential: essentialResult.serverCpuMicrosPerAnswer,
        single: single.serverCpuMicrosPerAnswer
      },
      bulkRps: bulk?.perSecond,
      bulkEmailsPerSecond,
      goals: {
        singleVsBare: singleVsBare >= 0.6,
        p99: single.latencyMs.p99 <= 10,
        bulkEmailsPerSecond: bulkEmailsPerSecond === undefined ? undefined : bulkEmailsPerSecond >= 500_000
      },
      details: {
        node: process.version,
        cpus: availableParallelism(),
        metricsOn,
        daemonLogBytes,
        daemonExitCode: daemonExit,
        singleEmails: singleBodies.length,
        bare: bareResult,
        essential: essentialResult,
        single,
        bulk
      }
    })
  )
} finally {
  if (bare.child.exitCode === null) bare.child.kill("SIGTERM")
  if (essential.child.exitCode === null) essential.child.kill("SIGTERM")
  if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM")
  rmSync(root, { recursive: true, force: true })
}
