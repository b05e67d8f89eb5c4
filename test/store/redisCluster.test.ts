/**
 * A Redis server in cluster mode is refused at start with what to use
 * instead, rather than failing later on the first multi-key command
 * (`MOVED`, `CROSSSLOT`): a real `redis-server --cluster-enabled yes` on a
 * free loopback port.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { skippedForWantOfRedis } from "../redisTesting.ts"
import { freePort } from "../server/daemon.ts"

const installed = spawnSync("redis-server", ["--version"]).status === 0
const required = process.env.CAMPUSGATE_REQUIRE_REDIS === "1"
if (!installed && !required) skippedForWantOfRedis("Redis in cluster mode", "redis-server is not installed")
const suite = installed || required ? describe : describe.skip

let server: ChildProcess
let port: number

suite("Redis in cluster mode", () => {
  beforeAll(async () => {
    port = await freePort()
    const dir = mkdtempSync(join(tmpdir(), "campusgate-redis-cluster-"))
    server = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        join(dir, "nodes.conf"),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("redis-server did not start")), 10_000)
      server.stdout!.on("data", (data: Buffer) => {
        if (data.toString().includes("Ready to accept connections")) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  }, 20_000)

  afterAll(() => {
    server?.kill()
  })

  it("is refused at start, saying what to use instead", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Layer.build(redisStoreLayer({ url: `redis://127.0.0.1:${port}`, keyPrefix: "x:" })))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toMatch(/cluster mode.*single Redis primary/s)
  })
})
