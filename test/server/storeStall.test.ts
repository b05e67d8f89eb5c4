/**
 * A stalled shared store (the server paused: connections open, nothing
 * answered), Redis and PostgreSQL alike, between the daemon and the test
 * server through a fault-injecting proxy on loopback. After the first call
 * that times out, nothing waits the timeout again (the connection's
 * breaker, `store/breaker.ts`): single validations answer from memory at
 * once (rate limits fail open, the default), an endpoint that needs the
 * store answers 503 with `Retry-After` at once, and once the server
 * answers again a probe notices within a second and writes go through.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { STATEMENT_TIMEOUT_MS } from "../../src/store/postgres.ts"
import { COMMAND_TIMEOUT_MS } from "../../src/store/redis.ts"
import { describePostgres, makeTestDatabase } from "../postgresTesting.ts"
import { describeRedis, type Suite, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, within } from "./daemon.ts"

const timed = async <A>(run: () => Promise<A>): Promise<{ answer: A; ms: number }> => {
  const started = performance.now()
  const answer = await run()
  return { answer, ms: performance.now() - started }
}

interface StalledStore {
  readonly describe: Suite
  /** The server's URL (the proxy stands in front of it). */
  readonly upstream: () => Promise<{ readonly url: string; readonly release: () => Promise<void> }>
  /** The `store` settings for a URL through the proxy. */
  readonly settings: (url: string) => Record<string, unknown>
  readonly timeoutMs: number
  /** The port of a URL that names none. */
  readonly defaultPort: number
}

const stallSuite = (name: string, store: StalledStore) =>
  store.describe(`a stalled ${name}`, () => {
    let proxy: FaultProxy
    let daemon: Daemon
    let key: string
    let release: () => Promise<void> = async () => {}

    const validate = (email: string) =>
      call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId: "uk-students" } })
    const createGroup = (id: string) =>
      call(daemon, "POST", "/api/v1/target-groups", {
        key,
        body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
      })

    beforeAll(async () => {
      const upstream = await store.upstream()
      release = upstream.release
      const url = new URL(upstream.url)
      proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || store.defaultPort) })
      const dirs = copyConfig()
      setSettings(dirs, [[["store"], store.settings(proxy.url(upstream.url))]])
      key = makeKey(dirs, "acme", ["validate:target-groups", "target-groups:write", "target-groups:read"])
      daemon = await startDaemon(dirs)
    }, 60_000)

    afterAll(async () => {
      await daemon?.stop()
      await proxy?.close()
      await release()
    })

    it("waits the timeout once, then answers validations at once and store-bound writes 503 at once; recovers", async () => {
      expect((await createGroup("before-stall")).status).toBe(201)
      proxy.stall()
      const stalledAt = performance.now()
      // The first request that needs the store waits for the timeout, and opens the breaker.
      const first = await timed(() => createGroup("during-stall-1"))
      expect(first.answer.status).toBe(503)
      expect(first.ms).toBeGreaterThanOrEqual(store.timeoutMs - 100)
      // From then on nothing waits: validations from memory, writes refused at once, for the whole stall.
      let i = 0
      while (performance.now() - stalledAt < 10_000) {
        const single = await timed(() => validate(`stalled${i}@ox.ac.uk`))
        expect(single.answer.status).toBe(200)
        expect(single.answer.body.isValid).toBe(true)
        expect(single.ms).toBeLessThan(300)
        const write = await timed(() => createGroup(`during-stall-${i + 2}`))
        expect(write.answer.status).toBe(503)
        expect(write.answer.headers.get("retry-after")).toMatch(/^\d+$/)
        expect(write.ms).toBeLessThan(300)
        i++
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      proxy.resume()
      const took = await within(async () => (await createGroup(`after-stall-${Date.now()}`)).status === 201, 5000)
      expect(took).toBeLessThan(1500)
      expect((await call(daemon, "GET", "/api/v1/target-groups/before-stall", { key })).status).toBe(200)
    }, 60_000)
  })

stallSuite("Redis", {
  describe: describeRedis,
  upstream: async () => ({ url: testRedisUrl, release: async () => {} }),
  defaultPort: 6379,
  settings: (url) => ({ kind: "redis", url, keyPrefix: testPrefix() }),
  timeoutMs: COMMAND_TIMEOUT_MS
})

stallSuite("PostgreSQL", {
  describe: describePostgres,
  upstream: async () => {
    const database = await makeTestDatabase()
    return { url: database.url, release: database.drop }
  },
  defaultPort: 5432,
  settings: (url) => ({ kind: "postgres", url }),
  timeoutMs: STATEMENT_TIMEOUT_MS
})
