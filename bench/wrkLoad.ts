/**
 * The load side of `npm run bench:http`: wrk (Debian's `wrk` package, a C
 * load generator whose one thread keeps up with a Node server on one core,
 * where autocannon needed a core of its own and then some) driven by
 * `bench/wrk.lua`, with latency in microseconds from wrk's histogram; the
 * cores the server and the load generator are pinned to (`taskset`); and
 * the median and spread of repeated measurements.
 *
 * wrk is closed-loop: each connection sends its next request when the
 * previous answer arrives, so latency is that of a server kept busy, not of
 * requests arriving at a fixed rate.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Throws with what to do when wrk is not installed. */
export const requireWrk = (): void => {
  const probe = spawnSync("wrk", ["--version"], { encoding: "utf8" })
  if (probe.error !== undefined) {
    throw new Error("bench:http needs wrk: apt-get install -y wrk (Debian, Ubuntu) or your system's package")
  }
}

/** CPU lists (`taskset -c` form) for the server and for the load generator. */
export interface Cores {
  readonly server: string
  readonly load: string
}

/** The CPUs this process may run on, as `taskset -p` reports them (`0-3,6`); undefined without taskset. */
const allowedCpus = (): ReadonlyArray<number> | undefined => {
  const probe = spawnSync("taskset", ["-pc", String(process.pid)], { encoding: "utf8" })
  if (probe.status !== 0) return undefined
  const list = probe.stdout.split(":").at(-1)!.trim()
  return list.split(",").flatMap((part) => {
    const [first, last] = part.split("-").map(Number) as [number, number | undefined]
    return Array.from({ length: (last ?? first) - first + 1 }, (_, i) => first + i)
  })
}

/** One core for the server and another for the load generator, where the machine gives this process two. */
export const chooseCores = (): Cores | undefined => {
  const cpus = allowedCpus()
  return cpus === undefined || cpus.length < 2 ? undefined : { server: String(cpus[0]), load: String(cpus[1]) }
}

/** Pins every thread of a running process (and so the threads it starts later) to `cpus`. */
export const pinProcess = (pid: number, cpus: string): void => {
  execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" })
}

/** A command run on `cpus` (as is without them). */
export const onCores = (
  cpus: string | undefined,
  command: string,
  args: ReadonlyArray<string>
): [string, Array<string>] => (cpus === undefined ? [command, [...args]] : ["taskset", ["-c", cpus, command, ...args]])

export interface WrkResult {
  /** Answers received. */
  readonly requests: number
  readonly durationUs: number
  readonly bytes: number
  /** Answers with a status of 400 or more. */
  readonly non2xx: number
  readonly socketErrors: { connect: number; read: number; write: number; timeout: number }
  readonly latencyUs: { mean: number; stdev: number; p50: number; p90: number; p99: number; p999: number; max: number }
}

export interface WrkOptions {
  readonly url: string
  readonly headers?: Record<string, string>
  /** A file of request bodies, one a line (POSTs); absent: GETs. */
  readonly bodiesFile?: string
  readonly connections: number
  readonly seconds: number
  /** The CPUs wrk runs on. */
  readonly cpus?: string | undefined
}

/** One wrk run with one thread. */
export const runWrk = (options: WrkOptions): WrkResult => {
  const args = [
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--timeout",
    "10s",
    "-s",
    here("wrk.lua"),
    ...Object.entries(options.headers ?? {}).flatMap(([name, value]) => ["-H", `${name}: ${value}`]),
    options.url,
    ...(options.bodiesFile === undefined ? [] : ["--", options.bodiesFile])
  ]
  const [command, commandArgs] = onCores(options.cpus, "wrk", args)
  const output = execFileSync(command, commandArgs, { encoding: "utf8", maxBuffer: 1 << 24 })
  return JSON.parse(output.trim().split("\n").at(-1)!) as WrkResult
}

export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
  /** (max - min) / median. */
  readonly relativeSpread: number
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits

/** The median and range of repeated measurements. */
export const spreadOf = (values: ReadonlyArray<number>, digits = 0): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  const min = sorted[0]!
  const max = sorted.at(-1)!
  return {
    median: round(median, digits),
    min: round(min, digits),
    max: round(max, digits),
    relativeSpread: median === 0 ? 0 : round((max - min) / median, 3)
  }
}
