/**
 * A Redis server in cluster mode is refused at start with what to use
 * instead, rather than failing later on the first multi-key command
 * (`MOVED`, `CROSSSLOT`): a real `redis-server --cluster-enabled yes` on a
 * free loopback port.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, expect, it } from "vitest"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { describeWithRedisServer, startRedisServer } from "../support/redisServer.ts"

let server: { readonly port: number; readonly stop: () => void }

describeWithRedisServer("Redis in cluster mode", () => {
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-redis-cluster-"))
    server = await startRedisServer((port) => [
      "--port",
      String(port),
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      join(dir, "nodes.conf"),
      "--dir",
      dir
    ])
  }, 20_000)

  afterAll(() => server?.stop())

  it("is refused at start, saying what to use instead", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Layer.build(redisStoreLayer({ url: `redis://127.0.0.1:${server.port}`, keyPrefix: "x:" })))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toMatch(/cluster mode.*single Redis primary/s)
  })
})
