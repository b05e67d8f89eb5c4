/**
 * Start-up as an orchestrator sees it, for `npm run bench:http` and
 * `npm run bench:start`: the time from spawning `campusgate serve` (the
 * built `dist/daemon/campusgate.js`, of this checkout or another) until
 * `GET /healthz` answers 200, polled every 5 ms on a port chosen before;
 * with the CPU time the daemon had used by then (all its threads, from
 * `/proc`, where there is one) and its log.
 */
import { spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { get } from "node:http"
import { join } from "node:path"
import { cpuSeconds, daemonBin, exitOf, freePort } from "./daemonProcess.ts"
import { onCores } from "./wrkLoad.ts"

/** Whether `GET url` answers 200 now (a refused connection: not yet). */
const answers = (url: string) =>
  new Promise<boolean>((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode === 200)
    })
    request.on("error", () => resolve(false))
  })

export interface ServeStart {
  /** Milliseconds from spawning until `/healthz` answered 200. */
  readonly ms: number
  /** CPU milliseconds the daemon had used when it answered (10 ms resolution). */
  readonly cpuMs: number | undefined
  /** What the daemon logged until it stopped. */
  readonly log: string
}

/** Milliseconds from spawning the daemon (on `cpus`) until `/healthz` answers; the daemon is stopped after. */
export const timeServe = async (
  dirs: { readonly configDir: string; readonly dataDir: string },
  root: string,
  cpus: string | undefined
): Promise<number> => (await serveStart(dirs, root, cpus)).ms

/** Starts the daemon of `tree` (default: this checkout) on `cpus` until `/healthz` answers, then stops it. */
export const serveStart = async (
  dirs: { readonly configDir: string; readonly dataDir: string },
  root: string,
  cpus: string | undefined,
  tree?: string
): Promise<ServeStart> => {
  const bin = daemonBin(tree)
  const port = await freePort()
  const logFile = join(root, "serve-start.log")
  const out = openSync(logFile, "w")
  const args = [
    "serve",
    "--config",
    dirs.configDir,
    "--data",
    dirs.dataDir,
    "--port",
    String(port),
    "--host",
    "127.0.0.1"
  ]
  const [command, commandArgs] = onCores(cpus, process.execPath, [bin, ...args])
  const started = performance.now()
  const child = spawn(command, commandArgs, {
    env: { ...process.env, CAMPUSGATE_CONFIG: "", CAMPUSGATE_DATA: "", CAMPUSGATE_PORT: "", CAMPUSGATE_HOST: "" },
    stdio: ["ignore", out, out]
  })
  closeSync(out)
  const exited = exitOf(child)
  try {
    while (!(await answers(`http://127.0.0.1:${port}/healthz`))) {
      if (child.exitCode !== null || performance.now() - started > 120_000) {
        throw new Error(`the daemon did not answer /healthz:\n${readFileSync(logFile, "utf8")}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const ms = performance.now() - started
    const cpu = cpuSeconds(child.pid)
    const cpuMs = cpu === undefined ? undefined : cpu * 1000
    child.kill("SIGTERM")
    await exited
    return { ms, cpuMs, log: readFileSync(logFile, "utf8") }
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}
