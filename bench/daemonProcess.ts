/**
 * The daemon as benchmarks run it: `campusgate serve` as users run it, the
 * built `dist/daemon/campusgate.js` (so `npm run build` after changing `src/`), in a
 * child process, on a copy of the shipped `config/` with every rate limit out of
 * reach and an API key made for the run, logging to a file (so writing the
 * log costs what it costs in production, without a pipe to drain).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, cpSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, get } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseDocument } from "yaml"
import { createApiKey } from "../src/app/Keys.ts"
import type { Scope } from "../src/domain/ApiKey.ts"
import type { TeamId } from "../src/domain/Identifiers.ts"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export interface BenchConfig {
  readonly configDir: string
  readonly dataDir: string
  readonly key: string
  /** The checkout whose built daemon serves this config (another one than this, to compare before and after). */
  readonly tree?: string | undefined
}

/** A checkout given by BENCH_BEFORE_TREE (built: `npm run build` there), whose daemon runs as "before" beside this one's. */
export const beforeTree: string | undefined = process.env.BENCH_BEFORE_TREE || undefined

/**
 * A copy of the shipped config under `root`, rate limits raised, `settings`
 * (paths into campusgate.yaml) applied, an empty data directory and a key of
 * team acme with `scopes`; with `tree`, that checkout's shipped config, for its daemon.
 */
export const prepareConfig = (
  root: string,
  scopes: ReadonlyArray<Scope>,
  settings: ReadonlyArray<readonly [ReadonlyArray<string>, unknown]> = [],
  tree?: string
): BenchConfig => {
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  cpSync(tree === undefined ? here("../config") : join(tree, "config"), configDir, { recursive: true })
  const settingsFile = join(configDir, "campusgate.yaml")
  const document = parseDocument(readFileSync(settingsFile, "utf8"))
  for (const bucket of ["bulk", "jobs", "validate", "default"]) {
    document.setIn(["rateLimits", bucket, "requests"], 1_000_000_000)
  }
  for (const [path, value] of settings) document.setIn(path, value)
  writeFileSync(settingsFile, document.toString())
  const { key } = createApiKey({ configDir, dataDir, team: "acme" as TeamId, scopes: [...scopes] })
  return { configDir, dataDir, key, tree }
}

/** A loopback port nothing listens on now (for a server a benchmark starts). */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface DaemonProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
}

export const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))

/**
 * The built executable of this checkout, or of the checkout `tree`: the
 * daemon's bundle, or `dist/cli/bin.js` in a tree built before there was one.
 */
export const daemonBin = (tree?: string): string => {
  const dist = tree === undefined ? here("../dist/") : join(tree, "dist")
  for (const bin of [join(dist, "daemon", "campusgate.js"), join(dist, "cli", "bin.js")])
    if (existsSync(bin)) return bin
  throw new Error(`${dist} holds no built daemon: run npm run build first`)
}

/** Whether `GET url` answers 200 now (a refused connection: not yet). */
const answersOk = (url: string) =>
  new Promise<boolean>((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode === 200)
    })
    request.on("error", () => resolve(false))
  })

/**
 * Starts the daemon on a free loopback port and waits until it listens; `nodeArgs` go before the script,
 * `serveArgs` after `serve`'s; with `cpus` (a `taskset -c` list) it runs on those cores only, from its start.
 * With `port` it listens there and is ready once `/healthz` answers, so its log need not say where it
 * listens (`logging.level` above info writes no `listening` line); else on a port of its choosing, read
 * from its log.
 */
export const startDaemon = async (
  dirs: { readonly configDir: string; readonly dataDir: string; readonly tree?: string | undefined },
  logFile: string,
  nodeArgs: ReadonlyArray<string> = [],
  serveArgs: ReadonlyArray<string> = [],
  cpus?: string,
  port?: number
): Promise<DaemonProcess> => {
  const out = openSync(logFile, "w")
  const args = [
    ...["serve", "--config", dirs.configDir, "--data", dirs.dataDir, "--port", String(port ?? 0)],
    ...["--host", "127.0.0.1", ...serveArgs]
  ]
  const bin = daemonBin(dirs.tree)
  const command = [process.execPath, ...nodeArgs, bin, ...args]
  const child = spawn(
    cpus === undefined ? command[0]! : "taskset",
    cpus === undefined ? command.slice(1) : ["-c", cpus, ...command],
    {
      env: { ...process.env, CAMPUSGATE_CONFIG: "", CAMPUSGATE_DATA: "", CAMPUSGATE_PORT: "", CAMPUSGATE_HOST: "" },
      stdio: ["ignore", out, out]
    }
  )
  closeSync(out)
  const exited = exitOf(child)
  const deadline = Date.now() + 30_000
  for (;;) {
    if (port !== undefined) {
      const url = `http://127.0.0.1:${port}`
      if (await answersOk(`${url}/healthz`)) return { url, child, exited }
    } else {
      const listening = readFileSync(logFile, "utf8")
        .split("\n")
        .find((line) => line.includes('"msg":"listening"'))
      if (listening !== undefined) return { url: (JSON.parse(listening) as { url: string }).url, child, exited }
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the daemon did not start:\n${readFileSync(logFile, "utf8")}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A process's peak resident memory so far, in MB (Linux `/proc`; undefined elsewhere). */
export const peakRssMb = (pid: number | undefined): number | undefined => {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("VmHWM:"))
    return line === undefined ? undefined : Math.round(Number(line.split(/\s+/)[1]) / 1024)
  } catch {
    return undefined
  }
}

/** CPU seconds a process has used so far (Linux `/proc`; undefined elsewhere). */
export const cpuSeconds = (pid: number | undefined): number | undefined => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/** A process and its descendants (`serve --workers N`: the primary and its workers), by their parent ids in `/proc`. */
export const processTree = (pid: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue // the process ended meanwhile
    }
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    const siblings = children.get(parent)
    if (siblings === undefined) children.set(parent, [Number(entry)])
    else siblings.push(Number(entry))
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []))
  return tree
}

/** CPU seconds a process and its living descendants have used so far (Linux `/proc`; undefined elsewhere). */
export const treeCpuSeconds = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  let sum = 0
  for (const member of processTree(pid)) {
    const seconds = cpuSeconds(member)
    if (seconds === undefined && member === pid) return undefined
    sum += seconds ?? 0
  }
  return sum
}

/** CPU seconds of a process's threads by kind, as Node and V8 name them on Linux (`/proc/<pid>/task`). */
export interface ThreadCpu {
  /** `MainThread`: the request thread. */
  readonly requestThread: number
  /** `WorkerThread`: job threads (and a configuration load's thread while it lives). */
  readonly workerThreads: number
  /** `V8Worker`: V8's own helpers, mostly the collector's concurrent and parallel work, and compilation. */
  readonly v8Helpers: number
  /** Everything else (libuv's pool: file I/O, zlib). */
  readonly other: number
}

/** The CPU seconds a process's threads have used so far, by kind (Linux `/proc`; undefined elsewhere). */
export const threadCpuSeconds = (pid: number | undefined): ThreadCpu | undefined => {
  try {
    const sums = { requestThread: 0, workerThreads: 0, v8Helpers: 0, other: 0 }
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      let stat: string
      try {
        stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8")
      } catch {
        continue // the thread ended meanwhile
      }
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100
      const kind =
        name === "MainThread"
          ? "requestThread"
          : name === "WorkerThread"
            ? "workerThreads"
            : name.startsWith("V8Worker")
              ? "v8Helpers"
              : "other"
      sums[kind] += seconds
    }
    return sums
  } catch {
    return undefined
  }
}

/** `after - before`, kind by kind, rounded to hundredths (undefined when either is). */
export const threadCpuSince = (before: ThreadCpu | undefined, after: ThreadCpu | undefined): ThreadCpu | undefined => {
  if (before === undefined || after === undefined) return undefined
  const since = (kind: keyof ThreadCpu) => Math.round((after[kind] - before[kind]) * 100) / 100
  return {
    requestThread: since("requestThread"),
    workerThreads: since("workerThreads"),
    v8Helpers: since("v8Helpers"),
    other: since("other")
  }
}
