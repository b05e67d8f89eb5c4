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
 * start adds over validation is the figure (goal <= 5 ms). Throughput: starts as
 * fast as 64 connections get answers, i.e. verifications started per
 * second on the daemon's one core (one Node process), with the server's CPU
 * time per answer and how many messages had reached the outbox when the run
 * ended. Against the built daemon (`npm run build` first). The per-address
 * message limit and the mailbox cap are raised out of reach, since
 * autocannon's connections send the same addresses; everything else is the default. Progress goes to standard error;
 * the final line on standard output is JSON.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { cpuSeconds, prepareConfig, startDaemon } from "./daemonProcess.ts"
import type { LoadOptions } from "./httpLoad.ts"

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

const dirs = prepareConfig(
  root,
  ["validate:offers", "verifications:write"],
  [
    [["rateLimits", "verifications", "requests"], 1_000_000_000],
    [["verification", "maxMessagesPerAddress"], 1_000_000_000],
    [["verification", "mail", "maxMessagesPerMailbox"], 1_000_000_000]
  ]
)
const daemon = await startDaemon(
  dirs,
  join(root, "daemon.log"),
  process.env.BENCH_CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
)
log(`node ${process.version}, ${availableParallelism()} CPUs; daemon at ${daemon.url}; working in ${root}`)
try {
  const headers = { authorization: `Bearer ${dirs.key}`, "content-type": "application/json" }
  const hosts = ["ox.ac.uk", "cam.ac.uk", "tum.de", "mit.edu", "ethz.ch", "uva.nl", "kuleuven.be", "harvard.edu"]
  const bodies = Array.from({ length: 4000 }, (_, i) =>
    JSON.stringify({ email: `student${i}@${hosts[i % hosts.length]}`, offerId })
  )
  const check = await fetch(`${daemon.url}/api/v1/verifications`, { method: "POST", headers, body: bodies[1]! })
  if (check.status !== 201) throw new Error(`start answered ${check.status}: ${await check.text()}`)
  const measure = (name: string, path: string, overallRate?: number) => {
    const options = {
      url: `${daemon.url}${path}`,
      method: "POST" as const,
      headers,
      bodies,
      ...(overallRate === undefined ? {} : { overallRate })
    }
    log(`${name}: warm-up ${warmUpSeconds} s`)
    load(daemon.child.pid, options, warmUpSeconds)
    log(`${name}: ${seconds} s at ${connections} connections`)
    const result = load(daemon.child.pid, options, seconds)
    log(
      `${name}: ${result.perSecond.toLocaleString()} answers/s (2xx), p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}, server CPU ${result.cpuMicrosPerAnswer ?? "?"} µs an answer`
    )
    return result
  }
  const latencyOf = async (name: string, path: string) => {
    log(`${name}: warm-up ${warmUpSeconds} s`)
    await openLoop(`${daemon.url}${path}`, headers, bodies, warmUpSeconds)
    log(`${name}: ${seconds} s at ${rate} requests/s`)
    const result = await openLoop(`${daemon.url}${path}`, headers, bodies, seconds)
    log(
      `${name}: p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, answers ${JSON.stringify(result.statuses)}`
    )
    return result
  }
  const validation = await latencyOf(`validate/offer at ${rate}/s (baseline)`, "/api/v1/validate/offer")
  const startsAtRate = await latencyOf(`verifications at ${rate}/s`, "/api/v1/verifications")
  const outboxBefore = readdirSync(join(dirs.dataDir, "outbox")).length
  const starts = measure("verifications as fast as answered (outbox transport)", "/api/v1/verifications")
  const started = starts.ok
  await new Promise((resolve) => setTimeout(resolve, 200))
  const delivered = readdirSync(join(dirs.dataDir, "outbox")).length - outboxBefore
  daemon.child.kill("SIGTERM")
  const exitCode = await daemon.exited
  const addedP99Ms = Math.round((startsAtRate.latencyMs.p99 - validation.latencyMs.p99) * 100) / 100
  console.log(
    JSON.stringify({
      seconds,
      connections,
      rate,
      startsPerSecond: starts.perSecond,
      validationP99Ms: validation.latencyMs.p99,
      startP99Ms: startsAtRate.latencyMs.p99,
      addedP99Ms,
      startCpuMicrosPerAnswer: starts.cpuMicrosPerAnswer,
      goals: { addedP99Ms: addedP99Ms <= 5 },
      details: {
        node: process.version,
        cpus: availableParallelism(),
        daemonExitCode: exitCode,
        messagesInOutbox: delivered,
        startsAnswered: started + starts.non2xx,
        validation,
        startsAtRate,
        starts
      }
    })
  )
} finally {
  if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM")
  rmSync(root, { recursive: true, force: true })
}
