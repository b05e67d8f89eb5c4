/**
 * The real daemon for end-to-end tests: `campusgate serve` in a child
 * process on a free loopback port, on a copy of the shipped example config
 * with API keys made for the test.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect } from "vitest"
import { parseDocument } from "yaml"
import { createApiKey } from "../../src/app/Keys.ts"
import type { Scope } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { isFinished, type JobView } from "../../src/domain/Job.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const shippedConfig = fileURLToPath(new URL("../../config", import.meta.url))

export interface Daemon {
  readonly url: string
  readonly configDir: string
  readonly dataDir: string
  /** Every JSON line the daemon wrote to standard output so far. */
  readonly lines: Array<Record<string, unknown>>
  readonly process: ChildProcess
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** A copy of the shipped config in a fresh directory, with an empty data directory beside it. */
export const copyConfig = (): { configDir: string; dataDir: string } => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-daemon-"))
  const configDir = join(root, "config")
  cpSync(shippedConfig, configDir, { recursive: true })
  return { configDir, dataDir: join(root, "data") }
}

export const makeKey = (dirs: { configDir: string; dataDir: string }, team: string, scopes: ReadonlyArray<Scope>) =>
  createApiKey({ ...dirs, team: team as TeamId, scopes: [...scopes] }).key

/** A loopback port free now. */
export const freePort = async (): Promise<number> => {
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, "close")
  return port
}

/**
 * Starts the daemon and resolves once it listens: when it logs "listening"
 * (on a port it picks), or, given a `port`, once `/healthz` answers there
 * (for a log level that drops the "listening" line). It runs from source
 * unless `bin` names another entry (the built bundle).
 */
export const startDaemon = async (
  dirs: { configDir: string; dataDir: string },
  env: Record<string, string> = {},
  options: { port?: number; bin?: string } = {}
): Promise<Daemon> => {
  const port = options.port ?? 0
  const child = spawn(
    process.execPath,
    [
      options.bin ?? main,
      ...["serve", "--config", dirs.configDir, "--data", dirs.dataDir, "--port", String(port), "--host", "127.0.0.1"]
    ],
    {
      env: { ...process.env, CAMPUSGATE_CONFIG: "", CAMPUSGATE_DATA: "", CAMPUSGATE_PORT: "", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const lines: Array<Record<string, unknown>> = []
  let stderr = ""
  child.stderr!.on("data", (chunk) => {
    stderr += String(chunk)
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    // A daemon that did not start in time is stopped, not left running after the test.
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the daemon did not start: ${stderr}${lines.map((line) => JSON.stringify(line)).join("\n")}`))
    }, 20_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>
        lines.push(entry)
        if (entry.msg === "listening") {
          clearTimeout(timer)
          resolve(String(entry.url))
        }
      } catch {
        lines.push({ raw: line })
      }
    })
    if (port !== 0) {
      const url = `http://127.0.0.1:${port}`
      const poll = () =>
        fetch(`${url}/healthz`).then(
          (response) => {
            clearTimeout(timer)
            resolve(url)
            return response.body?.cancel()
          },
          () => {
            if (child.exitCode === null) setTimeout(poll, 50)
          }
        )
      void poll()
    }
    void exited.then((code) =>
      reject(new Error(`the daemon exited with ${code}: ${stderr}${lines.map((line) => line.raw ?? "").join("\n")}`))
    )
  })
  return {
    url,
    ...dirs,
    lines,
    process: child,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    }
  }
}

/**
 * The daemon the tests of a file (or of the `describe` it is called in) share:
 * started before them on a fresh copy of the shipped config, which `prepare`
 * may change first (settings, keys; it answers the variables to add to the
 * daemon's environment, if any), and stopped after them. What it answers
 * stands for the running daemon in the tests and in later hooks.
 */
export const sharedDaemon = (
  prepare: (dirs: { configDir: string; dataDir: string }) => Record<string, string> | undefined | undefined = () =>
    undefined
): Daemon => {
  let started: Daemon | undefined
  const running = (): Daemon => {
    if (started === undefined) throw new Error("the shared daemon is not running: read it inside a test or a hook")
    return started
  }
  beforeAll(async () => {
    const dirs = copyConfig()
    const env = prepare(dirs) ?? {}
    started = await startDaemon(dirs, env)
  }, 60_000)
  afterAll(async () => {
    await started?.stop()
  })
  return {
    get url() {
      return running().url
    },
    get configDir() {
      return running().configDir
    },
    get dataDir() {
      return running().dataDir
    },
    get lines() {
      return running().lines
    },
    get process() {
      return running().process
    },
    stop: (signal) => running().stop(signal)
  }
}

/**
 * `count` daemons as on as many hosts behind a load balancer: each with its own
 * copy of `base`'s config directory (`config-0`, `config-1`, … beside it), all
 * on `base`'s data directory, or with `ownDataDirs` each on its own
 * (`data-0`, … beside it: hosts without a shared volume). Resolves once every
 * one listens.
 */
export const startDaemonsSharing = async (
  base: { configDir: string; dataDir: string },
  count: number,
  options: { readonly ownDataDirs?: boolean } = {}
): Promise<Array<Daemon>> => {
  const dirs = Array.from({ length: count }, (_, i) => {
    const configDir = join(base.configDir, "..", `config-${i}`)
    cpSync(base.configDir, configDir, { recursive: true })
    if (options.ownDataDirs !== true) return { configDir, dataDir: base.dataDir }
    const dataDir = join(base.configDir, "..", `data-${i}`)
    mkdirSync(dataDir, { recursive: true })
    return { configDir, dataDir }
  })
  return Promise.all(dirs.map((each) => startDaemon(each)))
}

/** A JSON request to the daemon: status, headers and parsed body. */
export const call = async (
  daemon: Daemon,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {}
) => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
  let body: string | Uint8Array | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers["content-type"] ??= "application/json"
  const response = await fetch(
    `${daemon.url}${path}`,
    body === undefined ? { method, headers } : { method, headers, body }
  )
  const text = await response.text()
  // biome-ignore lint/suspicious/noExplicitAny: tests read answer bodies field by field, whatever their shape
  let json: any
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = text
  }
  return { status: response.status, headers: response.headers, body: json }
}

/** Sets `campusgate.yaml` values of a copied config. */
export const setSettings = (
  dirs: { configDir: string },
  values: ReadonlyArray<readonly [ReadonlyArray<string>, unknown]>
) => {
  const file = join(dirs.configDir, "campusgate.yaml")
  const document = parseDocument(readFileSync(file, "utf8"))
  for (const [path, value] of values) document.setIn(path, value)
  writeFileSync(file, document.toString())
}

/** `setSettings` values for tests that send many bulk requests and jobs: 1,000 of each a minute per key. */
export const roomyBulkAndJobBudgets = [
  [["rateLimits", "bulk", "requests"], 1000],
  [["rateLimits", "jobs", "requests"], 1000]
] as const

/** Polls a job until it is finished (or `until` holds) and returns it. */
export const waitForJob = async (
  daemon: Daemon,
  key: string,
  jobId: string,
  until: (job: JobView) => boolean = (job) => isFinished(job.status)
) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const answer = await call(daemon, "GET", `/api/v1/jobs/${jobId}`, { key })
    expect(answer.status).toBe(200)
    if (until(answer.body)) return answer.body
    if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${answer.body.status}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Polls the daemon's log lines until one satisfies `match` (or throws after `timeoutMs`). */
export const waitForLine = async (
  daemon: Daemon,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs = 10_000
): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const line = daemon.lines.find(match)
    if (line !== undefined) return line
    if (Date.now() > deadline)
      throw new Error(`no such log line in:\n${daemon.lines.map((entry) => JSON.stringify(entry)).join("\n")}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Polls `check` every 20 ms until it holds; answers how long it took (ms), or throws past `limitMs`. */
export const within = async (check: () => Promise<boolean>, limitMs: number): Promise<number> => {
  const started = performance.now()
  for (;;) {
    if (await check()) return performance.now() - started
    if (performance.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
