/**
 * A Redis server of a benchmark's own: `redis-server` (it must be
 * installed) on a free loopback port, its files in the benchmark's
 * working directory, keeping nothing on disk unless asked to (the scale
 * bench measures an append-only file's cost). Ready to answer when
 * returned; `stop` ends it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { freePort } from "./daemonProcess.ts"

export interface BenchRedisServer {
  readonly url: string
  readonly child: ChildProcess
  /** `redis-cli` against it, its answer trimmed. */
  cli(...args: ReadonlyArray<string>): string
  /** Commands it has run so far (every `cmdstat_` of `INFO commandstats`). */
  commands(): number
  /** Its `used_memory`, bytes. */
  usedMemory(): number
  stop(): Promise<void>
}

export const startRedisServer = async (
  dir: string,
  options: { readonly appendOnly?: boolean } = {}
): Promise<BenchRedisServer> => {
  const port = await freePort()
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      options.appendOnly ? "yes" : "no"
    ],
    { stdio: "ignore" }
  )
  const cli = (...args: ReadonlyArray<string>) =>
    execFileSync("redis-cli", ["-p", String(port), ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim()
  for (let tries = 0; ; tries++) {
    try {
      if (cli("PING") === "PONG") break
    } catch (error) {
      if (tries > 100 || child.exitCode !== null) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    cli,
    commands: () => [...cli("INFO", "commandstats").matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0),
    usedMemory: () => Number(/used_memory:(\d+)/.exec(cli("INFO", "memory"))?.[1]),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      await once(child, "exit").catch(() => undefined)
    }
  }
}
