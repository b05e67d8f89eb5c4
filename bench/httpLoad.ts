/**
 * One load measurement of `npm run bench:http`, in its own process (so the
 * load generator never shares an event loop with the server it measures):
 * autocannon with the options in the JSON file named by the first argument,
 * then one JSON line on standard output: answers per second (2xx only),
 * latency percentiles (ms), non-2xx answers, errors, and this process's CPU
 * use (a load generator near 100% limits what it can measure).
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

export interface LoadOptions {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers?: Record<string, string>
  /** Request bodies; each connection cycles through them in order. */
  readonly bodies?: ReadonlyArray<string>
  readonly connections: number
  readonly seconds: number
  /** Requests per second over all connections (absent: as fast as the server answers). */
  readonly overallRate?: number
}

interface Result {
  readonly duration: number
  readonly "2xx": number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly statusCodeStats: Record<string, { count: number }>
  readonly latency: {
    readonly average: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly max: number
  }
}

type Autocannon = (options: Record<string, unknown>, done: (error: Error | null, result: Result) => void) => unknown

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon
const options = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as LoadOptions
const { pathname, origin } = new URL(options.url)

const cpuStarted = process.cpuUsage()
const started = performance.now()
autocannon(
  {
    url: origin,
    connections: options.connections,
    duration: options.seconds,
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    requests: (options.bodies ?? [undefined]).map((body) => ({
      method: options.method,
      path: pathname,
      headers: options.headers ?? {},
      ...(body === undefined ? {} : { body })
    }))
  },
  (error, result) => {
    if (error !== null) throw error
    const cpu = process.cpuUsage(cpuStarted)
    const elapsedMs = performance.now() - started
    console.log(
      JSON.stringify({
        seconds: result.duration,
        perSecond: Math.round(result["2xx"] / result.duration),
        ok: result["2xx"],
        non2xx: result.non2xx,
        statusCodes: Object.fromEntries(
          Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])
        ),
        errors: result.errors,
        timeouts: result.timeouts,
        latencyMs: {
          average: result.latency.average,
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max
        },
        loadCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100)
      })
    )
  }
)
