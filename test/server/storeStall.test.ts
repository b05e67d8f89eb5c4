/**
 * A stalled Redis (the server paused: connections open, nothing answered),
 * between the daemon and the shared test server through a fault-injecting
 * proxy on loopback. After the first command that times out, nothing waits
 * the timeout again: single validations answer from memory at once (rate
 * limits fail open, the default), an endpoint that needs the store answers
 * 503 with `Retry-After` at once, and once the server answers again a probe
 * notices within a second and writes go through.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { COMMAND_TIMEOUT_MS } from "../../src/store/redis.ts"
import { describeRedis, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, within } from "./daemon.ts"

let proxy: FaultProxy
let daemon: Daemon
let key: string

const validate = (email: string) =>
  call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId: "uk-students" } })

const createGroup = (id: string) =>
  call(daemon, "POST", "/api/v1/target-groups", {
    key,
    body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
  })

const timed = async <A>(run: () => Promise<A>): Promise<{ answer: A; ms: number }> => {
  const started = performance.now()
  const answer = await run()
  return { answer, ms: performance.now() - started }
}

describeRedis("a stalled Redis", () => {
  beforeAll(async () => {
    const upstream = new URL(testRedisUrl)
    proxy = await startFaultProxy({ host: upstream.hostname, port: Number(upstream.port || 6379) })
    const dirs = copyConfig()
    setSettings(dirs, [[["store"], { kind: "redis", url: proxy.url(testRedisUrl), keyPrefix: testPrefix() }]])
    key = makeKey(dirs, "acme", ["validate:target-groups", "target-groups:write", "target-groups:read"])
    daemon = await startDaemon(dirs)
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
    await proxy?.close()
  })

  it("waits the timeout once, then answers validations at once and store-bound writes 503 at once; recovers", async () => {
    expect((await createGroup("before-stall")).status).toBe(201)
    proxy.stall()
    // The first request that needs Redis waits for the timeout, and opens the breaker.
    const first = await timed(() => createGroup("during-stall-1"))
    expect(first.answer.status).toBe(503)
    expect(first.ms).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 100)
    // From then on nothing waits: validations from memory, writes refused at once.
    for (let i = 0; i < 5; i++) {
      const single = await timed(() => validate(`stalled${i}@ox.ac.uk`))
      expect(single.answer.status).toBe(200)
      expect(single.answer.body.isValid).toBe(true)
      expect(single.ms).toBeLessThan(300)
      const write = await timed(() => createGroup(`during-stall-${i + 2}`))
      expect(write.answer.status).toBe(503)
      expect(write.answer.headers.get("retry-after")).toMatch(/^\d+$/)
      expect(write.ms).toBeLessThan(300)
    }
    proxy.resume()
    const took = await within(async () => (await createGroup(`after-stall-${Date.now()}`)).status === 201, 5000)
    expect(took).toBeLessThan(1500)
    expect((await call(daemon, "GET", "/api/v1/target-groups/before-stall", { key })).status).toBe(200)
  }, 60_000)
})
