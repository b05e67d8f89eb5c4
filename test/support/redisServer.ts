/**
 * A `redis-server` of a test's own on a free loopback port, started with
 * the options a test needs (cluster mode, TLS), keeping nothing on disk.
 * Whether the program is there (`redisServerInstalled`), and a loud skip
 * when it is not and Redis is not required.
 */
import { spawn, spawnSync } from "node:child_process"
import { describe } from "vitest"
import { type Suite, skippedForWantOfRedis } from "../redisTesting.ts"
import { freePort } from "../server/daemon.ts"

export const redisServerInstalled = spawnSync("redis-server", ["--version"]).status === 0

/** `describe` when redis-server is installed (or required: then it fails); else skipped, said loudly. */
export const describeWithRedisServer: Suite = (name, body) => {
  if (redisServerInstalled || process.env.CAMPUSGATE_REQUIRE_REDIS === "1") {
    describe(name, body)
    return
  }
  skippedForWantOfRedis(name, "redis-server is not installed")
  describe.skip(name, body)
}

/** Starts redis-server with `options` (given the port: `port` for plain, or the TLS port with `tls`), ready to answer. */
export const startRedisServer = async (
  options: (port: number) => ReadonlyArray<string>
): Promise<{ readonly port: number; readonly stop: () => void }> => {
  const port = await freePort()
  const server = spawn("redis-server", ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...options(port)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("redis-server did not start")), 10_000)
    server.stdout!.on("data", (data: Buffer) => {
      if (data.toString().includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve()
      }
    })
    server.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`)))
  })
  return { port, stop: () => server.kill() }
}
