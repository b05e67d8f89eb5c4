/**
 * The latency probe of `npm run bench:jobs`, in its own process (pinned by
 * the caller to the core the daemon does not run on): `connections`
 * keep-alive connections, each sending single validations back to back,
 * every request's latency measured in microseconds. It runs until its
 * standard input closes (or `maxSeconds` pass), then prints one JSON line:
 * requests, requests/s, p50/p90/p99/p99.9/max in µs, and answers other than
 * 200 (there should be none).
 */
import { Agent, request } from "node:http"

export interface ProbeOptions {
  readonly url: string
  readonly key: string
  /** Request bodies, taken in turn. */
  readonly bodies: ReadonlyArray<string>
  readonly connections: number
  readonly maxSeconds: number
}

export interface ProbeResult {
  readonly requests: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly latencyUs: { p50: number; p90: number; p99: number; p999: number; max: number }
  readonly non200: number
  readonly errors: number
}

/** The value at quantile `q` of sorted `values` (nearest rank). */
const quantile = (values: Float64Array, q: number): number =>
  values.length === 0 ? 0 : values[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]!

const options = JSON.parse(process.argv[2]!) as ProbeOptions
const { hostname, port, pathname } = new URL(options.url)
const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
let latencies = new Float64Array(1 << 16)
let count = 0
let non200 = 0
let errors = 0
let stopping = false
let next = 0

const record = (micros: number) => {
  if (count === latencies.length) {
    const grown = new Float64Array(latencies.length * 2)
    grown.set(latencies)
    latencies = grown
  }
  latencies[count++] = micros
}

const once = (body: string) =>
  new Promise<void>((resolve) => {
    const started = process.hrtime.bigint()
    const sent = request(
      {
        agent,
        hostname,
        port,
        path: pathname,
        method: "POST",
        headers: {
          authorization: `Bearer ${options.key}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      },
      (response) => {
        response.resume()
        response.on("end", () => {
          record(Number(process.hrtime.bigint() - started) / 1000)
          if (response.statusCode !== 200) non200++
          resolve()
        })
      }
    )
    sent.on("error", () => {
      errors++
      resolve()
    })
    sent.end(body)
  })

const connection = async () => {
  while (!stopping) await once(options.bodies[next++ % options.bodies.length]!)
}

const started = performance.now()
process.stdin.on("end", () => {
  stopping = true
})
process.stdin.resume()
const deadline = setTimeout(() => {
  stopping = true
}, options.maxSeconds * 1000)
await Promise.all(Array.from({ length: options.connections }, connection))
clearTimeout(deadline)
const seconds = (performance.now() - started) / 1000
const sorted = latencies.slice(0, count).sort()
const round = (value: number) => Math.round(value)
console.log(
  JSON.stringify({
    requests: count,
    seconds: Math.round(seconds * 100) / 100,
    requestsPerSecond: Math.round(count / seconds),
    latencyUs: {
      p50: round(quantile(sorted, 0.5)),
      p90: round(quantile(sorted, 0.9)),
      p99: round(quantile(sorted, 0.99)),
      p999: round(quantile(sorted, 0.999)),
      max: round(sorted[count - 1] ?? 0)
    },
    non200,
    errors
  } satisfies ProbeResult)
)
agent.destroy()
process.exit(0)
